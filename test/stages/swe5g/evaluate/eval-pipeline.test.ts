/**
 * swe5g-eval end to end on a repository this test builds (two handlers with the same nil
 * dereference, the fix guards both), validated in the real Docker engine, solved by scripted models
 * on the local model server (real Ollama protocol), graded in fresh containers; then external
 * predictions in SWE-bench's format (gold, empty, and the solver's own exported file), and the
 * report (Markdown tables against hand counts, HTML funnel in headless Chromium).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPipeline, storeReader } from '../../../../pipeline/runner.js';
import { openState, type OpenState } from '../../../../pipeline/state.js';
import { EventBus } from '../../../../pipeline/events.js';
import type { Pipeline, StageContext } from '../../../../pipeline/stage.js';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { swe5gConfigSchema } from '../../../../stages/swe5g/config.js';
import { resolveStage } from '../../../../stages/swe5g/resolve/resolve.js';
import { buildStage } from '../../../../stages/swe5g/build/build.js';
import { validateStage } from '../../../../stages/swe5g/validate/validate.js';
import {
  evalStages,
  externalKey,
  PREDICTIONS_ENV,
  predictionsDir,
  type GradeOutput,
  type SolveOutput,
} from '../../../../stages/swe5g/evaluate/stages.js';
import { collectAttempts, swe5gEvalMarkdown } from '../../../../stages/swe5g/evaluate/report.js';
import { summarize } from '../../../../stages/swe5g/evaluate/metrics.js';
import { readPredictions } from '../../../../stages/swe5g/evaluate/predictions.js';
import { fileTally, tallyLine } from '../../../../stages/swe5g/evaluate/file-tally.js';
import { AFTER_ENV } from '../../../../stages/swe5g/evaluate/window.js';
import { buildFixture, type Fixture } from '../../../fixtures/repos/builder.js';
import { ensureTestBase } from '../../../fixtures/repos/harness.js';
import {
  startLlmServer,
  type LlmServer,
  type RecordedRequest,
} from '../../../servers/llm-server.js';
import { checkPage } from '../../../fixtures/chromium-page.js';
import { standInStages } from '../../../fixtures/swe5g-stand-ins.js';

const MODULE = 'example.com/amftwo';
const types = `package ngap

// GNbID identifies a gNB.
type GNbID struct{ Value string }

// GlobalRANNodeID holds the RAN node identity.
type GlobalRANNodeID struct{ GNbId *GNbID }

// Request is the subset of the NGAP messages the handlers read.
type Request struct{ GlobalRANNodeID *GlobalRANNodeID }
`;
const handler = (guard: [boolean, boolean]): string => `package ngap

import "errors"

// ErrMissingGNbID is returned when the request has no gNB id.
var ErrMissingGNbID = errors.New("missing GNbId")

// HandleNGSetupRequest returns the gNB id of an NG Setup Request.
func HandleNGSetupRequest(req *Request) (string, error) {
${guard[0] ? '\tif req.GlobalRANNodeID == nil || req.GlobalRANNodeID.GNbId == nil {\n\t\treturn "", ErrMissingGNbID\n\t}\n' : ''}\treturn req.GlobalRANNodeID.GNbId.Value, nil
}

// HandleRANConfigurationUpdate returns the gNB id of a RAN Configuration Update.
func HandleRANConfigurationUpdate(req *Request) (string, error) {
${guard[1] ? '\tif req.GlobalRANNodeID == nil || req.GlobalRANNodeID.GNbId == nil {\n\t\treturn "", ErrMissingGNbID\n\t}\n' : ''}\treturn req.GlobalRANNodeID.GNbId.Value, nil
}
`;
const existingTest = `package ngap

import "testing"

func TestHandleOK(t *testing.T) {
	id, err := HandleNGSetupRequest(&Request{GlobalRANNodeID: &GlobalRANNodeID{GNbId: &GNbID{Value: "g1"}}})
	if err != nil || id != "g1" {
		t.Fatalf("got %q %v", id, err)
	}
}
`;
const f2pTest = `package ngap

import (
	"errors"
	"fmt"
	"testing"
)

func call(f func(*Request) (string, error)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	_, err = f(&Request{GlobalRANNodeID: &GlobalRANNodeID{}})
	return err
}

func TestSetupNilGNbId(t *testing.T) {
	if err := call(HandleNGSetupRequest); !errors.Is(err, ErrMissingGNbID) {
		t.Fatalf("HandleNGSetupRequest: want ErrMissingGNbID, got %v", err)
	}
}

func TestConfigUpdateNilGNbId(t *testing.T) {
	if err := call(HandleRANConfigurationUpdate); !errors.Is(err, ErrMissingGNbID) {
		t.Fatalf("HandleRANConfigurationUpdate: want ErrMissingGNbID, got %v", err)
	}
}
`;
const F2P = [`${MODULE}/ngap::TestConfigUpdateNilGNbId`, `${MODULE}/ngap::TestSetupNilGNbId`];
const ID = 'fixture__amftwo-7';

const guardBlock = (
  fn: 'HandleNGSetupRequest' | 'HandleRANConfigurationUpdate',
  indent = '\t',
): string =>
  [
    'ngap/handler.go',
    '```go',
    '<<<<<<< SEARCH',
    `func ${fn}(req *Request) (string, error) {`,
    `${indent}return req.GlobalRANNodeID.GNbId.Value, nil`,
    '=======',
    `func ${fn}(req *Request) (string, error) {`,
    `${indent}if req.GlobalRANNodeID == nil || req.GlobalRANNodeID.GNbId == nil {`,
    `${indent}${indent}return "", ErrMissingGNbID`,
    `${indent}}`,
    `${indent}return req.GlobalRANNodeID.GNbId.Value, nil`,
    '>>>>>>> REPLACE',
    '```',
    '',
  ].join('\n');

/** The scripted models: one behaviour each, chosen by the request's model name. */
function reply(req: RecordedRequest): { content: string } {
  const body = req.body as { model: string; messages: { role: string; content: string }[] };
  const turn = body.messages.filter((m) => m.role === 'user').length;
  const last = body.messages.at(-1)!.content;
  switch (body.model.replace(/:latest$/, '')) {
    case 'm-correct':
      return {
        content: `Both handlers dereference GNbId.\n\n${guardBlock('HandleNGSetupRequest')}${guardBlock('HandleRANConfigurationUpdate')}`,
      };
    case 'm-indent':
      return {
        content:
          guardBlock('HandleNGSetupRequest', '    ') +
          guardBlock('HandleRANConfigurationUpdate', '    '),
      };
    case 'm-ambiguous':
      return {
        content:
          'ngap/handler.go\n<<<<<<< SEARCH\n\treturn req.GlobalRANNodeID.GNbId.Value, nil\n=======\n\tif req.GlobalRANNodeID.GNbId == nil {\n\t\treturn "", ErrMissingGNbID\n\t}\n\treturn req.GlobalRANNodeID.GNbId.Value, nil\n>>>>>>> REPLACE\n',
      };
    case 'm-malformed':
      return {
        content:
          'ngap/handler.go\n<<<<<<< SEARCH\n\treturn req.GlobalRANNodeID.GNbId.Value, nil\n\tif req.GlobalRANNodeID.GNbId == nil {\n>>>>>>> REPLACE\n',
      };
    case 'm-testedit':
      return {
        content:
          'ngap/handler_nil_test.go\n<<<<<<< SEARCH\n=======\npackage ngap\n\nimport "testing"\n\nfunc TestSetupNilGNbId(t *testing.T) {}\n\nfunc TestConfigUpdateNilGNbId(t *testing.T) {}\n>>>>>>> REPLACE\n',
      };
    case 'm-twosite':
      // turn 1 fixes one handler; turn 2 fixes the other only when the feedback names its test
      if (turn === 1) return { content: guardBlock('HandleNGSetupRequest') };
      return last.includes('TestConfigUpdateNilGNbId') && last.includes('nil pointer dereference')
        ? { content: guardBlock('HandleRANConfigurationUpdate') }
        : { content: 'I do not know what else to change.' };
    default:
      return { content: '' };
  }
}

