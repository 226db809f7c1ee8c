/**
 * `telebench evaluate --predictions FILE` twice with two files: the second file must not orphan
 * the first file's grades. Grades are keyed by (file digest, model_name_or_path, instance_id), both
 * files' results stay done in the store and appear as separate runs in the report, and a later run
 * without any predictions file keeps them too. Real grading with the local executor (host `go
 * test`, no network) on a Go module this test writes; real SQLite state and the real runner; the
 * validated instance comes from a stand-in `swe5g.validate` that points at that module.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { runStages } from '../../../fixtures/run-stages.js';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openState } from '../../../../pipeline/state.js';
import { defineStage, type StageContext } from '../../../../pipeline/stage.js';
import { swe5gConfigSchema } from '../../../../stages/swe5g/config.js';
import { validateStage } from '../../../../stages/swe5g/validate/validate.js';
import { storeReader } from '../../../../pipeline/runner.js';
import {
  gradeStage,
  solveStage,
  externalKey,
  PREDICTIONS_ENV,
  type GradeOutput,
} from '../../../../stages/swe5g/evaluate/stages.js';
import { readPredictions } from '../../../../stages/swe5g/evaluate/predictions.js';
import { collectAttempts } from '../../../../stages/swe5g/evaluate/report.js';
import { summarize } from '../../../../stages/swe5g/evaluate/metrics.js';

const MODULE = 'example.com/preds';
const ID = 'fixture__preds-1';
const buggy = `package ngap

// ID returns the gNB id, or "" when there is none.
func ID(p *string) string {
	return *p
}
`;
const fixed = buggy.replace('\treturn *p', '\tif p == nil {\n\t\treturn ""\n\t}\n\treturn *p');
const p2p = `package ngap

import "testing"

func TestIDSet(t *testing.T) {
	s := "g1"
	if ID(&s) != "g1" {
		t.Fatal("wrong id")
	}
}
`;
const f2p = `package ngap

import "testing"

func TestIDNil(t *testing.T) {
	if ID(nil) != "" {
		t.Fatal("want empty")
	}
}
`;

const root = mkdtempSync(join(tmpdir(), 'telebench-preds-files-'));
const src = join(root, 'src');
mkdirSync(join(src, 'ngap'), { recursive: true });
writeFileSync(join(src, 'go.mod'), `module ${MODULE}\n\ngo 1.21\n`);
writeFileSync(join(src, 'ngap', 'id.go'), buggy);
writeFileSync(join(src, 'ngap', 'id_test.go'), p2p);
const git = (...args: string[]): string =>
  execFileSync('git', ['-C', src, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  });
git('init', '-q');
git('add', '-A');
git('commit', '-qm', 'base');
const base = git('rev-parse', 'HEAD').trim();
// gold patch and the hidden test patch, made by git from real edits
writeFileSync(join(src, 'ngap', 'id.go'), fixed);
const goldPatch = git('diff');
git('checkout', '-q', '--', '.');
writeFileSync(join(src, 'ngap', 'id_nil_test.go'), f2p);
git('add', '-N', 'ngap/id_nil_test.go');
const testPatch = git('diff');
git('rm', '-q', '--cached', 'ngap/id_nil_test.go');
execFileSync('rm', [join(src, 'ngap', 'id_nil_test.go')]);

const F2P = [`${MODULE}/ngap::TestIDNil`];
const P2P = [`${MODULE}/ngap::TestIDSet`];

const validateStub = defineStage<unknown, unknown, unknown>({
  name: 'swe5g.validate',
  version: validateStage.version,
  needs: [],
  description: 'stand-in',
  *plan() {
    yield {
      key: ID,
      input: {
        resolved: { registry_id: 'preds', test_dirs: ['ngap'], test_patch: '', language: 'go' },
        testgen: { f2p_test_patch: testPatch },
        built: { source_dir: src, module_dir: '' },
      },
    };
  },
  run: async () => ({
    instance_id: ID,
    repo: 'fixture/preds',
    base_commit: base,
    problem_statement: 'ID panics with a nil pointer dereference when the gNB id is missing.',
    incomplete: false,
    patch: goldPatch,
    test_patch: testPatch,
    FAIL_TO_PASS: F2P,
    PASS_TO_PASS: P2P,
    bug_category: 'nil_pointer',
    nf: 'AMF',
    spec_refs: [],
    images: { instance: 'local' },
    image_recipe: 'go',
  }),
});

const state = openState(join(root, 'state'));
afterAll(() => state.close());
const registry = new Map([validateStub, solveStage, gradeStage].map((s) => [s.name, s as never]));
const config = {
  version: 1,
  stages: {},
  swe5g: swe5gConfigSchema.parse({
    environments: { executor: 'local', limits: { timeout_s: 300 } },
    evaluation: { skills: { enabled: false } },
  }),
};

async function run(stages: string[], predictions?: string) {
  if (predictions) process.env[PREDICTIONS_ENV] = predictions;
  try {
    return await runStages(state, { registry, stages, config, root });
  } finally {
    delete process.env[PREDICTIONS_ENV];
  }
}

const file = (name: string, rows: object[]): string => {
  const f = join(root, name);
  writeFileSync(f, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return f;
};

const reportCtx = (): StageContext<never> =>
  ({
    config,
    stateDir: state.dir,
    store: storeReader(
      state.store,
      (name: string) => (registry.get(name) as { version: number } | undefined)?.version,
    ),
  }) as never;

describe('two predictions files keep both results', () => {
  it('grades file A, then file B, then runs without a file: all of A and B stay graded and reported', async () => {
    expect((await run(['swe5g.validate'])).exitCode).toBe(0);
    const a = file('a.jsonl', [
      { instance_id: ID, model_name_or_path: 'agent', model_patch: goldPatch },
      { instance_id: ID, model_name_or_path: 'empty', model_patch: '' },
    ]);
    const b = file('b.jsonl', [{ instance_id: ID, model_name_or_path: 'agent', model_patch: '' }]);
    const da = readPredictions(a).digest;
    const db = readPredictions(b).digest;
    expect(da).not.toBe(db);

    expect((await run(['swe5g.eval.grade'], a)).exitCode).toBe(0);
    const aAgent = externalKey(da, 'agent', ID);
    expect(aAgent).toBe(`external::${da.slice(0, 12)}::agent::${ID}`);
    expect((state.store.item('swe5g.eval.grade', aAgent)!.output as GradeOutput).resolved).toBe(
      true,
    );
    const gradedAt = state.store.item('swe5g.eval.grade', aAgent)!.finishedAt;

    // file B: same model and instance, another patch
    expect((await run(['swe5g.eval.grade'], b)).exitCode).toBe(0);
    const bAgent = externalKey(db, 'agent', ID);
    expect(state.store.item('swe5g.eval.grade', bAgent)!.state).toBe('done');
    expect((state.store.item('swe5g.eval.grade', bAgent)!.output as GradeOutput).resolved).toBe(
      false,
    );
    // A's results are neither orphaned nor graded again
    for (const k of [aAgent, externalKey(da, 'empty', ID)])
      expect(state.store.item('swe5g.eval.grade', k)!.state).toBe('done');
    expect(state.store.item('swe5g.eval.grade', aAgent)!.finishedAt).toBe(gradedAt);

    // a run without a predictions file keeps both
    expect((await run(['swe5g.eval.grade'])).exitCode).toBe(0);
    const states = [...state.store.items('swe5g.eval.grade')].map((r) => [r.key, r.state]);
    expect(states).toEqual(
      [aAgent, externalKey(da, 'empty', ID), bAgent].sort().map((k) => [k, 'done']),
    );

    // the report: three runs, named by file and digest
    const sums = new Map(summarize(collectAttempts(reportCtx() as never)).map((s) => [s.run, s]));
    expect([...sums.keys()].sort()).toEqual(
      [
        `agent (a.jsonl@${da.slice(0, 8)})`,
        `agent (b.jsonl@${db.slice(0, 8)})`,
        `empty (a.jsonl@${da.slice(0, 8)})`,
      ].sort(),
    );
    expect(sums.get(`agent (a.jsonl@${da.slice(0, 8)})`)!.resolved).toBe(1);
    expect(sums.get(`agent (b.jsonl@${db.slice(0, 8)})`)!.resolved).toBe(0);
  });
});
