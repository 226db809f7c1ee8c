/**
 * SWE-bench's prediction format, read and written: JSON Lines with `instance_id`,
 * `model_name_or_path` and `model_patch` (a unified diff; `null` or `''` is the empty patch), the
 * format SWE-agent, OpenHands, Agentless and the SWE-bench harness exchange. Other fields of a row
 * are ignored on reading.
 */
import { readFileSync, existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ConfigError } from '../../../pipeline/errors.js';

/** One prediction. */
export interface Prediction {
  instance_id: string;
  model_name_or_path: string;
  model_patch: string;
}

const rowSchema = z.looseObject({
  instance_id: z.string().min(1),
  model_name_or_path: z.string().min(1),
  model_patch: z.string().nullable(),
});

/** A row that could not be used, with its line and why. */
export interface BadPrediction {
  line: number;
  reason: string;
}

/**
 * Reads a predictions file. Rows that are not JSON, lack a field, or repeat an
 * (instance_id, model_name_or_path) pair are returned as `bad` with their line; the others are kept.
 * `digest` is the sha256 (hex) of the file's bytes.
 * @throws ConfigError when the file does not exist
 */
export function readPredictions(file: string): {
  rows: (Prediction & { line: number })[];
  bad: BadPrediction[];
  digest: string;
} {
  if (!existsSync(file)) throw new ConfigError(`predictions file not found: ${file}`, { file });
  const rows: (Prediction & { line: number })[] = [];
  const bad: BadPrediction[] = [];
  const seen = new Map<string, number>();
  const bytes = readFileSync(file);
  const digest = createHash('sha256').update(bytes).digest('hex');
  bytes
    .toString('utf8')
    .split('\n')
    .forEach((text, i) => {
      const line = i + 1;
      if (text.trim() === '') return;
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch (err) {
        bad.push({ line, reason: `not JSON: ${(err as Error).message}` });
        return;
      }
      const r = rowSchema.safeParse(raw);
      if (!r.success) {
        const first = r.error.issues[0]!;
        bad.push({ line, reason: `${first.path.join('.') || '(row)'}: ${first.message}` });
        return;
      }
      const key = `${r.data.model_name_or_path}\u0000${r.data.instance_id}`;
      if (seen.has(key)) {
        bad.push({
          line,
          reason: `repeats ${r.data.instance_id} of ${r.data.model_name_or_path} (first on line ${seen.get(key)})`,
        });
        return;
      }
      seen.set(key, line);
      rows.push({
        instance_id: r.data.instance_id,
        model_name_or_path: r.data.model_name_or_path,
        model_patch: r.data.model_patch ?? '',
        line,
      });
    });
  return { rows, bad, digest };
}

/** JSON Lines text of predictions (one object per line, fields in SWE-bench's order). */
export function predictionsJsonl(rows: readonly Prediction[]): string {
  return rows
    .map((r) =>
      JSON.stringify({
        instance_id: r.instance_id,
        model_name_or_path: r.model_name_or_path,
        model_patch: r.model_patch,
      }),
    )
    .map((l) => `${l}\n`)
    .join('');
}
