/**
 * How SWE-Bench 5G is refreshed (`telebench refresh swe5g`, stages/release/refresh.ts): a PR's
 * landing time is its `merged_at`; the window starts at `swe5g.mining.since` (both sources mine
 * PRs merged at or after it); the cutoff of a release is the latest `merged_at` among the PRs its
 * state mined, recorded in the manifest so the next refresh starts there.
 */
import type { StoreReader } from '../../pipeline/stage.js';
import type { WindowRefreshHooks } from '../release/entry.js';
import { swe5gMine } from './mine/mine.js';
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
  cutoffOf: latestMerged,
};
