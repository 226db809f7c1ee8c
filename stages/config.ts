/**
 * The full configuration schema: the engine's keys plus one section per dataset branch. Each branch
 * owns its section's schema in its own folder; this file only composes them.
 * `config/telebench.schema.json` is generated from it (`telebench config schema`).
 */
import { z } from 'zod';
import { engineConfigShape } from '../pipeline/config/schema.js';
import { selftestConfigSchema } from './selftest/selftest.js';
import { swe5gConfigSchema } from './swe5g/config.js';
import { resilienceConfigSchema } from './resilience/config.js';
import { releaseConfigSchema } from './release/config.js';
import { resilienceEvalConfigSchema } from './resilience-eval/config.js';

export const appConfigSchema = z.strictObject({
  ...engineConfigShape,
  selftest: selftestConfigSchema.optional(),
  swe5g: swe5gConfigSchema.optional(),
  resilience: resilienceConfigSchema.optional(),
  resilience_eval: resilienceEvalConfigSchema.optional(),
  release: releaseConfigSchema.optional(),
});

export type AppConfig = z.output<typeof appConfigSchema>;
