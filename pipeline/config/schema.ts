/**
 * The engine's part of the configuration. Dataset branches add their own sections in
 * `stages/config.ts`, which composes the full schema; the engine never imports stages.
 */
import { z } from 'zod';

/** Per-stage engine settings: `stages: { "swe5g.build": { concurrency: 2 } }`. */
export const stageSettingsSchema = z.strictObject({
  /** Items of this stage run at once; overrides the stage's own default. */
  concurrency: z.number().int().min(1).max(256).optional(),
});

/** Keys every configuration file has. */
export const engineConfigShape = {
  /** Configuration format version. */
  version: z.literal(1),
  /** Free text shown in reports and manifests. */
  description: z.string().optional(),
  stages: z.record(z.string(), stageSettingsSchema).default({}),
};

export const engineConfigSchema = z.strictObject(engineConfigShape);
export type EngineConfig = z.output<typeof engineConfigSchema>;
