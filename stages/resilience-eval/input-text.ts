/**
 * Reading the files `telebench score` and the evaluation take (predictions, instances): one BOM
 * rule, one empty-file rule, JSON errors located by file, line and column, and duplicate
 * `sample_id`s refused with both places named (or resolved by an explicit policy).
 */
import { readFileSync } from 'node:fs';
import { TelebenchError } from '../../pipeline/errors.js';

/** Which row wins when a `sample_id` occurs twice: `error` (the default) refuses the input. */
export const DUPLICATE_POLICIES = ['error', 'first', 'last'] as const;
export type DuplicatePolicy = (typeof DUPLICATE_POLICIES)[number];

/**
 * A file's text without its UTF-8 byte order mark.
 * @param what how messages name the content (`predictions`, `instances`)
 * @param allowEmpty return '' for a file of white space instead of throwing
 * @throws TelebenchError `input_missing` (tier config) when it cannot be read; `input_empty`
 *   (tier content) when it holds nothing but white space
 */
export function readInputText(
  path: string,
  what: string,
  label = path,
  allowEmpty = false,
): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new TelebenchError('input_missing', `cannot read ${what} ${label}: ${String(e)}`, {
      tier: 'config',
    });
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === '' && allowEmpty) return '';
  if (text.trim() === '')
    throw new TelebenchError('input_empty', `${label}: empty file: no ${what} in it`, {
      tier: 'content',
    });
  return text;
}

/**
 * Where a `JSON.parse` error points: 1-based line and column in `text` (V8 gives a character
 * position, or none at the end of the input: then the end of the text).
 */
export function jsonErrorPlace(text: string, err: unknown): { line: number; column: number } {
  const m = /position (\d+)/.exec(String(err));
  const pos = m ? Math.min(Number(m[1]), text.length) : text.length;
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  return { line, column: pos - before.lastIndexOf('\n') };
}

/** The parse error message without V8's position suffix. */
export const jsonErrorText = (err: unknown): string =>
  (err instanceof Error ? err.message : String(err)).replace(/ in JSON at position \d+.*$/, '');

/**
 * Keeps one row per `sample_id` by `policy`. With `error`, a second occurrence is reported with
 * both places (`where`: `file:line`) and the first kept. Pure.
 * @returns the kept rows in first-seen order, and one message per refused duplicate
 */
export function dedupe<T>(
  rows: readonly T[],
  key: (r: T) => string,
  where: (r: T) => string,
  policy: DuplicatePolicy,
): { rows: T[]; duplicates: { row: T; message: string }[] } {
  const seen = new Map<string, number>();
  const out: T[] = [];
  const duplicates: { row: T; message: string }[] = [];
  for (const r of rows) {
    const k = key(r);
    const at = seen.get(k);
    if (at === undefined) {
      seen.set(k, out.length);
      out.push(r);
      continue;
    }
    if (policy === 'last') out[at] = r;
    else if (policy === 'error') {
      duplicates.push({
        row: r,
        message: `sample_id ${k} occurs twice: ${where(out[at]!)} and ${where(r)} (give --on-duplicate first or last to say which wins)`,
      });
    }
  }
  return { rows: out, duplicates };
}
