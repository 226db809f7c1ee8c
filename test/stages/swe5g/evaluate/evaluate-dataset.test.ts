/**
 * `telebench evaluate --dataset PATH --predictions FILE` on bad input, through the CLI with a
 * fresh state folder (no state of the build): every bad row of the dataset is named with
 * `file:line` and the field before anything runs (exit 2, no stack trace, nothing graded); an
 * instance_id given twice names both lines; a release folder is read through its manifest and a
 * folder without one through its `*.jsonl` files; a row without `image_name` is refused naming
 * it; a prediction for an instance the dataset lacks is skipped naming the predictions file's
 * line and the field, and the file counts as not graded (exit 1). The graded case (images pulled
 * by image_name from Debian's docker-registry) is in mini-swe-agent.test.ts.
 *
 * Then, in the real Docker engine, a C (meson) instance whose registry entry keeps a meson build
 * (test/fixtures/repos/c-null.ts, `cKeptEntry`), validated by the real stages: `telebench
 * evaluate` grades its gold patch resolved and an empty patch not, in the step validation's fix
 * run took (the same meson step command, never a full `meson setup`), from the state and from its
 * rows (`--dataset`, a fresh state); both reports show the same funnel, failure stages and
 * categories (issue 30).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { swe5gRowOf } from '../../../../stages/swe5g/dataset.js';
import { readDatasetRows } from '../../../../stages/swe5g/evaluate/dataset.js';
import { ConfigError } from '../../../../pipeline/errors.js';
import { ROOT, runCli } from '../../../fixtures/cli.js';
import { validated } from '../../release/rows.js';
import { runPipeline } from '../../../../pipeline/runner.js';
import { openState } from '../../../../pipeline/state.js';
import { EventBus } from '../../../../pipeline/events.js';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { swe5gConfigSchema } from '../../../../stages/swe5g/config.js';
import { resolveStage } from '../../../../stages/swe5g/resolve/resolve.js';
import { buildStage } from '../../../../stages/swe5g/build/build.js';
import { validateStage, type Validated } from '../../../../stages/swe5g/validate/validate.js';
import type { GradeOutput } from '../../../../stages/swe5g/evaluate/stages.js';
import { readStepLog } from '../../../../stages/swe5g/harness/step-log.js';
import { cFixture, cKeptEntry, C_F2P } from '../../../fixtures/repos/c-null.js';
import type { Fixture } from '../../../fixtures/repos/builder.js';
import { ensureTestBase } from '../../../fixtures/repos/harness.js';
import { standInStages } from '../../../fixtures/swe5g-stand-ins.js';

let root: string;
const row = (pr: number, over: Record<string, unknown> = {}): Record<string, unknown> => ({
  ...swe5gRowOf(validated('free5gc/amf', pr), 'api')!,
  image_name: `127.0.0.1:5000/telebench-instance:x@sha256:${'b'.repeat(64)}`,
  ...over,
});
const jsonl = (rows: unknown[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-eval-dataset-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `telebench evaluate --dataset <dataset> --predictions <preds>` in a fresh state folder. */
function evaluate(dataset: string, preds: string, env: Record<string, string> = {}) {
  return runCli(
    [
      '--state',
      mkdtempSync(join(root, 'state-')),
      'evaluate',
      '--dataset',
      dataset,
      '--predictions',
      preds,
    ],
    env,
  );
}

