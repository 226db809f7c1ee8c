/**
 * What `telebench plan` reads from the store: the kept candidates and the mining funnel per project
 * (`swe5g.mine`, `swe5g.link`, `swe5g.filter`), and what each sampled candidate did in the stages
 * after mining (state, skip reason or error code, item seconds, the images `swe5g.build` made).
 */
import type { StoreReader, StageContext } from '../../../pipeline/stage.js';
import type { ItemRecord } from '../../../pipeline/store/store.js';
import { miningFunnel } from '../mining.js';
import { addCounts, projectOf } from '../report-counts.js';
import { swe5gFilter } from '../filter/filter.js';
import { swe5gMine } from '../mine/mine.js';
import type { HasSwe5g } from '../config.js';
import type { Built } from '../build/build.js';
import type { AuditOutput } from '../audit/audit.js';
import type { ProjectFunnel, SampleStage, SampledOutcome } from './estimate.js';

/** The kept candidates' instance ids per project, sorted. */
export function keptByProject(store: StoreReader): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const o of store.outputs(swe5gFilter)) {
    const p = projectOf(o.output.repo);
    out.set(p, [...(out.get(p) ?? []), o.key]);
  }
  for (const keys of out.values()) keys.sort();
  return out;
}

/**
 * The mining funnel summed per project (`miningFunnel`'s rows by repository), every project that
 * was mined or has a registry entry that was not (those with zeros).
 */
export function funnelByProject(ctx: StageContext<HasSwe5g>): Map<string, ProjectFunnel> {
  const out = new Map<string, ProjectFunnel>();
  const row = (p: string): ProjectFunnel => {
    let f = out.get(p);
    if (!f) {
      f = { project: p, repos: [], mined: 0, linked: 0, kept: 0, incomplete: 0, rejected: {} };
      out.set(p, f);
    }
    return f;
  };
  for (const r of miningFunnel(ctx)) {
    if (r.repo === 'total') continue;
    const f = row(projectOf(r.repo));
    f.repos.push(r.repo);
    f.mined += r.mined;
    f.linked += r.linked;
    f.kept += r.kept;
    f.incomplete += r.incomplete;
    addCounts(f.rejected, r.rejected);
  }
  for (const r of ctx.store.items(swe5gMine)) if (r.state === 'done') row(projectOf(r.key));
  return new Map([...out].sort((a, b) => a[0].localeCompare(b[0])));
}

/** Registry entries the mine stage did not mine, by why (`no_mirror`, `failed:<code>`). */
export function notMined(store: StoreReader): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const r of store.items(swe5gMine)) {
    if (r.state !== 'skipped' && r.state !== 'failed') continue;
    const why = r.state === 'skipped' ? (r.skipReason ?? 'skipped') : `failed:${errorCode(r)}`;
    (out[why] ??= []).push(r.key);
  }
  return out;
}

const errorCode = (r: ItemRecord): string => String(r.error?.code ?? 'unknown');

const seconds = (r: ItemRecord): number =>
  r.startedAt && r.finishedAt
    ? Math.max(0, (Date.parse(r.finishedAt) - Date.parse(r.startedAt)) / 1000)
    : 0;

/**
 * What one sampled candidate did in `stages` (in order): the stages it finished, the first that
 * dropped it (skip reason, or `failed:<code>`; an audit that found the test `weak` drops it as
 * `weak_f2p_test`, since a default release leaves it out), seconds per stage, its images when
 * built. A stage with no finished record for it (not planned, still pending) ends the walk
 * without a loss.
 */
export function sampledOutcome(
  store: StoreReader,
  key: string,
  stages: readonly SampleStage[],
): SampledOutcome {
  const out: SampledOutcome = { instance_id: key, done: [], seconds: {} };
  for (const stage of stages) {
    const r = store.item(`swe5g.${stage}`, key);
    if (!r || (r.state !== 'done' && r.state !== 'skipped' && r.state !== 'failed')) break;
    out.seconds[stage] = seconds(r);
    if (r.state !== 'done') {
      out.lost = {
        stage,
        reason: r.state === 'skipped' ? (r.skipReason ?? 'skipped') : `failed:${errorCode(r)}`,
      };
      break;
    }
    if (stage === 'audit' && (r.output as AuditOutput).f2p_audit.weak) {
      out.lost = { stage, reason: 'weak_f2p_test' };
      break;
    }
    out.done.push(stage);
    if (stage === 'build') {
      const b = r.output as Built;
      const shared = b.build_seconds.env + b.build_seconds.base;
      out.seconds.build = Math.max(0, out.seconds.build! - shared);
      out.build = {
        base_image: b.images.base,
        base_bytes: b.sizes.base,
        env_image: b.images.env,
        env_bytes: b.sizes.env_layer,
        env_seconds: b.build_seconds.env,
        instance_bytes: b.sizes.instance_layer,
      };
    }
  }
  return out;
}
