/**
 * `telebench verify <dataset> <V>`: re-runs a released snapshot from its own rows with its
 * dataset's verifier (SWE-Bench 5G: the gold patch must resolve every instance, the empty patch
 * none — the SWE-bench harness check; its Docker harness reproduces 99.78% of gold patches). The
 * data flow: rows from the release's
 * JSON Lines -> schema check -> the verifier (containers) -> a {@link VerifySummary}.
 */
import { TelebenchError } from '../../pipeline/errors.js';
import type { VerifySummary } from '../../datasets/card.js';
import { readReleaseRows, releaseDir, validateRows } from './assemble.js';
import type { AnyDatasetEntry, VerifierEnv } from './entry.js';

/**
 * Verifies a written release with its dataset's verify hooks.
 * @throws TelebenchError `verify_not_applicable` (tier config) for a dataset without verify hooks
 *   (its rows cannot be executed), `verify_unavailable` when its verifier is not wired (the
 *   environments code is missing), `release_not_found` when the version was never released
 */
export async function verifyRelease(args: {
  stateDir: string;
  entry: AnyDatasetEntry;
  version: string;
  config: unknown;
  env: VerifierEnv;
}): Promise<VerifySummary> {
  const dataset = args.entry.definition;
  if (!args.entry.verify) {
    throw new TelebenchError(
      'verify_not_applicable',
      `verify re-runs executable instances; ${dataset.id} has no executable instances`,
      { tier: 'config' },
    );
  }
  const rows = validateRows(
    dataset,
    readReleaseRows(releaseDir(args.stateDir, dataset.id, args.version)),
  );
  const verifier = args.entry.verify.verifier(args.config, args.env);
  if (!verifier) {
    throw new TelebenchError(
      'verify_unavailable',
      'no instance executor is wired for verify (needs the Docker executor of pipeline/providers/docker and the validation of stages/swe5g/validate)',
      { tier: 'preflight' },
    );
  }
  return (await verifier(rows)).summary;
}
