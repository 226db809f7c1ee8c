/**
 * How SWE-Bench 5G is refreshed (`telebench refresh swe5g`, stages/release/refresh.ts): a PR's
 * landing time is its `merged_at`; the window starts at `swe5g.mining.since` (both sources mine
 * PRs merged at or after it); the cutoff of a release is the latest `merged_at` among the PRs its
 * state mined (held back to the earliest candidate with a failed item, which the next refresh then
 * retries), recorded in the manifest so the next refresh starts there.
 */
import type { StoreReader } from '../../pipeline/stage.js';
import type { WindowRefreshHooks } from '../release/entry.js';
import { swe5gMine } from './mine/mine.js';
import { SWE5G_STAGES } from './pipeline-stages.js';
import { swe5gConfigSchema, type HasSwe5g } from './config.js';

/** An ISO 8601 date or date-time (any offset) as UTC `YYYY-MM-DDTHH:MM:SS.sssZ`; null when unparsable. */
export function utcOf(when: string): string | null {
  const t = Date.parse(when);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/** The latest `merged_at` (UTC) of the PRs in the done `swe5g.mine` items, or null. */
function latestMerged(store: StoreReader): string | null {
  let latest: string | null = null;
  try {
    for (const { output } of store.outputs(swe5gMine))
      for (const pr of output.prs) {
        const t = utcOf(pr.merged_at);
        if (t && (!latest || t > latest)) latest = t;
      }
  } catch {
    return null; // swe5g.mine not registered (a release command on a state from elsewhere)
  }
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
 * The cutoff of a release of this state: the latest `merged_at` mined, held back to the earliest
 * failed candidate's `merged_at` when one failed (so a refresh that released what held still
 * retries what did not).
 */
export function swe5gCutoff(store: StoreReader): string | null {
  const latest = latestMerged(store);
  const failed = earliestFailed(store);
  return failed && latest && failed < latest ? failed : latest;
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
   * The window `since` and no `swe5g.instances` list: a refresh takes every PR of the window (a
   * list of ids, which names only PRs already known, would reject each new one as not_selected).
   */
  narrow(config, since) {
    const whole = (config ?? {}) as HasSwe5g & Record<string, unknown>;
    const { instances: _dropped, ...swe5g } = whole.swe5g ?? swe5gConfigSchema.parse({});
    return { ...whole, swe5g: { ...swe5g, mining: { ...swe5g.mining, since } } };
  },
  cutoffOf: swe5gCutoff,
};
