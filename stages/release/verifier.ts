/**
 * The instance executor behind `telebench verify` and the pre-release check. Placeholder until
 * wired to the environments code (pipeline/providers/docker, stages/swe5g/validate).
 */
import type { Verifier } from './release.js';

/** The verifier for a configuration, or null when verification cannot run. */
export function swe5gVerifier(_config: unknown): Verifier | null {
  return null;
}
