/**
 * One evaluation instance, whatever its source: this project's instances
 * (`stages/resilience/instance.ts`), a released snapshot (same schema), or the published
 * TeleResilienceBench files (`sample_id, sub_benchmark, question, choices, correct_answer,
 * incorrect_answer, half_reasoning_trace`), read as they are: the half trace, the generator's
 * wrong answer and the published ids are kept.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { TelebenchError } from '../../pipeline/errors.js';
import { resilienceInstanceSchema } from '../resilience/instance.js';

export interface EvalInstance {
  sample_id: string;
  sub_benchmark: string;
  /** Lower-case subset id (`teleqna`, `3gpp_tsg`, `telemath`, ...). */
  subset: string;
  kind: 'mc' | 'numeric';
  question: string;
  choices: string[];
  half_reasoning_trace: string;
  gold_index: number | null;
  gold_value: number | null;
  /** The generator's wrong answer (null when unknown). */
  generator_index: number | null;
  generator_value: number | null;
  correct_answer: string;
  incorrect_answer: string;
  difficulty: string | null;
  /** `project` (our schema) or `published` (the published fields only). */
  origin: 'project' | 'published';
}

const publishedRowSchema = z.looseObject({
  sample_id: z.string().min(1),
  sub_benchmark: z.string().min(1),
  question: z.string().min(1),
  choices: z.array(z.string()).optional(),
  correct_answer: z.union([z.string(), z.number()]),
  incorrect_answer: z.union([z.string(), z.number()]),
  half_reasoning_trace: z.string().min(1),
  difficulty: z.string().nullable().optional(),
});

const uniqueIndex = (choices: readonly string[], text: string): number | null => {
  const norm = (s: string) => s.trim().toLowerCase();
  const hits = choices.flatMap((c, i) => (norm(c) === norm(text) ? [i] : []));
  return hits.length >= 1 ? hits[0]! : null;
};

/**
 * Reads one row of either schema.
 * @throws TelebenchError `bad_instance_row` naming the file and line when the row fits neither
 */
export function toEvalInstance(row: unknown, where: string): EvalInstance {
  const own = resilienceInstanceSchema.safeParse(row);
  if (own.success) {
    const i = own.data;
    return {
      sample_id: i.sample_id,
      sub_benchmark: i.sub_benchmark,
      subset: i.subset.toLowerCase(),
      kind: i.kind,
      question: i.question,
      choices: i.choices ?? [],
      half_reasoning_trace: i.half_reasoning_trace,
      gold_index: i.correct_index,
      gold_value: i.correct_value,
      generator_index: i.incorrect_index,
      generator_value: i.incorrect_value,
      correct_answer: i.correct_answer,
      incorrect_answer: i.incorrect_answer,
      difficulty: i.difficulty,
      origin: 'project',
    };
  }
  const pub = publishedRowSchema.safeParse(row);
  if (!pub.success)
    throw new TelebenchError(
      'bad_instance_row',
      `${where}: not a TeleResilienceBench instance: ${pub.error.issues.map((i) => `${i.path.join('.') || '(row)'}: ${i.message}`).join('; ')}`,
      { tier: 'content' },
    );
  const p = pub.data;
  const correct = String(p.correct_answer);
  const incorrect = String(p.incorrect_answer);
  const choices = p.choices ?? [];
  const kind = choices.length > 0 ? 'mc' : 'numeric';
  const num = (s: string): number | null => {
    const v = Number(s.trim());
    return s.trim() !== '' && Number.isFinite(v) ? v : null;
  };
  const gold_index = kind === 'mc' ? uniqueIndex(choices, correct) : null;
  const gold_value = kind === 'numeric' ? num(correct) : null;
  if (kind === 'mc' ? gold_index === null : gold_value === null)
    throw new TelebenchError(
      'bad_instance_row',
      `${where}: ${p.sample_id}: correct_answer ${JSON.stringify(correct)} is ${kind === 'mc' ? 'not one of the choices' : 'not a number'}`,
      { tier: 'content' },
    );
  return {
    sample_id: p.sample_id,
    sub_benchmark: p.sub_benchmark,
    subset: p.sample_id.split(':')[1]?.toLowerCase() ?? p.sub_benchmark.toLowerCase(),
    kind,
    question: p.question,
    choices,
    half_reasoning_trace: p.half_reasoning_trace,
    gold_index,
    gold_value,
    generator_index: kind === 'mc' ? uniqueIndex(choices, incorrect) : null,
    generator_value: kind === 'numeric' ? num(incorrect) : null,
    correct_answer: correct,
    incorrect_answer: incorrect,
    difficulty: p.difficulty ?? null,
    origin: 'published',
  };
}

/**
 * Reads instances from a JSON array file or a JSON Lines file (either schema).
 * @throws TelebenchError `input_missing` (no file), `bad_instance_row` (file and line)
 */
export function readEvalInstances(path: string): EvalInstance[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new TelebenchError('input_missing', `cannot read instances ${path}: ${String(e)}`, {
      tier: 'config',
    });
  }
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[')) {
    const rows = JSON.parse(trimmed) as unknown[];
    return rows.map((r, i) => toEvalInstance(r, `${path} row ${i}`));
  }
  const out: EvalInstance[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch (e) {
      throw new TelebenchError('bad_instance_row', `${path}:${i + 1}: not JSON: ${String(e)}`, {
        tier: 'content',
      });
    }
    out.push(toEvalInstance(row, `${path}:${i + 1}`));
  });
  return out;
}
