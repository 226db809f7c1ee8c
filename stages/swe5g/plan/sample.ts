/**
 * The random sample of `telebench plan`: a seeded simple random sample without replacement of a
 * project's kept candidates (xoroshiro128+ from pure-rand, why: a seeded generator the repository
 * already uses for its bootstraps, so the same seed draws the same instances on every machine).
 */
import { createHash } from 'node:crypto';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { ConfigError } from '../../../pipeline/errors.js';

/**
 * The seed of one project's draw: `seed` mixed with the project's name (SHA-256), so adding or
 * removing a project does not change another project's sample.
 */
export function projectSeed(seed: number, project: string): number {
  const h = createHash('sha256').update(`${seed}\u0000${project}`).digest();
  return h.readInt32BE(0);
}

/**
 * Draws `n` of `keys` without replacement (a partial Fisher-Yates shuffle of the keys in sorted
 * order, so the draw depends on the set, not on the order it was listed in).
 * @param keys    the population (instance ids of one project's kept candidates)
 * @param n       sample size, 1..keys.length
 * @param seed    any 32-bit integer
 * @param project named in the error
 * @returns the drawn keys, sorted
 * @throws ConfigError when n is not a whole number in 1..keys.length (naming the project and its
 *   number of candidates)
 */
export function sampleKeys(
  keys: readonly string[],
  n: number,
  seed: number,
  project: string,
): string[] {
  if (!Number.isInteger(n) || n < 1)
    throw new ConfigError(`--sample expects a whole number of at least 1, got ${n}`);
  if (n > keys.length)
    throw new ConfigError(
      `--sample ${n} is more than the ${keys.length} kept candidate${keys.length === 1 ? '' : 's'} of ${project}: give --sample ${keys.length} or less (or restrict swe5g.repos to the projects with enough candidates)`,
    );
  const pool = [...keys].sort();
  const rng = xoroshiro128plus(projectSeed(seed, project));
  for (let i = 0; i < n; i++) {
    const j = uniformInt(rng, i, pool.length - 1);
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  return pool.slice(0, n).sort();
}
