/**
 * What became of one predictions file's rows in the state, for the line `telebench evaluate`
 * prints last: the grade items keyed by this file's digest (`external::<12 hex>::...`), never
 * the rows of earlier files that stay in the store.
 */
import { openState, resolveStateDir } from '../../../pipeline/state.js';
import type { PredictionsFile } from './predictions.js';
import { externalKey, externalPrefix, gradeStage, WINDOW_LEFT_KV } from './stages.js';

/** Counts of one file's rows (every row once: graded, skipped, failed or not reached). */
export interface FileTally {
  file: string;
  shape: PredictionsFile['shape'];
  digest: string;
  rows: number;
  resolved: number;
  unresolved: number;
  /** Skip reason -> rows (`invalid_prediction`, `unknown_instance`). */
  skipped: Record<string, number>;
  /** The first skips' messages (where in the file, which field, why), at most 5. */
  skipMessages: string[];
  failed: number;
  /** Planned but not finished in this run (a `--limit`, an interrupt). */
  pending: number;
  /** Rows the date window (`--after`) left out, never graded. */
  outside: number;
  /** resolved + unresolved. */
  graded: number;
}

/**
 * Reads this file's grade items from the state (read-only).
 * @param stateFlag the `--state` flag (or undefined: TELEBENCH_HOME / ./cache)
 * @param read the file as `readPredictions` read it before the run
 */
export function fileTally(
  stateFlag: string | undefined,
  file: string,
  read: PredictionsFile,
): FileTally {
  const t: FileTally = {
    file,
    shape: read.shape,
    digest: read.digest,
    rows: read.rows.length + read.bad.length,
    resolved: 0,
    unresolved: 0,
    skipped: {},
    skipMessages: [],
    failed: 0,
    pending: 0,
    outside: 0,
    graded: 0,
  };
  const prefix = externalPrefix(read.digest);
  const state = openState(resolveStateDir(stateFlag), { mode: 'read' });
  let counted = 0;
  try {
    // rows the date window of this run left out count as outside even when an earlier run
    // without the window graded them: the tally speaks of this run's window
    const left = new Set(state.store.get<string[]>(WINDOW_LEFT_KV, read.digest) ?? []);
    const outsideKeys = new Set(
      read.rows
        .filter((r) => left.has(r.instance_id))
        .map((r) => externalKey(read.digest, r.model_name_or_path, r.instance_id)),
    );
    t.outside = outsideKeys.size;
    for (const it of state.store.items(gradeStage.name)) {
      if (!it.key.startsWith(prefix) || outsideKeys.has(it.key)) continue;
      counted++;
      if (it.state === 'done') {
        if ((it.output as { resolved?: boolean } | null)?.resolved) t.resolved++;
        else t.unresolved++;
      } else if (it.state === 'skipped') {
        const r = it.skipReason ?? 'unknown';
        t.skipped[r] = (t.skipped[r] ?? 0) + 1;
        if (it.skipDetail && t.skipMessages.length < 5) t.skipMessages.push(it.skipDetail);
      } else if (it.state === 'failed') t.failed++;
      else t.pending++;
    }
  } finally {
    state.close();
  }
  t.pending += Math.max(0, t.rows - counted - t.outside);
  t.graded = t.resolved + t.unresolved;
  return t;
}

/**
 * `evaluate: preds.json (JSON object keyed by instance_id, sha256 1a2b3c4d5e6f): 3 rows — ...`,
 * then one `  skipped: <message>` line per kept skip message.
 */
export function tallyLine(t: FileTally): string {
  const shape =
    t.shape === 'jsonl'
      ? 'JSON Lines'
      : t.shape === 'list'
        ? 'JSON list'
        : 'JSON object keyed by instance_id';
  const parts = [`${t.resolved} resolved`, `${t.unresolved} not resolved`];
  const skips = Object.entries(t.skipped);
  if (skips.length)
    parts.push(
      `${skips.reduce((n, [, k]) => n + k, 0)} skipped (${skips.map(([r, n]) => `${r}: ${n}`).join(', ')})`,
    );
  if (t.failed) parts.push(`${t.failed} failed`);
  if (t.outside) parts.push(`${t.outside} outside the date window (--after), not graded`);
  if (t.pending) parts.push(`${t.pending} not graded yet`);
  const none =
    t.graded > 0
      ? ''
      : t.outside > 0 && t.outside === t.rows
        ? '; no row of this file was graded: every row is outside the date window'
        : '; no row of this file was graded';
  const why = t.skipMessages.map((m) => `\n  skipped: ${m}`).join('');
  return `evaluate: ${t.file} (${shape}, sha256 ${t.digest.slice(0, 12)}): ${t.rows} rows of this file — ${parts.join(', ')}${none}${why}`;
}
