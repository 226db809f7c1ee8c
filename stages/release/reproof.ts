/**
 * The re-proof rule of a release (issue 32, "Every release re-proven"): an instance holds when its
 * gold patch resolves `runs` of `runs` fresh runs and its empty patch resolves none (the SWE-bench
 * harness check, repeated; SWE-bench needed about 18 months to make all 500 gold patches of
 * Verified pass, SWE-bench#294). Pure: the runs themselves are made by `verifier.ts`.
 */
import type { ReproofRecord, VerifySummary } from '../../datasets/card.js';

export type { ReproofRecord };

/** One graded run of a patch: resolved or not, why not, the log digests it left. */
export interface PatchRun {
  resolved: boolean;
  why: string;
  logs: string[];
}

/**
 * Runs a patch up to `runs` times while the rule can still hold: gold stops at its first run
 * that does not resolve, the empty patch at its first run that does.
 * @param run makes one fresh run (one container) of the patch
 */
export async function repeatRuns(
  runs: number,
  mustResolve: boolean,
  run: (i: number) => Promise<PatchRun>,
): Promise<PatchRun[]> {
  const out: PatchRun[] = [];
  for (let i = 0; i < runs; i++) {
    const r = await run(i);
    out.push(r);
    if (r.resolved !== mustResolve) break;
  }
  return out;
}

/**
 * The record of one instance from its gold and empty runs.
 * @param image the image the runs used and its content id ('' each for the local executor)
 */
export function reproofRecord(args: {
  instance_id: string;
  runs: number;
  gold: readonly PatchRun[];
  empty: readonly PatchRun[];
  image: string;
  image_id: string;
  seconds: number;
}): ReproofRecord {
  const goldResolved = args.gold.filter((r) => r.resolved).length;
  const emptyFailed = args.empty.filter((r) => !r.resolved).length;
  const holds = goldResolved === args.runs && emptyFailed === args.runs;
  let reason = '';
  if (goldResolved < args.runs) {
    const bad = args.gold.find((r) => !r.resolved);
    reason = `gold patch resolved ${goldResolved} of ${args.gold.length} run(s) (${args.runs} needed)${bad ? `: ${bad.why}` : ''}`;
  } else if (emptyFailed < args.runs)
    reason = `the empty patch resolved run ${args.empty.length} of ${args.runs} (tests do not detect the bug)`;
  return {
    instance_id: args.instance_id,
    holds,
    runs: args.runs,
    gold: { runs: args.gold.length, resolved: goldResolved },
    empty: { runs: args.empty.length, failed: emptyFailed },
    image: args.image,
    image_id: args.image_id,
    logs: { gold: args.gold.flatMap((r) => r.logs), empty: args.empty.flatMap((r) => r.logs) },
    seconds: Math.round(args.seconds * 10) / 10,
    reason,
  };
}

/**
 * Folds the records into the card's and the manifest's summary: counts, the dropped instances
 * with their reasons, and every record.
 */
export function summarizeReproof(
  records: readonly ReproofRecord[],
  executor: string,
  runs: number,
): VerifySummary {
  const gold = records.filter((r) => r.gold.resolved === runs).length;
  return {
    attempted: records.length,
    gold_resolved: gold,
    rate: records.length ? gold / records.length : 1,
    empty_patch_resolved: records.filter((r) => r.empty.failed < r.empty.runs).length,
    dropped: records
      .filter((r) => !r.holds)
      .map((r) => ({ instance_id: r.instance_id, reason: r.reason })),
    executor,
    runs,
    records: [...records],
  };
}