describe('evaluate --dataset on bad input', () => {
  it('names every bad row with file:line and the field, before anything runs (exit 2)', async () => {
    const file = join(root, 'bad.jsonl');
    writeFileSync(
      file,
      jsonl([
        row(1),
        row(2, { base_commit: 'abc' }),
        row(3, { FAIL_TO_PASS: [] }),
        { ...row(4), surprise: 1 },
        row(1),
      ]) + '{not json\n',
    );
    const preds = join(root, 'preds.jsonl');
    writeFileSync(
      preds,
      jsonl([{ instance_id: 'free5gc__amf-1', model_name_or_path: 'm', model_patch: '' }]),
    );
    const r = await evaluate(file, preds);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${file}:2: field base_commit: base_commit must be a 40-hex`);
    expect(r.stderr).toContain(`${file}:3: field FAIL_TO_PASS: FAIL_TO_PASS is empty`);
    expect(r.stderr).toContain(`${file}:4: field surprise:`);
    expect(r.stderr).toContain(
      `${file}:5: field instance_id: free5gc__amf-1 is given twice (also ${file}:1)`,
    );
    expect(r.stderr).toContain(`${file}:6: not JSON`);
    expect(r.stderr).not.toMatch(/\n\s+at .+\.(ts|js):\d+/); // no stack trace
    expect(r.stderr).not.toContain('swe5g.eval.grade');
  });

  it('reads a release folder by its manifest, a plain folder by its .jsonl files', () => {
    const rel = join(root, 'release');
    mkdirSync(join(rel, 'data'), { recursive: true });
    writeFileSync(join(rel, 'data', 'test.jsonl'), jsonl([row(7), row(8)]));
    writeFileSync(join(rel, 'data', 'stray.jsonl'), jsonl([row(9)]));
    writeFileSync(
      join(rel, 'manifest.json'),
      JSON.stringify({ files: { 'data/test.jsonl': {}, 'README.md': {} } }),
    );
    expect(readDatasetRows(rel).map((d) => [d.row.instance_id, d.line])).toEqual([
      ['free5gc__amf-7', 1],
      ['free5gc__amf-8', 2],
    ]);
    rmSync(join(rel, 'manifest.json'));
    expect(readDatasetRows(rel).map((d) => d.row.instance_id)).toEqual([
      'free5gc__amf-9',
      'free5gc__amf-7',
      'free5gc__amf-8',
    ]);
    const empty = join(root, 'empty');
    mkdirSync(empty);
    expect(() => readDatasetRows(empty)).toThrow(ConfigError);
    expect(() => readDatasetRows(join(root, 'nowhere'))).toThrow(/--dataset: not found/);
  });

  it('refuses a row without image_name, naming file:line and the field', async () => {
    const file = join(root, 'noimage.jsonl');
    writeFileSync(file, jsonl([row(11), row(12, { image_name: '' })]));
    const preds = join(root, 'p-noimage.jsonl');
    writeFileSync(
      preds,
      jsonl([{ instance_id: 'free5gc__amf-11', model_name_or_path: 'm', model_patch: '' }]),
    );
    const r = await evaluate(file, preds);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}:2: field image_name: empty`);
    // what does grade it, and never the executor that cannot (the message that looped, issue msgs)
    expect(r.stderr).toContain(
      'grade it from the state it was made in (`telebench evaluate` without --dataset',
    );
    expect(r.stderr).toContain('executor: docker and `--push`');
    expect(r.stderr).not.toContain('executor: local');
  });

  it('refuses --dataset under the local executor once, before any item runs (exit 2, no resume hint)', async () => {
    // a release made with the local executor: no image_name; the other row has one (the executor
    // alone is refused, whatever the rows)
    const file = join(root, 'local.jsonl');
    writeFileSync(file, jsonl([row(13, { image_name: '' }), row(14)]));
    const preds = join(root, 'p-local.jsonl');
    writeFileSync(
      preds,
      jsonl(
        [13, 14].map((n) => ({
          instance_id: `free5gc__amf-${n}`,
          model_name_or_path: 'm',
          model_patch: '',
        })),
      ),
    );
    const config = join(root, 'local.yaml');
    writeFileSync(
      config,
      `version: 1\nswe5g:\n  registry: ${join(ROOT, 'config', 'repos.yaml')}\n  environments:\n    executor: local\n`,
    );
    const state = mkdtempSync(join(root, 'state-'));
    const args = ['--state', state, 'evaluate', '--dataset', file, '--predictions', preds];
    const r = await runCli([...args, '--config', config]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      'evaluate --dataset grades released rows in their instance images, which swe5g.environments.executor: local does not use',
    );
    expect(r.stderr).toContain('grade it from the state it was made in');
    expect(r.stderr).not.toContain('config_invalid');
    expect(r.stderr).not.toContain('--retry-failed');
    expect(r.stderr).not.toContain('set swe5g.environments.executor to docker');
    // nothing was graded: no failed item in the state
    const items = await runCli(['--state', state, 'status', 'swe5g-evaluate', '--config', config]);
    expect(items.stdout).not.toMatch(/failed\s+[1-9]/);
  });

  it('a prediction for an instance the dataset lacks is skipped naming its line and the field (exit 1)', async () => {
    const file = join(root, 'one.jsonl');
    writeFileSync(file, jsonl([row(21)]));
    const preds = join(root, 'p-unknown.jsonl');
    writeFileSync(
      preds,
      jsonl([{ instance_id: 'free5gc__amf-99', model_name_or_path: 'm', model_patch: 'x' }]),
    );
    const r = await evaluate(file, preds);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr + r.stdout).toContain(
      `${preds} line 1: field instance_id: free5gc__amf-99 is not a row of the dataset ${file}`,
    );
    expect(r.stderr).toMatch(/evaluate: .*0 resolved, 0 not resolved/);
  });
});

