/**
 * `telebench verify <dataset> <V>`: re-runs a released SWE-Bench 5G snapshot from its own rows —
 * the gold patch must resolve every instance, the empty patch none (the SWE-bench harness check;
 * its Docker harness reproduces 99.78% of gold patches). The data flow: rows from the release's
 * JSON Lines -> schema check -> the verifier (containers) -> a {@link VerifySummary}.
 */
import { TelebenchError } from '../../pipeline/errors.js';
import type { DatasetDefinition } from '../../datasets/definition.js';
import type { VerifySummary } from '../../datasets/card.js';
import type { Swe5gRow } from '../../datasets/index.js';
import { readReleaseRows, releaseDir, validateRows } from './assemble.js';
import type { Verifier } from './release.js';

/**
 * Verifies a written release.
 * @throws TelebenchError `verify_not_applicable` for a dataset other than SWE-Bench 5G,
 *   `verify_unavailable` when no verifier is wired (the environments code is missing),
 *   `release_not_found` when the version was never released
 */
export async function verifyRelease(args: {
  stateDir: string;
  dataset: DatasetDefinition;
  version: string;
  verifier: Verifier | null;
}): Promise<VerifySummary> {
  if (args.dataset.id !== 'swe-bench-5g') {
    throw new TelebenchError(
      'verify_not_applicable',
      `verify re-runs SWE-Bench 5G instances; ${args.dataset.id} has no executable instances`,
      {
        tier: 'config',
      },
    );
  }
  const rows = validateRows(
    args.dataset,
    readReleaseRows(releaseDir(args.stateDir, args.dataset.id, args.version)),
  ) as unknown as Swe5gRow[];
  if (!args.verifier) {
    throw new TelebenchError(
      'verify_unavailable',
      'no instance executor is wired for verify (needs the Docker executor of pipeline/providers/docker and the validation of stages/swe5g/validate)',
      { tier: 'preflight' },
    );
  }
  return (await args.verifier(rows)).summary;
}