let root: string;
let state: OpenState;
let fx: Fixture;
let server: LlmServer;
const MODELS = ['m-correct', 'm-indent', 'm-ambiguous', 'm-malformed', 'm-testedit', 'm-twosite'];

const [filterFixture, testgenFixture] = standInStages(() => [fx]);
const registry = new Map<string, never>(
  [filterFixture, resolveStage, testgenFixture, buildStage, validateStage, ...evalStages].map(
    (s) => [s.name, s as never],
  ),
);

function config(
  models: string[],
  modes: ('single' | 'multi')[],
  feedback: 'compile' | 'names' | 'full' = 'full',
) {
  return {
    version: 1,
    stages: {},
    swe5g: swe5gConfigSchema.parse({
      environments: {
        git_url_base: join(root, 'src'),
        base_source: 'offline',
        limits: { timeout_s: 60, memory_mib: 1024 },
      },
      evaluation: {
        models: models.map((name) => ({
          name,
          ...(name === 'm-twosite' ? { modes: ['single', 'multi'] } : {}),
          llm: { endpoints: [{ kind: 'ollama', base_url: server.url }], cache: false },
          num_ctx: 16384,
        })),
        modes,
        turns: 3,
        feedback,
        skills: { enabled: false },
      },
    }),
  };
}

