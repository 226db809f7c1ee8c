/**
 * What `telebench refresh` says (stages/release/command-actions.ts runs it): the command that
 * resumes it with every flag the user gave, and one coherent outcome — a new version, or nothing
 * new — that also names the candidates of the window that were validated but left out (and how to
 * have them released) and the items that failed. Exit codes (docs/cli.md): 1 when items failed,
 * whether a version was written or not (a timer must see it); else 0, nothing new included.
 */
import type { Command } from 'commander';
import type { CandidateFate } from './entry.js';

/**
 * The options of `cmd` the user gave on the command line (source `cli`), as arguments: `--version
 * 1.1.0`, `--config f.yaml`, `--no-verify`; defaults and environment values are left out.
 */
export function givenFlags(cmd: Command | null | undefined): string[] {
  if (!cmd) return [];
  const out: string[] = [];
  for (const o of cmd.options) {
    const key = o.attributeName();
    if (cmd.getOptionValueSource(key) !== 'cli' || !o.long) continue;
    const v: unknown = cmd.getOptionValue(key);
    if (o.negate || typeof v === 'boolean') {
      if (v === !o.negate) out.push(o.long);
      continue;
    }
    for (const one of Array.isArray(v) ? v : [v]) out.push(o.long, String(one));
  }
  return out;
}

/**
 * The words that run this refresh again: `self`, the global options given (`--state`), `refresh
 * <dataset>`, and every option of the command given (issue 32: the hint dropped `--version`).
 */
export function resumeArgs(self: readonly string[], cmd: Command, dataset: string): string[] {
  return [...self, ...givenFlags(cmd.parent), 'refresh', dataset, ...givenFlags(cmd)];
}

/** Rows of the window the release leaves out, by reason (`incomplete_left_out`), with the keys. */
export interface LeftOut {
  reason: string;
  keys: string[];
  hint: string | undefined;
}

/**
 * The left-out rows that the previous release does not hold (a row it holds is carried anyway),
 * by reason, sorted. Pure.
 */
export function newLeftOut(
  keys: Readonly<Record<string, string[]>> | undefined,
  hints: Readonly<Record<string, string>> | undefined,
  held: ReadonlySet<string>,
): LeftOut[] {
  return Object.entries(keys ?? {})
    .map(([reason, ks]) => ({
      reason,
      keys: ks.filter((k) => !held.has(k)).sort(),
      hint: hints?.[reason],
    }))
    .filter((l) => l.keys.length > 0);
}

const WORDS: Record<string, string> = {
  incomplete_left_out: 'validated but incomplete',
  weak_f2p_test: 'validated but weak (fail-to-pass audit)',
};

/** One line per left-out reason: `2 validated but incomplete (a, b): <hint>`. */
export function leftOutLines(left: readonly LeftOut[]): string[] {
  return left.map(
    (l) =>
      `${l.keys.length} candidate(s) ${WORDS[l.reason] ?? `left out (${l.reason})`} (${l.keys.join(', ')})${l.hint ? `: ${l.hint}` : ''}`,
  );
}

/** What became of a window's new candidates ({@link windowReport} in refresh.ts). */
export interface WindowReport {
  /** What a candidate is called (`PR`). */
  noun: string;
  /** The window start (ISO 8601 UTC). */
  since: string;
  /** Candidates that landed at or after `since` and that the previous release lacks. */
  landed: number;
  /** Of them, rows of this refresh's release. */
  rows: number;
  /** Of them, validated but left out (each named by a {@link LeftOut} line). */
  leftOut: number;
  /** The others, where each stopped. */
  stopped: CandidateFate[];
}

/** Most stopped candidates listed by {@link windowLines} (the rest counted). */
export const MAX_STOPPED = 10;

function fateText(f: CandidateFate): string {
  if (f.state === 'failed')
    return `${f.key} failed at ${f.stage}${f.reason ? ` (${f.reason})` : ''}${f.retried ? ': the next refresh retries it' : ''}`;
  if (f.state === 'not run') return `${f.key} not run at ${f.stage}`;
  return `${f.key} skipped at ${f.stage}${f.reason ? `: ${f.reason}` : ''}`;
}

/**
 * The window's lines: `3 PR(s) landed at or after <since> that <V> lacks: 0 validated for release, 0
 * validated but left out (below), 3 stopped before a row:`, then one line per stopped candidate
 * (`<key> skipped at <stage>: <reason>`; a failed one says the next refresh retries it), at most
 * {@link MAX_STOPPED}, then `and N more`, and where to read the details. Pure.
 */
export function windowLines(w: WindowReport, previous: string): string[] {
  const n = w.stopped.length;
  const head = `${w.landed} ${w.noun}(s) landed at or after ${w.since} that ${previous} lacks`;
  if (w.landed === 0) return [head];
  const lines = [
    `${head}: ${w.rows} validated for release, ${w.leftOut} validated but left out${w.leftOut ? ' (below)' : ''}, ${n} stopped before a row${n ? ':' : ''}`,
  ];
  for (const f of w.stopped.slice(0, MAX_STOPPED)) lines.push(`  ${fateText(f)}`);
  if (n > MAX_STOPPED) lines.push(`  and ${n - MAX_STOPPED} more`);
  if (n)
    lines.push(
      `  (why, per item: telebench items <stage> --state-filter skipped|failed; telebench show <stage> <key>)`,
    );
  return lines;
}

/** What the refresh found, for {@link outcomeText}. */
export interface RefreshOutcome {
  dataset: string;
  previous: string;
  /** Why there is no new version (`no swe-bench-5g row landed at or after ...`), or null. */
  nothingNew: string | null;
  /** The lines of a written version (`refreshed: ...`), when one was written. */
  refreshed: string[];
  leftOut: LeftOut[];
  /** What became of the window's new candidates (window datasets), or null (sources datasets). */
  window?: WindowReport | null;
  /** The pipeline run exited 1: some items failed (named in the run's messages above). */
  failed: boolean;
  /** Where the next refresh starts (window datasets), or null. */
  nextFrom: string | null;
}

/**
 * The refresh's stdout: `nothing new: <why>; <V> stays the latest release (no version written)` or
 * the `refreshed:` lines, then (window datasets) what became of the window's new candidates
 * ({@link windowLines}), one indented line per left-out reason and, when items failed, what the
 * next refresh does about them. Never says a release happened when none did.
 */
export function outcomeText(o: RefreshOutcome): string {
  const lines = o.nothingNew
    ? [`nothing new: ${o.nothingNew}; ${o.previous} stays the latest release (no version written)`]
    : [...o.refreshed];
  if (o.window) for (const l of windowLines(o.window, o.previous)) lines.push(`  ${l}`);
  for (const l of leftOutLines(o.leftOut)) lines.push(`  ${l}`);
  if (o.failed)
    lines.push(
      `  items failed (named above): ${o.nothingNew ? 'nothing was released' : 'released what held'}; the next refresh${o.nextFrom ? ` mines from ${o.nextFrom} and` : ''} retries them (exit 1)`,
    );
  return `${lines.join('\n')}\n`;
}
