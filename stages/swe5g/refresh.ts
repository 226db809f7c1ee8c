/**
 * How SWE-Bench 5G is refreshed (`telebench refresh swe5g`, stages/release/refresh.ts): a PR's
 * landing time is its `merged_at`; the window starts at `swe5g.mining.since` (both sources mine
 * PRs merged at or after it); the cutoff of a release is the latest `merged_at` among the PRs its
 * state mined (held back to the earliest candidate with a failed item, which the next refresh then
 * retries, or validated without a problem statement, which it then completes), recorded in the
 * manifest so the next refresh starts there.
 */
import type { StoreReader } from '../../pipeline/stage.js';
import type { CandidateFate, WindowRefreshHooks } from '../release/entry.js';
import { swe5gMine } from './mine/mine.js';
import { SWE5G_STAGES } from './pipeline-stages.js';
import { swe5gConfigSchema, type HasSwe5g } from './config.js';
import { isComplete, withCurrentStatement } from './statement/current.js';
import type { ValidatedInstance } from './types.js';

/** An ISO 8601 date or date-time (any offset) as UTC `YYYY-MM-DDTHH:MM:SS.sssZ`; null when unparsable. */
export function utcOf(when: string): string | null {
  const t = Date.parse(when);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/**
 * The PRs of the done `swe5g.mine` items with their `merged_at` in UTC (unparsable dates left
 * out); none when mining is not registered (a release command on a state from elsewhere).
 */
function minedMerges(store: StoreReader): { id: string; merged: string }[] {
  const out: { id: string; merged: string }[] = [];
  try {
    for (const { output } of store.outputs(swe5gMine))
      for (const pr of output.prs) {
        const t = utcOf(pr.merged_at);
        if (t) out.push({ id: pr.instance_id, merged: t });
      }
  } catch {
    return []; // swe5g.mine not registered
  }
  return out;
}

/** The latest `merged_at` (UTC) of the PRs in the done `swe5g.mine` items, or null. */
function latestMerged(store: StoreReader): string | null {
  let latest: string | null = null;
  for (const { merged } of minedMerges(store)) if (!latest || merged > latest) latest = merged;
  return latest;
}

/** The stages after the filter whose failed item a refresh must retry (keyed by instance_id). */
const CANDIDATE_STAGES = SWE5G_STAGES.slice(SWE5G_STAGES.indexOf('swe5g.filter') + 1);

/**
 * The earliest `merged_at` (UTC) of a kept candidate with a failed item in a stage after the
 * filter (an environment the module proxy refuses, a build that broke), or null when none failed.
 * A refresh keeps its cutoff there, so the next refresh mines that PR again and retries it
 * (`--retry-failed`); the done items of the window are cached, so nothing else is redone.
 */
export function earliestFailed(store: StoreReader): string | null {
  const merged = new Map<string, string>();
  let earliest: string | null = null;
  try {
    for (const o of store.outputsNamed('swe5g.filter')) {
      const c = o.output as { merged_at?: string };
      if (c.merged_at) merged.set(o.key, c.merged_at);
    }
  } catch {
    return null; // swe5g.filter not registered (a release command on a state from elsewhere)
  }
  for (const stage of CANDIDATE_STAGES) {
    let records: Iterable<{ key: string; state: string }>;
    try {
      records = [...store.items(stage)];
    } catch {
      continue; // a stage this registry does not have
    }
    for (const r of records) {
      if (r.state !== 'failed') continue;
      const t = utcOf(merged.get(r.key) ?? '');
      if (t && (!earliest || t < earliest)) earliest = t;
    }
  }
  return earliest;
}

/**
 * The earliest `merged_at` (UTC) of a validated candidate that is incomplete (no problem
 * statement now: no linked issue text, no accepted model-written statement), or null. A refresh
 * keeps its cutoff there too, so once its issue is added to the issues file or model-written
 * statements are turned on, the next refresh mines it again and releases it (outside the window
 * its items would be orphaned and never completed).
 */
export function earliestIncomplete(store: StoreReader): string | null {
  let earliest: string | null = null;
  try {
    const current = withCurrentStatement(store);
    const merged = new Map<string, string>();
    for (const o of store.outputsNamed('swe5g.filter'))
      merged.set(o.key, (o.output as { merged_at?: string }).merged_at ?? '');
    for (const o of store.outputsNamed('swe5g.validate')) {
      if (isComplete(current(o.output as ValidatedInstance))) continue;
      const t = utcOf(merged.get(o.key) ?? '');
      if (t && (!earliest || t < earliest)) earliest = t;
    }
  } catch {
    return null; // the stages are not registered (a release command on a state from elsewhere)
  }
  return earliest;
}

/**
 * The cutoff of a release of this state: the latest `merged_at` mined, held back to the earliest
 * `merged_at` of a candidate with a failed item or validated incomplete (so a refresh that
 * released what held still retries what failed, and completes what lacked a statement).
 */
export function swe5gCutoff(store: StoreReader): string | null {
  const latest = latestMerged(store);
  let cut = latest;
  for (const held of [earliestFailed(store), earliestIncomplete(store)])
    if (held && cut && held < cut) cut = held;
  return cut;
}

/**
 * The instance_ids of the PRs of the done `swe5g.mine` items merged at or after `since` (UTC),
 * sorted; empty when mining is not registered (a state from elsewhere).
 */
export function landedSince(store: StoreReader, since: string): string[] {
  const ids = minedMerges(store)
    .filter((p) => p.merged >= since)
    .map((p) => p.id);
  return [...new Set(ids)].sort();
}

/** The stages a mined PR goes through after mining, keyed by instance_id, in order. */
const PR_STAGES = SWE5G_STAGES.slice(SWE5G_STAGES.indexOf('swe5g.link'));

/**
 * Where a PR stopped: the first stage after mining whose item for `key` is skipped (its reason:
 * `no_linked_issue` at the filter, `build_failed_at_parent` at validation), failed (its error
 * code; `retried` after the filter, where {@link earliestFailed} holds the cutoff) or absent or
 * unfinished (`not run`); null when every stage finished it.
 */
export function swe5gFateOf(store: StoreReader, key: string): CandidateFate | null {
  for (const stage of PR_STAGES) {
    let rec: ReturnType<StoreReader['item']>;
    try {
      rec = store.item(stage, key);
    } catch {
      continue; // a stage this registry does not have
    }
    if (rec?.state === 'done') continue;
    if (rec?.state === 'skipped')
      return { key, stage, state: 'skipped', reason: rec.skipReason ?? '' };
    if (rec?.state === 'failed')
      return {
        key,
        stage,
        state: 'failed',
        reason: String(rec.error?.code ?? ''),
        // the cutoff is held only at a candidate failed after the filter (earliestFailed)
        retried: (CANDIDATE_STAGES as readonly string[]).includes(stage),
      };
    return { key, stage, state: 'not run', reason: '' };
  }
  return null;
}

/** SWE-Bench 5G's refresh hooks: the window is `swe5g.mining.since`, the cutoff the latest `merged_at`. */
export const swe5gRefresh: WindowRefreshHooks = {
  kind: 'window',
  sinceKey: 'swe5g.mining.since',
  configuredSince(config) {
    const since = (config as HasSwe5g | null)?.swe5g?.mining?.since;
    return since ? utcOf(since) : null;
  },
  /**
   * The window `since`, no `swe5g.instances` list and `swe5g.selection: new`: a refresh takes
   * every PR of the window no earlier run of the state filtered (a list of ids, which names only
   * PRs already known, would reject each new one as not_selected), and keeps the judgement of the
   * ones it did (the PR at the cutoff, mined again, stays selected or not as the release had it;
   * dropping the list alone selected it, and every stage after the filter ran for it).
   */
  narrow(config, since) {
    const whole = (config ?? {}) as HasSwe5g & Record<string, unknown>;
    const { instances: _dropped, ...swe5g } = whole.swe5g ?? swe5gConfigSchema.parse({});
    return {
      ...whole,
      swe5g: { ...swe5g, selection: 'new' as const, mining: { ...swe5g.mining, since } },
    };
  },
  cutoffOf: swe5gCutoff,
  candidateNoun: 'PR',
  landedSince,
  fateOf: swe5gFateOf,
};