async function run(stages: string[], cfg: ReturnType<typeof config>) {
  const pipeline: Pipeline = { name: 'eval-test', description: 'test', stages };
  return runPipeline({
    pipeline,
    registry,
    config: cfg,
    configFile: join(root, 'config.yaml'),
    stateDir: state.dir,
    store: state.store,
    blobs: state.blobs,
    bus: new EventBus(),
    signal: new AbortController().signal,
  });
}

function reportCtx(cfg: ReturnType<typeof config>): StageContext<never> {
  const memo = new Map<string, unknown>();
  return {
    config: cfg as never,
    configFile: join(root, 'config.yaml'),
    stateDir: state.dir,
    runId: 'report',
    store: storeReader(
      state.store,
      (s) => (registry.get(s) as unknown as { version: number } | undefined)?.version ?? -1,
    ),
    kv: state.store,
    blobs: state.blobs,
    signal: new AbortController().signal,
    emit: () => undefined,
    log: () => undefined,
    memo: <T>(k: string, make: () => T): T => {
      if (!memo.has(k)) memo.set(k, make());
      return memo.get(k) as T;
    },
  };
}

beforeAll(async () => {
  await ensureTestBase(new DockerClient());
  root = mkdtempSync(join(tmpdir(), 'telebench-swe5g-eval-'));
  state = openState(join(root, 'state'));
  fx = buildFixture(join(root, 'src'), {
    owner: 'fixture',
    name: 'amftwo',
    language: 'go',
    pr: 7,
    base: {
      'go.mod': `module ${MODULE}\n\ngo 1.21\n`,
      'ngap/types.go': types,
      'ngap/handler.go': handler([false, false]),
      'ngap/handler_test.go': existingTest,
    },
    fix: { 'ngap/handler.go': handler([true, true]) },
    f2pFiles: { 'ngap/handler_nil_test.go': f2pTest },
    FAIL_TO_PASS: F2P,
  });
  fx.candidate.problem_statement =
    'AMF panics with a nil pointer dereference when a RAN node sends a request whose GlobalRANNodeID carries no gNB id (GNbId is nil). The NGAP handlers must reject such requests with ErrMissingGNbID instead of crashing.';
  server = await startLlmServer({
    models: MODELS.map((name, i) => ({ name, digest: `${i}`.padStart(64, '0') })),
    fallback: reply,
  });
});
afterAll(async () => {
  await server?.close();
  state?.close();
});

const solveOf = (model: string, mode: string): SolveOutput =>
  state.store.item('swe5g.eval.solve', `${model}::${mode}::none::${ID}`)!.output as SolveOutput;
const gradeOf = (key: string): GradeOutput =>
  state.store.item('swe5g.eval.grade', key)!.output as GradeOutput;

