/**
 * `telebench report swe5g-eval` on states where nothing is graded: the report says why (no
 * instances, validated by an older stage version, no problem statement, no targets, nothing
 * finished with the first failure) instead of printing empty tables. Real SQLite state and the real
 * runner; the upstream stages are stand-ins that write `swe5g.validate` records of chosen versions.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { runStages } from '../../../fixtures/run-stages.js';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openState, type OpenState } from '../../../../pipeline/state.js';
import { defineStage, type StageContext } from '../../../../pipeline/stage.js';
import { TelebenchError } from '../../../../pipeline/errors.js';
import { swe5gConfigSchema } from '../../../../stages/swe5g/config.js';
import { validateStage } from '../../../../stages/swe5g/validate/validate.js';
import { swe5gEvalMarkdown, whyNothingGraded } from '../../../../stages/swe5g/evaluate/report.js';
import { storeReader } from '../../../../pipeline/runner.js';

const states: OpenState[] = [];
afterAll(() => states.forEach((s) => s.close()));

/** A stand-in `swe5g.validate` of a given version whose one output has the given fields. */
const validateStub = (version: number, fields: { incomplete: boolean; problem: string }) =>
  defineStage<unknown, unknown, unknown>({
    name: 'swe5g.validate',
    version,
    needs: [],
    description: 'stand-in',
    *plan() {
      // the shape of a real validate input, as far as the evaluation's instance list reads it
      yield {
        key: 'fixture__amf-1',
        input: {
          resolved: { registry_id: 'fixture/amf', test_patch: '', issues: [], merged_at: '' },
          testgen: { f2p_test_patch: '' },
          built: { module_dir: '', source_dir: '' },
        },
      };
    },
    run: async (item) => ({
      instance_id: item.key,
      repo: 'fixture/amf',
      base_commit: 'abc',
      created_at: '2024-01-01T00:00:00Z',
      incomplete: fields.incomplete,
      problem_statement: fields.problem,
      bug_category: 'nil_pointer',
      patch: '',
      image_recipe: 'go',
      images: { instance: 'telebench-instance:fixture' },
      FAIL_TO_PASS: [],
      PASS_TO_PASS: [],
    }),
  });
/** A stand-in solve stage whose item fails. */
const failingSolve = defineStage<unknown, unknown, unknown>({
  name: 'swe5g.eval.solve',
  version: 1,
  needs: ['swe5g.validate'],
  description: 'stand-in',
  *plan() {
    yield { key: 'm::single::none::fixture__amf-1', input: 'x' };
  },
  run: async () => {
    throw new TelebenchError('llm_unreachable', 'model server at 127.0.0.1:9 refused', {
      tier: 'transient',
    });
  },
});

const config = (models: string[]) => ({
  version: 1,
  stages: {},
  swe5g: swe5gConfigSchema.parse({
    evaluation: {
      models: models.map((name) => ({
        name,
        llm: { endpoints: [{ kind: 'ollama', base_url: 'http://127.0.0.1:9' }] },
      })),
    },
  }),
});

async function setup(
  stages: ReturnType<typeof defineStage<unknown, unknown, unknown>>[],
  models: string[],
): Promise<StageContext<never>> {
  const root = mkdtempSync(join(tmpdir(), 'telebench-eval-empty-'));
  const state = openState(join(root, 'state'));
  states.push(state);
  const registry = new Map(stages.map((s) => [s.name, s as never]));
  const cfg = config(models);
  if (stages.length)
    await runStages(state, { registry, stages: stages.map((s) => s.name), config: cfg, root });
  return {
    config: cfg as never,
    configFile: join(root, 'config.yaml'),
    stateDir: state.dir,
    runId: 'report',
    // the report reads outputs at the stages' real versions, as `telebench report` does
    store: storeReader(state.store, (s) => (s === 'swe5g.validate' ? validateStage.version : 1)),
    kv: state.store,
    blobs: state.blobs,
    signal: new AbortController().signal,
    emit: () => undefined,
    log: () => undefined,
    memo: <T>(_k: string, make: () => T): T => make(),
  };
}

const problem = 'AMF panics on a nil GNbId in an NG Setup Request.';

describe('report swe5g-eval with nothing graded says why', () => {
  it('no instances at all', async () => {
    const ctx = await setup([], ['m']);
    const md = await swe5gEvalMarkdown(ctx as never);
    expect(md).toContain('Nothing graded yet');
    expect(md).toContain('No instances: this state has no validated');
    expect(md).not.toContain('| run |');
    const html = readFileSync(join(ctx.stateDir, 'swe5g-eval', 'report.html'), 'utf8');
    expect(html).toContain('No instances');
  });

  it('instances validated by an older stage version', async () => {
    const ctx = await setup(
      [validateStub(validateStage.version - 1, { incomplete: false, problem })],
      ['m'],
    );
    const why = whyNothingGraded(ctx as never).join(' ');
    expect(why).toContain(
      `1 were validated by an older version of the stage (stored v${validateStage.version - 1}, current v${validateStage.version})`,
    );
  });

  it('validated instances without a problem statement', async () => {
    const ctx = await setup(
      [validateStub(validateStage.version, { incomplete: true, problem: '' })],
      ['m'],
    );
    const why = whyNothingGraded(ctx as never).join(' ');
    expect(why).toContain('1 validated without a problem statement');
    expect(why).toContain('--issues-from');
  });

  it('no targets: no model and no predictions file', async () => {
    const ctx = await setup(
      [validateStub(validateStage.version, { incomplete: false, problem })],
      [],
    );
    const md = await swe5gEvalMarkdown(ctx as never);
    expect(md).toContain('No targets: 1 complete instance(s)');
    expect(md).toContain('`swe5g.evaluation.models` is empty');
  });

  it('nothing finished: no solve yet, then a failed solve named with its error', async () => {
    const ctx = await setup(
      [validateStub(validateStage.version, { incomplete: false, problem })],
      ['m'],
    );
    expect(whyNothingGraded(ctx as never).join(' ')).toContain('no solve has run yet');
    const failed = await setup(
      [validateStub(validateStage.version, { incomplete: false, problem }), failingSolve],
      ['m'],
    );
    const why = whyNothingGraded(failed as never).join(' ');
    expect(why).toContain('Nothing finished: 1 complete instance(s); solves 1 failed');
    expect(why).toContain(
      'first failure: swe5g.eval.solve m::single::none::fixture__amf-1: model server at 127.0.0.1:9 refused',
    );
  });
});