describe('evaluate on a C (meson) instance with a kept build: the state and its rows', () => {
  const ID = 'fixture__cnull-58';
  let fx: Fixture;
  let dir: string;
  let configFile: string;
  let v: Validated;
  const [filter, testgen] = standInStages(() => [fx]);
  const stages = new Map<string, never>(
    [filter, resolveStage, testgen, buildStage, validateStage].map((x) => [x.name, x as never]),
  );
  /** The Markdown tables a reader compares: funnel, failure stages, categories. */
  const tables = (md: string): string =>
    md
      .split('\n### ')
      .filter((t) => /^(Funnel|Failure stage|Resolve rate by bug category)/.test(t))
      .join('\n### ');

  beforeAll(async () => {
    await ensureTestBase(new DockerClient());
    dir = mkdtempSync(join(root, 'c-kept-'));
    fx = cFixture(join(dir, 'src'));
    fx.candidate.problem_statement =
      'ngap_gnb_id dereferences a NULL gNB id: an NG Setup Request without one crashes the parser.';
    const registry = join(dir, 'repos.yaml');
    writeFileSync(registry, JSON.stringify({ version: 1, repositories: [cKeptEntry()] }));
    configFile = join(dir, 'config.yaml');
    const env = {
      git_url_base: join(dir, 'src'),
      base_source: 'offline',
      limits: { timeout_s: 900, memory_mib: 1024 },
      fix_runs: 1,
      test_repeats: 1,
      parent_reruns: 1,
    };
    writeFileSync(
      configFile,
      JSON.stringify({ version: 1, swe5g: { registry, environments: env } }),
    );
    const state = openState(join(dir, 'state'));
    try {
      const r = await runPipeline({
        pipeline: {
          name: 'c-kept',
          description: 'fixture -> validated',
          stages: [...stages.keys()],
        },
        registry: stages,
        config: {
          version: 1,
          stages: {},
          swe5g: swe5gConfigSchema.parse({ registry, environments: env }),
        },
        configFile,
        stateDir: state.dir,
        store: state.store,
        blobs: state.blobs,
        bus: new EventBus(),
        signal: new AbortController().signal,
      });
      expect(r.exitCode).toBe(0);
      const item = state.store.item('swe5g.validate', ID);
      expect(item?.state, JSON.stringify(item?.error ?? item?.skipDetail)).toBe('done');
      v = item!.output as Validated;
    } finally {
      state.close();
    }
    expect(v.FAIL_TO_PASS).toEqual([C_F2P]);
    writeFileSync(
      join(dir, 'preds.jsonl'),
      jsonl([
        { instance_id: ID, model_name_or_path: 'gold', model_patch: v.patch },
        { instance_id: ID, model_name_or_path: 'empty', model_patch: '' },
      ]),
    );
  }, 3_600_000);

  /** `telebench evaluate` of the two predictions on `state` (with `--dataset` when given). */
  const grade = async (state: string, dataset?: string) => {
    const r = await runCli([
      '--state',
      state,
      'evaluate',
      ...(dataset ? ['--dataset', dataset] : []),
      '--predictions',
      join(dir, 'preds.jsonl'),
      '--config',
      configFile,
    ]);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.stderr).toMatch(/evaluate: .*2 rows of this file — 1 resolved, 1 not resolved/);
    const st = openState(state, { mode: 'read' });
    try {
      const grades = new Map(
        [...st.store.items('swe5g.eval.grade')].map((i) => {
          const g = i.output as GradeOutput;
          return [g.model_name_or_path, g] as const;
        }),
      );
      const gold = grades.get('gold')!;
      return {
        md: r.stdout,
        gold,
        empty: grades.get('empty')!,
        command: readStepLog(st.blobs.getText(gold.log)).command,
      };
    } finally {
      st.close();
    }
  };

  it("gold resolved and empty not, from the state and from its rows, in validation's fix step; both reports agree", async () => {
    const fromState = await grade(join(dir, 'state'));
    expect(fromState.gold).toMatchObject({ resolved: true, patch_method: 'git apply --verbose' });
    expect(fromState.gold.FAIL_TO_PASS).toEqual({ [C_F2P]: 'pass' });
    expect(fromState.empty).toMatchObject({ resolved: false, patch_method: 'empty' });
    // the step validation's fix run took: the kept build's meson step, the same command
    const st = openState(join(dir, 'state'), { mode: 'read' });
    const fixCommand = readStepLog(st.blobs.getText(v.step_logs.fix_1!)).command;
    st.close();
    expect(fromState.command).toContain('/opt/telebench/meson_step.py');
    expect(fromState.command).not.toContain('meson setup');
    expect(fromState.command).toBe(fixCommand);

    // the same instance as a released row, graded in a fresh state from the rows alone
    const rows = join(dir, 'rows.jsonl');
    writeFileSync(rows, jsonl([swe5gRowOf(v, 'git')]));
    const fresh = join(dir, 'fresh');
    const fromRows = await grade(fresh, rows);
    expect(fromRows.gold).toMatchObject({ resolved: true });
    expect(fromRows.empty).toMatchObject({ resolved: false });
    expect(fromRows.command).toBe(fixCommand);
    // the image's kept build is not copied out with its tree
    expect(existsSync(join(fresh, 'swe5g-eval', 'testbeds', ID, 'src', 'ngap.c'))).toBe(true);
    expect(existsSync(join(fresh, 'swe5g-eval', 'testbeds', ID, '.telebench'))).toBe(false);
    // the same funnel (diagnosed 1 for gold, not 0), failure stages and category (not `other`)
    expect(tables(fromRows.md)).toBe(tables(fromState.md));
    expect(tables(fromRows.md)).toMatch(
      /\| gold \(preds\.jsonl@\w+\) \| 1 \| 0 \| 1 \(100\.0%\) \| 1 \(100\.0%\) \| 1 \|/,
    );
    expect(tables(fromRows.md)).toContain('| run | nil_pointer | average |');
  }, 3_600_000);
});
