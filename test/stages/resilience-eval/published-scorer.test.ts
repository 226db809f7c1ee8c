/**
 * `published` mode against the authors' own scorer (their `src/parsing.py`, run by
 * scripts/published-scorer.py): every hand-written reply below, and every row of the published
 * experiment files, must get the answer their Python code gives. Needs python3 with tiktoken, the
 * authors' code (test/fixtures/trb-authors.ts) and $TELEBENCH_DATA_ROOT.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parsePublished, type ModeParse } from '../../../stages/resilience-eval/parse-modes.js';
import { readPredictions } from '../../../stages/resilience-eval/score.js';
import {
  authorsCheckout,
  runAuthorsScorer,
  writeRows,
  type AuthorsVerdict,
} from '../../fixtures/trb-authors.js';
import { experimentFiles } from '../../fixtures/data-root.js';

const TELELOGS = Array.from({ length: 8 }, (_, i) => `C${i + 1}`);
const NF = ['AMF', 'SMF', 'UDM', 'UDR'];
const WG = ['CT1', 'CT3', 'CT4', 'CT6', 'RAN1', 'RAN2', 'RAN3', 'RAN4', 'RAN5', 'RAN6', 'SA1'];

// [raw, option texts or option count] for discrete items; the forms of issue 23 and the places
// where Python's regular expressions differ from JavaScript's.
const MC: [string, readonly string[] | number][] = [
  ['Final Answer: 3', 4],
  ['Final Answer: 3 or 1', 4],
  ['Final Answer: 4 ... or 2', 4],
  ['Final Answer: $2$', 4],
  ['Final Answer: \\boxed{3}', 4],
  ['The options are:\n* Option 1\n* Option 2', 4],
  ['I am torn between option 1 and option 2', 4],
  ['Final Answer: 2\nWait, that is wrong: option 1 is better.', 4],
  ['So the answer is 3. But maybe 2 works as well, see step 4 and 1.', 4],
  ['Option 3 seems right. Final Answer: 2 is what the reasoning gives', 4],
  ['final answer: 3 then 7', 4],
  ['FINAL  ANSWER : 2', 4],
  ['  Final Answer:\u00a03', 4],
  ['Final Answer: 3\nFinal Answer:   ', 4],
  ['Final Answer: Final Answer: 3', 4],
  ['x\u001cFinal Answer: 2', 4],
  ['Final Answer: 1\u2028So 4', 4],
  ['Final Answer: 1\u0085done 3', 4],
  ['é3 is not a boundary, but 2 is', 4],
  ['value x² then 1', 4],
  ['option 2 ' + '😀'.repeat(115) + ' 3 q', 4],
  ['the answer: 4 ' + 'ab'.repeat(70), 4],
  ['Anſwer: 3', 4],
  ['{"answer": "3"}', 4],
  ['Final Answer: 5', 4],
  ['Final Answer: 5', 5],
  ['SA5 is option 15 in 3 lists.\nFinal Answer: 15', 16],
  ['Final Answer: 15', 16],
  ['no digit here', 4],
  ['', 4],
  ['The root cause is C3, not C10.', TELELOGS],
  ['Final Answer: C7', TELELOGS],
  ['c2 or C5?', TELELOGS],
  ['the UDM invokes it.\nFinal Answer: UDM', NF],
  ['Final Answer: "udr".', NF],
  ['Final Answer: UDM\nFinal Answer: 1', NF],
  ['Final Answer: UDM or UDR', NF],
  ['The UDM, not the AMF.', NF],
  ['SMF then AMF; option 3 maybe', NF],
  ['This is SA1 work, handled by RAN10 and CT3 in the end.', WG],
];
const NUM: string[] = [
  'x = 3\nFinal Answer: 0.5',
  'Final Answer: 256+37 = 293',
  'Final Answer: 10^{-3}',
  'Final Answer: 1.5 \\times 10^{-17} W',
  'so P = 10^{-17}',
  'Final Answer: -2.5e-3 dB',
  'Final Answer: 45%',
  'Final Answer: $2$',
  'Final Answer: 1,234.5',
  'Final Answer: ٣.٥',
  'the result is \\boxed{1_000}',
  'the result is \\boxed{{5}}',
  'the result is \\boxed{inf}',
  'the result is \\boxed{x+1} so 7',
  'value is 1e999',
  'range [-100 - 20, -12',
  'answer: .5.',
  'no digits',
  'Final Answer:   \nthe value 3',
];

interface CaseRow {
  sample_id: string;
  sub_benchmark: string;
  task_kind: 'mc' | 'telemath';
  continuation_raw: string;
  choices?: readonly string[];
  num_options?: number;
}

const row = (raw: string, i: number, opts: readonly string[] | number | null): CaseRow => ({
  sample_id: `case:${typeof opts === 'object' && opts === TELELOGS ? 'telelogs' : 'teleqna'}:${i}`,
  sub_benchmark: 'case',
  task_kind: opts === null ? 'telemath' : 'mc',
  continuation_raw: raw,
  ...(Array.isArray(opts)
    ? { choices: opts }
    : typeof opts === 'number'
      ? { num_options: opts }
      : {}),
});

const pyValue = (v: string | null): number | null =>
  v === null
    ? null
    : v === 'inf'
      ? Infinity
      : v === '-inf'
        ? -Infinity
        : v === 'nan'
          ? NaN
          : Number(v);

const ours = (p: ModeParse, kind: 'mc' | 'numeric'): number | null =>
  p.status !== 'answer' ? null : kind === 'mc' ? p.index : p.value;

describe('published mode = the authors\u2019 scorer, case by case', () => {
  it('gives their answer on every hand-written form, naming the branch', () => {
    const rows = [
      ...MC.map(([raw, o], i) => row(raw, i, o)),
      ...NUM.map((raw, i) => row(raw, 100 + i, null)),
    ];
    const verdicts = runAuthorsScorer([writeRows(rows as unknown as Record<string, unknown>[])]);
    expect(verdicts).toHaveLength(rows.length);
    const mismatches: string[] = [];
    verdicts.forEach((v, i) => {
      const r = rows[i]!;
      const mc = r.task_kind === 'mc';
      const choices = r.choices ?? Array<string>(r.num_options ?? 0).fill('');
      const p = parsePublished(
        { content: '', thinking: '', raw: r.continuation_raw },
        mc
          ? { kind: 'mc', numOptions: choices.length, choices }
          : { kind: 'numeric', numOptions: 0 },
      );
      const want = mc ? v.pred_index : pyValue(v.pred_float);
      const got = ours(p, mc ? 'mc' : 'numeric');
      if (!Object.is(got, want) && !(Number.isNaN(got) && Number.isNaN(want)))
        mismatches.push(
          `${JSON.stringify(r.continuation_raw)}: theirs ${want}, ours ${got} (${p.rule})`,
        );
      if (got !== null) expect(p.rule, r.continuation_raw).toMatch(/^published:[a-z-]+:[a-z-]+$/);
    });
    expect(mismatches).toEqual([]);
    // the forms, as their scorer reads them
    const at = (raw: string) => verdicts[rows.findIndex((r) => r.continuation_raw === raw)]!;
    expect(at('Final Answer: 3 or 1').pred_index).toBe(0);
    expect(pyValue(at('so P = 10^{-17}').pred_float)).toBe(-17);
    expect(pyValue(at('Final Answer: 10^{-3}').pred_float)).toBe(10);
  });
});

/** Rows where ours and theirs differ (file:line), over experiment files. */
function disagreements(files: readonly string[]): {
  rows: number;
  diff: string[];
  rules: Set<string>;
} {
  const verdicts = runAuthorsScorer(files);
  const byKey = new Map<string, AuthorsVerdict>(verdicts.map((v) => [`${v.file}:${v.line}`, v]));
  const diff: string[] = [];
  const rules = new Set<string>();
  let rows = 0;
  for (const f of files) {
    const read = readPredictions(f, new Map());
    expect(read.errors).toEqual([]);
    for (const r of read.rows) {
      rows++;
      const v = byKey.get(`${f}:${r.line}`)!;
      const p = parsePublished(r.reply!, {
        kind: r.kind,
        numOptions: r.num_options,
        choices: r.choices,
      });
      if (p.rule) rules.add(p.rule);
      const want = r.kind === 'mc' ? v.pred_index : pyValue(v.pred_float);
      if (!Object.is(ours(p, r.kind), want))
        diff.push(`${f}:${r.line} theirs ${want} ours ${ours(p, r.kind)}`);
    }
  }
  expect(rows).toBe(verdicts.length);
  return { rows, diff, rules };
}

describe('published mode = the authors\u2019 scorer, row by row on their experiment files', () => {
  it('the two shared models (1,790 rows): 100% agreement', () => {
    const files = ['gemma4_31b', 'nemotron-3-nano_4b'].flatMap(experimentFiles);
    const d = disagreements(files);
    expect(d.rows).toBe(1790);
    expect(d.diff).toEqual([]);
    // the branches that read them include both segments and the option-text rule (TeleLogs)
    expect([...d.rules].some((r) => r.startsWith('published:payload:'))).toBe(true);
    expect([...d.rules].some((r) => r.endsWith(':option-text'))).toBe(true);
  });

  it('all eight models of the authors\u2019 repository (7,160 rows): 100% agreement', () => {
    const exp = join(authorsCheckout(), 'Experiments');
    expect(existsSync(exp), `${exp}: the authors' Experiments/ folder`).toBe(true);
    const files = readdirSync(exp, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) => ['main', 'aux'].map((a) => join(exp, d.name, `${a}.jsonl`)));
    expect(files).toHaveLength(16);
    const d = disagreements(files);
    expect(d.rows).toBe(7160);
    expect(d.diff).toEqual([]);
  });
});