describe('swe5g-eval on a test-built repository with scripted models', () => {
  it('validates the instance, then solves, applies, grades each scripted behaviour', async () => {
    const v = await run(
      ['swe5g.filter', 'swe5g.resolve', 'swe5g.testgen', 'swe5g.build', 'swe5g.validate'],
      config([], ['single']),
    );
    expect(v.exitCode).toBe(0);
    expect(state.store.item('swe5g.validate', ID)?.state).toBe('done');

    // one configuration for every model (items a run does not plan are orphaned by the runner);
    // m-twosite runs single- and multi-turn
    const single = config(MODELS, ['single']);
    const r1 = await run(
      ['swe5g.eval.skills', 'swe5g.eval.solve', 'swe5g.eval.grade', 'swe5g.eval.predictions'],
      single,
    );
    expect(r1.exitCode).toBe(0);

    // correct fix: exact rule, resolved
    const correct = solveOf('m-correct', 'single');
    expect(correct.turns[0]!.edits.map((e) => e.rule)).toEqual(['exact', 'exact']);
    expect(correct.context.chunks.map((c) => c.path)).toContain('ngap/handler.go');
    expect(gradeOf(`m-correct::single::none::${ID}`).resolved).toBe(true);
    // wrong indentation (spaces for tabs): the whitespace rule, re-indented, resolved
    const indent = solveOf('m-indent', 'single');
    expect(indent.turns[0]!.edits.map((e) => e.rule)).toEqual(['whitespace', 'whitespace']);
    expect(indent.model_patch).toContain('+\tif req.GlobalRANNodeID == nil');
    expect(gradeOf(`m-indent::single::none::${ID}`).resolved).toBe(true);
    // ambiguous SEARCH block: not applied, nothing written
    const amb = solveOf('m-ambiguous', 'single');
    expect(amb.turns[0]!.edits[0]).toMatchObject({ applied: false, reason: 'ambiguous' });
    expect(amb.model_patch).toBe('');
    expect(gradeOf(`m-ambiguous::single::none::${ID}`).resolved).toBe(false);
    // malformed block
    const mal = solveOf('m-malformed', 'single');
    expect(mal.turns[0]!.edits[0]).toMatchObject({ applied: false, reason: 'malformed' });
    // a patch that writes the hidden test file: put back, graded against the real tests
    const te = gradeOf(`m-testedit::single::none::${ID}`);
    expect(solveOf('m-testedit', 'single').model_patch).toContain('b/ngap/handler_nil_test.go');
    expect(te.patch_applied).toBe(true);
    expect(te.touched_test_files).toEqual(['ngap/handler_nil_test.go']);
    expect(te.resolved).toBe(false);
    expect(Object.values(te.FAIL_TO_PASS)).toEqual(['fail', 'fail']);
  });

  it('multi-turn: a fix missing the second site is completed in turn 2 from the fed-back test output', async () => {
    const single = gradeOf(`m-twosite::single::none::${ID}`);
    expect(single.resolved).toBe(false);
    expect(single.FAIL_TO_PASS[F2P[0]!]).toBe('fail');
    expect(single.FAIL_TO_PASS[F2P[1]!]).toBe('pass');
    const multi = solveOf('m-twosite', 'multi');
    expect(multi.turns).toHaveLength(2);
    expect(multi.turns[0]!.run).toMatchObject({ resolved: false, failing: [F2P[0]] });
    expect(multi.stop).toBe('tests_pass');
    expect(multi.feedback_level).toBe('full');
    expect(gradeOf(`m-twosite::multi::none::${ID}`).resolved).toBe(true);
    // the second request carried the failing test's name and output, never the test source
    const turn2 = server
      .chatRequests()
      .map((r) => r.body as { model: string; messages: { content: string }[] })
      .find((b) => b.model === 'm-twosite' && b.messages.length === 4)!;
    const fb = turn2.messages[3]!.content;
    expect(fb).toContain('TestConfigUpdateNilGNbId');
    expect(fb).toContain('nil pointer dereference');
    expect(JSON.stringify(turn2.messages)).not.toContain('func call(f func(*Request)');
  });

  it('grades SWE-bench predictions: gold resolves, empty does not, the exported file grades like the solver', async () => {
    const exported = join(predictionsDir(state.dir), 'm-correct.single.none.jsonl');
    expect(existsSync(exported)).toBe(true);
    const row = JSON.parse(readFileSync(exported, 'utf8').trim()) as { model_patch: string };
    const file = join(root, 'preds.jsonl');
    writeFileSync(
      file,
      [
        {
          instance_id: ID,
          model_name_or_path: 'gold',
          model_patch:
            fx.candidate &&
            (state.store.item('swe5g.validate', ID)!.output as { patch: string }).patch,
        },
        { instance_id: ID, model_name_or_path: 'empty', model_patch: '' },
        { instance_id: ID, model_name_or_path: 'from-file', model_patch: row.model_patch },
        { instance_id: 'fixture__nope-1', model_name_or_path: 'gold', model_patch: '' },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n{"instance_id": 3}\n',
    );
    process.env[PREDICTIONS_ENV] = file;
    try {
      const r = await run(['swe5g.eval.grade'], config([], ['single']));
      expect(r.exitCode).toBe(0);
    } finally {
      delete process.env[PREDICTIONS_ENV];
    }
    const digest = readPredictions(file).digest;
    expect(gradeOf(externalKey(digest, 'gold', ID)).resolved).toBe(true);
    expect(gradeOf(externalKey(digest, 'empty', ID)).resolved).toBe(false);
    const fromFile = gradeOf(externalKey(digest, 'from-file', ID));
    const solver = gradeOf(`m-correct::single::none::${ID}`);
    expect(fromFile.resolved).toBe(solver.resolved);
    expect(fromFile.FAIL_TO_PASS).toEqual(solver.FAIL_TO_PASS);
    expect(fromFile.PASS_TO_PASS).toEqual(solver.PASS_TO_PASS);
    expect(
      state.store.item('swe5g.eval.grade', externalKey(digest, 'gold', 'fixture__nope-1'))
        ?.skipReason,
    ).toBe('unknown_instance');
    const bad = state.store.item(
      'swe5g.eval.grade',
      `external::${digest.slice(0, 12)}::invalid::line-5`,
    );
    expect(bad?.skipReason).toBe('invalid_prediction');
  });

  it('reports the funnel and failure stages as counted by hand, with an HTML funnel figure', async () => {
    const cfg = config(MODELS, ['single']);
    const ctx = reportCtx(cfg);
    const sums = new Map(summarize(collectAttempts(ctx as never)).map((s) => [s.run, s]));
    const row = (run: string) => {
      const s = sums.get(run)!;
      return [
        s.attempted,
        s.diagnosed,
        s.applied,
        s.resolved,
        s.stages.format,
        s.stages.apply,
        s.stages.compile,
        s.stages.incomplete,
      ];
    };
    // attempted, diagnosed, applied, resolved | format, apply, compile, incomplete
    expect(row('m-correct single')).toEqual([1, 1, 1, 1, 0, 0, 0, 0]);
    expect(row('m-indent single')).toEqual([1, 1, 1, 1, 0, 0, 0, 0]);
    // a SEARCH that matches two places is the paper's "patch format error" (Table V)
    expect(row('m-ambiguous single')).toEqual([1, 1, 0, 0, 1, 0, 0, 0]);
    expect(row('m-malformed single')).toEqual([1, 1, 0, 0, 1, 0, 0, 0]);
    expect(row('m-testedit single')).toEqual([1, 0, 1, 0, 0, 0, 0, 1]);
    expect(row('m-twosite single')).toEqual([1, 1, 1, 0, 0, 0, 0, 1]);
    expect(row('m-twosite multi')).toEqual([1, 1, 1, 1, 0, 0, 0, 0]);
    const tag = `preds.jsonl@${readPredictions(join(root, 'preds.jsonl')).digest.slice(0, 8)}`;
    expect(row(`gold (${tag})`)).toEqual([1, 1, 1, 1, 0, 0, 0, 0]);
    expect(row(`empty (${tag})`)).toEqual([1, 0, 0, 0, 1, 0, 0, 0]);
    const md = await swe5gEvalMarkdown(ctx as never);
    expect(md).toContain('| m-twosite multi | 1 | 0 | 1 (100.0%) | 1 (100.0%) | 1 | 100.0% |');
    const html = join(state.dir, 'swe5g-eval', 'report.html');
    const page = await checkPage(html);
    expect(page.consoleErrors).toEqual([]);
    expect(page.textLength).toBeGreaterThan(200);
    // three bars (diagnosed, applied, resolved) per run
    expect(page.figures.funnel!.marks).toBe(3 * sums.size);
  });

  it('--after DATE: the report scores only instances dated after the cutoff and says so', async () => {
    // the fixture's PR was created 2024-05-01T10:00:00Z and has no issue: that is its date
    const cfg = config(MODELS, ['single']);
    try {
      process.env[AFTER_ENV] = '2024-04-30';
      const kept = await swe5gEvalMarkdown(reportCtx(cfg) as never);
      expect(kept).toContain(
        'Window: instances dated after 2024-04-30 (instance date from 2024-05-01T00:00:00Z: the earlier of issue and PR creation); kept 1 of 1.',
      );
      expect(kept).toContain('| m-twosite multi | 1 | 0 | 1 (100.0%) | 1 (100.0%) | 1 | 100.0% |');
      // the cutoff day itself is excluded: a model trained to the end of 2024-05-01 saw the PR
      process.env[AFTER_ENV] = '2024-05-01';
      const none = await swe5gEvalMarkdown(reportCtx(cfg) as never);
      expect(none).toContain('kept 0 of 1 (left out: 1 dated at or before it).');
      expect(none).toContain('Nothing graded yet');
      // the reason is the window, not a solve that never ran
      expect(none).toContain(
        'Nothing in the date window: Window: instances dated after 2024-05-01',
      );
      expect(none).not.toContain('no solve has run yet');
      expect(none).not.toContain('m-twosite multi');
      // the same instant with a zone: 2024-05-01T12:00+02:00 is 10:00Z, so the PR is not after it
      process.env[AFTER_ENV] = '2024-05-01T12:00+02:00';
      expect(await swe5gEvalMarkdown(reportCtx(cfg) as never)).toContain('kept 0 of 1');
      process.env[AFTER_ENV] = '2024-05-01T11:59+02:00';
      expect(await swe5gEvalMarkdown(reportCtx(cfg) as never)).toContain('kept 1 of 1');
    } finally {
      delete process.env[AFTER_ENV];
    }
  });

  it('--after DATE with a predictions file: the tally names the rows the window left out, not "not graded yet"', async () => {
    const file = join(root, 'preds-window.jsonl');
    writeFileSync(
      file,
      [
        { instance_id: ID, model_name_or_path: 'late-model', model_patch: '' },
        { instance_id: 'fixture__nope-2', model_name_or_path: 'late-model', model_patch: '' },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n',
    );
    process.env[PREDICTIONS_ENV] = file;
    process.env[AFTER_ENV] = '2024-05-01';
    try {
      const r = await run(['swe5g.eval.grade'], config([], ['single']));
      expect(r.exitCode).toBe(0);
    } finally {
      delete process.env[PREDICTIONS_ENV];
      delete process.env[AFTER_ENV];
    }
    const read = readPredictions(file);
    const t = fileTally(state.dir, file, read);
    // the validated instance is outside the window: not graded, and said so; the unknown id is
    // still an unknown instance (a window never hides a wrong id)
    expect(t).toMatchObject({ rows: 2, graded: 0, outside: 1, pending: 0 });
    expect(t.skipped).toEqual({ unknown_instance: 1 });
    expect(state.store.item('swe5g.eval.grade', externalKey(read.digest, 'late-model', ID))).toBe(
      undefined,
    );
    const line = tallyLine(t);
    expect(line).toContain('1 outside the date window (--after), not graded');
    expect(line).not.toContain('not graded yet');

    // graded once without the window (an empty patch: no container), then the window again:
    // the row counts as outside, not as the earlier run's verdict
    const grade = async (after?: string) => {
      process.env[PREDICTIONS_ENV] = file;
      if (after) process.env[AFTER_ENV] = after;
      try {
        expect((await run(['swe5g.eval.grade'], config([], ['single']))).exitCode).toBe(0);
      } finally {
        delete process.env[PREDICTIONS_ENV];
        delete process.env[AFTER_ENV];
      }
      return fileTally(state.dir, file, read);
    };
    expect(await grade()).toMatchObject({ graded: 1, unresolved: 1, outside: 0 });
    const again = await grade('2024-05-01');
    expect(again).toMatchObject({ graded: 0, resolved: 0, unresolved: 0, outside: 1, pending: 0 });
    expect(tallyLine(again)).toContain('; no row of this file was graded');
  });
});
