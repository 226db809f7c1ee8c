/**
 * `published` mode against the authors' own scorer (their `src/parsing.py`): every hand-written
 * reply (test/fixtures/trb-cases.ts) and every row of the published experiment files must get the
 * answer their Python code gives. Always against their verdicts as recorded from their real code
 * (test/fixtures/reference/trb-authors-verdicts.jsonl, scripts/record-trb-verdicts.ts: the cases
 * and the two shared models' rows, read through test/fixtures/data-root.ts). Where their code is
 * present (test/fixtures/trb-authors.ts: $TELERESILIENCEBENCH_SRC or $TELEBENCH_MIRRORS_DIR, and
 * python3 with tiktoken) their scorer also runs live: the recording must equal it, and all eight
 * models' rows of their Experiments/ are checked; elsewhere those tests are skipped, saying why.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parsePublished, type ModeParse } from '../../../stages/resilience-eval/parse-modes.js';
import { readPredictions } from '../../../stages/resilience-eval/score.js';
import {
  authorsCheckout,
  authorsUnavailable,
  runAuthorsScorer,
  writeRows,
  type AuthorsVerdict,
} from '../../fixtures/trb-authors.js';
import { caseRows } from '../../fixtures/trb-cases.js';
import { experimentFiles } from '../../fixtures/data-root.js';
import {
  SHARED_MODELS,
  casesSha256,
  fileKey,
  fileSha256,
  readRecording,
} from '../../fixtures/trb-reference.js';

const recording = readRecording();
const unavailable = authorsUnavailable();
const live = unavailable === null;
/** Appended to a live test's title: why it is skipped here. */
const liveNote = live ? '' : ` [skipped: the authors' scorer cannot run here: ${unavailable}]`;

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

/** Hand-written cases where ours differs from `verdicts` (one per case, in `caseRows()` order). */
function caseMismatches(verdicts: readonly AuthorsVerdict[]): string[] {
  const rows = caseRows();
  expect(verdicts).toHaveLength(rows.length);
  const mismatches: string[] = [];
  verdicts.forEach((v, i) => {
    const r = rows[i]!;
    expect(v.sample_id).toBe(r.sample_id);
    const mc = r.task_kind === 'mc';
    const choices = r.choices ?? Array<string>(r.num_options ?? 0).fill('');
    const p = parsePublished(
      { content: '', thinking: '', raw: r.continuation_raw },
      mc ? { kind: 'mc', numOptions: choices.length, choices } : { kind: 'numeric', numOptions: 0 },
    );
    const want = mc ? v.pred_index : pyValue(v.pred_float);
    const got = ours(p, mc ? 'mc' : 'numeric');
    if (!Object.is(got, want) && !(Number.isNaN(got) && Number.isNaN(want)))
      mismatches.push(
        `${JSON.stringify(r.continuation_raw)}: theirs ${want}, ours ${got} (${p.rule})`,
      );
    if (got !== null) expect(p.rule, r.continuation_raw).toMatch(/^published:[a-z-]+:[a-z-]+$/);
  });
  // the forms, as their scorer reads them
  const at = (raw: string) => verdicts[rows.findIndex((r) => r.continuation_raw === raw)]!;
  expect(at('Final Answer: 3 or 1').pred_index).toBe(0);
  expect(pyValue(at('so P = 10^{-17}').pred_float)).toBe(-17);
  expect(pyValue(at('Final Answer: 10^{-3}').pred_float)).toBe(10);
  return mismatches;
}

const liveCases = (): AuthorsVerdict[] =>
  runAuthorsScorer([writeRows(caseRows() as unknown as Record<string, unknown>[])]).map((v) => ({
    ...v,
    file: 'cases',
  }));

