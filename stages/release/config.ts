/**
 * The `release` configuration section: which stages hold the final rows, the local release that
 * `make run` ends with, where `publish` goes, and whether `release` re-runs SWE-Bench 5G first.
 */
import { z } from 'zod';

/** Zod schema of the `release` section (every key has a default). */
export const releaseConfigSchema = z.strictObject({
  /** Stage whose done outputs are the rows of each dataset. */
  sources: z
    .strictObject({
      'swe-bench-5g': z.string().default('swe5g.validate'),
      teleresiliencebench: z.string().default('resilience.instances'),
    })
    .default({ 'swe-bench-5g': 'swe5g.validate', teleresiliencebench: 'resilience.instances' }),
  /** The release stages of the `all` pipeline (`release.swe5g`, `release.resilience`). */
  local: z
    .strictObject({
      /** `auto`: `0.0.0-local.<first 12 hex of the content digest>`, so each content gets its own version. */
      version: z.string().default('auto'),
    })
    .default({ version: 'auto' }),
  hub: z
    .strictObject({
      /** Hub base URL (the client's `hubUrl`). */
      url: z.url().default('https://huggingface.co'),
      /** Dataset repository per dataset, `owner/name`. */
      repos: z
        .record(z.string(), z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'must be owner/name'))
        .default({
          'swe-bench-5g': 'telebench/swe-bench-5g',
          teleresiliencebench: 'telebench/teleresiliencebench',
        }),
      private: z.boolean().default(false),
      /** Branch the release commit goes to. */
      branch: z.string().default('main'),
    })
    .default({
      url: 'https://huggingface.co',
      repos: {
        'swe-bench-5g': 'telebench/swe-bench-5g',
        teleresiliencebench: 'telebench/teleresiliencebench',
      },
      private: false,
      branch: 'main',
    }),
  /** `release` of SWE-Bench 5G re-runs every instance first (`telebench verify`). */
  verify_before_release: z.boolean().default(true),
});
export type ReleaseConfig = z.output<typeof releaseConfigSchema>;

/** The release section of a whole configuration, defaults filled in. */
export function releaseSettings(config: unknown): ReleaseConfig {
  const section = (config as { release?: unknown } | null)?.release;
  return releaseConfigSchema.parse(section ?? {});
}
