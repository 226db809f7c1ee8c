/**
 * SWE-bench's prediction files, read and written. A prediction is `instance_id`,
 * `model_name_or_path` and `model_patch` (a unified diff; `null` or `''` is the empty patch);
 * other fields are ignored on reading. Three shapes are read, as SWE-bench's harness reads them
 * (`swebench/harness/utils.py` `get_predictions_from_file`):
 * - JSON Lines, one prediction per line (SWE-bench, OpenHands, Agentless, `swe5g-eval`'s files);
 * - a JSON list of predictions;
 * - a JSON object keyed by `instance_id` whose values are predictions: the `preds.json` that
 *   mini-swe-agent (`update_preds_file`) and SWE-agent write.
 * The shape is told from the content, not the file name. As in SWE-bench, a row without
 * `model_name_or_path` is graded as model `None`; a dict entry without `instance_id` takes its key.
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

/** The model name SWE-bench's harness gives a prediction without `model_name_or_path`. */
export const UNNAMED_MODEL = 'None';

const rowSchema = z.looseObject({
  instance_id: z.string().min(1),
  model_name_or_path: z.string().min(1).optional(),
  model_patch: z.string().nullable(),
});

/** Shape of a predictions file. */
export type PredictionsShape = 'jsonl' | 'list' | 'dict';

/** A row that could not be used: its ordinal (`line`), where it is in the file, and why. */
export interface BadPrediction {
  /** JSON Lines: the line number; a list or dict: the entry's 1-based position. */
  line: number;
  /** `line 3`, `entry [2]` (a list, 0-based like JSON) or `key "free5gc__amf-161"` (a dict). */
  where: string;
  reason: string;
}

/** A usable row, with where it is in the file. */
export type PredictionRow = Prediction & { line: number; where: string };

/** What {@link readPredictions} found in a file. */
export interface PredictionsFile {
  rows: PredictionRow[];
  bad: BadPrediction[];
  /** sha256 (hex) of the file's bytes. */
  digest: string;
  shape: PredictionsShape;
}

/** One entry of the file before checking: its value and where it is. */
type Entry = { line: number; where: string; key?: string } & (
  { value: unknown } | { error: string }
);

/**
 * The file's entries, by shape. A whole-file JSON array is a list; a whole-file JSON object that is
 * not itself one prediction (no `instance_id` string, no `model_patch`) is a dict keyed by
 * instance_id; anything else is read as JSON Lines.
 */
function entriesOf(text: string): { shape: PredictionsShape; entries: Entry[] } {
  let whole: unknown;
  try {
    whole = JSON.parse(text);
  } catch {
    whole = undefined;
  }
  if (Array.isArray(whole))
    return {
      shape: 'list',
      entries: whole.map((value, i) => ({ line: i + 1, where: `entry [${i}]`, value })),
    };
  if (whole && typeof whole === 'object') {
    const o = whole as Record<string, unknown>;
    const values = Object.values(o);
    const isPrediction = typeof o.instance_id === 'string' || 'model_patch' in o;
    if (!isPrediction && values.length > 0)
      return {
        shape: 'dict',
        entries: Object.entries(o).map(([key, value], i) => ({
          line: i + 1,
          where: `key ${JSON.stringify(key)}`,
          key,
          value,
        })),
      };
  }
  const entries: Entry[] = [];
  text.split('\n').forEach((t, i) => {
    if (t.trim() === '') return;
    const where = `line ${i + 1}`;
    try {
      entries.push({ line: i + 1, where, value: JSON.parse(t) as unknown });
    } catch (err) {
      entries.push({ line: i + 1, where, error: `not JSON: ${(err as Error).message}` });
    }
  });
  return { shape: 'jsonl', entries };
}

/**
 * Reads a predictions file in any of the three shapes. Rows that are not JSON, not an object, lack
 * `instance_id` or `model_patch`, disagree with their dict key, or repeat an (instance_id,
 * model_name_or_path) pair are returned as `bad` with where they are; the others are kept.
 * @throws ConfigError when the file does not exist
 */
export function readPredictions(file: string): PredictionsFile {
  if (!existsSync(file)) throw new ConfigError(`predictions file not found: ${file}`, { file });
  const rows: PredictionRow[] = [];
  const bad: BadPrediction[] = [];
  const seen = new Map<string, string>();
  const bytes = readFileSync(file);
  const digest = createHash('sha256').update(bytes).digest('hex');
  const { shape, entries } = entriesOf(bytes.toString('utf8'));
  for (const e of entries) {
    const { line, where } = e;
    if ('error' in e) {
      bad.push({ line, where, reason: e.error });
      continue;
    }
    let value = e.value;
    // a dict entry may leave instance_id to its key
    if (e.key !== undefined && value && typeof value === 'object' && !Array.isArray(value)) {
      const v = value as Record<string, unknown>;
      if (v.instance_id === undefined) value = { ...v, instance_id: e.key };
      else if (v.instance_id !== e.key) {
        bad.push({
          line,
          where,
          reason: `instance_id ${JSON.stringify(v.instance_id)} differs from its key`,
        });
        continue;
      }
    }
    const r = rowSchema.safeParse(value);
    if (!r.success) {
      const first = r.error.issues[0]!;
      bad.push({ line, where, reason: `${first.path.join('.') || '(row)'}: ${first.message}` });
      continue;
    }
    const model = r.data.model_name_or_path ?? UNNAMED_MODEL;
    const key = `${model}\u0000${r.data.instance_id}`;
    if (seen.has(key)) {
      bad.push({
        line,
        where,
        reason: `repeats ${r.data.instance_id} of ${model} (first at ${seen.get(key)})`,
      });
      continue;
    }
    seen.set(key, where);
    rows.push({
      instance_id: r.data.instance_id,
      model_name_or_path: model,
      model_patch: r.data.model_patch ?? '',
      line,
      where,
    });
  }
  return { rows, bad, digest, shape };
}

/**
 * Why a predictions file has nothing to grade, or null when it has a row: the shape read and each
 * bad row with where it is (at most `max`, then how many more).
 */
export function noUsableRow(file: string, read: PredictionsFile, max = 20): string | null {
  if (read.rows.length > 0) return null;
  if (read.bad.length === 0)
    return `${file} holds no prediction (empty, or an empty JSON list/object)`;
  const listed = read.bad.slice(0, max).map((b) => `  ${b.where}: ${b.reason}`);
  if (read.bad.length > max) listed.push(`  ... and ${read.bad.length - max} more`);
  return `${file} (read as ${read.shape === 'jsonl' ? 'JSON Lines' : read.shape === 'list' ? 'a JSON list' : 'a JSON object keyed by instance_id'}) has no usable prediction; each row needs instance_id and model_patch (SWE-bench's format):\n${listed.join('\n')}`;
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