describe('published mode = the authors\u2019 scorer, case by case', () => {
  it('gives their recorded answer on every hand-written form, naming the branch', () => {
    expect(recording.meta.cases_sha256, 'cases changed since recorded: re-record').toBe(
      casesSha256(),
    );
    expect(caseMismatches(recording.byFile.get('cases') ?? [])).toEqual([]);
  });

  it.runIf(live)(`their scorer, run live, gives the recorded answers${liveNote}`, () => {
    const verdicts = liveCases();
    expect(verdicts).toEqual(recording.byFile.get('cases'));
    expect(caseMismatches(verdicts)).toEqual([]);
  });
});

/** Rows where ours and theirs differ (file:line), over experiment files; `verdicts` by `fileKey`. */
function disagreements(
  files: readonly string[],
  verdicts: ReadonlyMap<string, readonly AuthorsVerdict[]>,
): {
  rows: number;
  diff: string[];
  rules: Set<string>;
} {
  const diff: string[] = [];
  const rules = new Set<string>();
  let rows = 0;
  for (const f of files) {
    const read = readPredictions(f, new Map());
    expect(read.errors).toEqual([]);
    const theirs = new Map((verdicts.get(fileKey(f)) ?? []).map((v) => [v.line, v]));
    expect(theirs.size, `${fileKey(f)}: verdicts per row`).toBe(read.rows.length);
    for (const r of read.rows) {
      rows++;
      const v = theirs.get(r.line)!;
      expect(v.sample_id, `${fileKey(f)}:${r.line}`).toBe(r.sample_id);
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
  return { rows, diff, rules };
}

/** Their scorer run live on `files`, grouped by `fileKey`. */
function liveVerdicts(files: readonly string[]): Map<string, AuthorsVerdict[]> {
  const by = new Map<string, AuthorsVerdict[]>();
  for (const v of runAuthorsScorer(files)) {
    const k = fileKey(v.file);
    by.set(k, [...(by.get(k) ?? []), { ...v, file: k }]);
  }
  return by;
}

const sharedFiles = (): string[] => SHARED_MODELS.flatMap(experimentFiles);

describe('published mode = the authors\u2019 scorer, row by row on their experiment files', () => {
  it('the two shared models (1,790 rows), against their recorded verdicts: 100% agreement', () => {
    const files = sharedFiles();
    for (const f of files)
      expect(fileSha256(f), `${fileKey(f)} changed since recorded: re-record`).toBe(
        recording.meta.inputs[fileKey(f)],
      );
    const d = disagreements(files, recording.byFile);
    expect(d.rows).toBe(1790);
    expect(d.diff).toEqual([]);
    // the branches that read them include both segments and the option-text rule (TeleLogs)
    expect([...d.rules].some((r) => r.startsWith('published:payload:'))).toBe(true);
    expect([...d.rules].some((r) => r.endsWith(':option-text'))).toBe(true);
  });

  it.runIf(live)(
    `the two shared models: their scorer, run live, gives the recorded verdicts${liveNote}`,
    () => {
      const files = sharedFiles();
      const by = liveVerdicts(files);
      for (const f of files) expect(by.get(fileKey(f))).toEqual(recording.byFile.get(fileKey(f)));
      expect(disagreements(files, by).diff).toEqual([]);
    },
  );

  it.runIf(live)(
    `all eight models of the authors\u2019 repository (7,160 rows), live: 100% agreement${liveNote}`,
    () => {
      const exp = join(authorsCheckout(), 'Experiments');
      expect(existsSync(exp), `${exp}: the authors' Experiments/ folder`).toBe(true);
      const files = readdirSync(exp, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .flatMap((d) => ['main', 'aux'].map((a) => join(exp, d.name, `${a}.jsonl`)));
      expect(files).toHaveLength(16);
      const by = liveVerdicts(files);
      expect([...by.values()].reduce((n, l) => n + l.length, 0)).toBe(7160);
      const d = disagreements(files, by);
      expect(d.rows).toBe(7160);
      expect(d.diff).toEqual([]);
      // the recorded models' rows there are the recorded verdicts (same files as the shared ones)
      for (const [k, list] of recording.byFile)
        if (k !== 'cases') expect(by.get(k), k).toEqual(list);
    },
  );
});
