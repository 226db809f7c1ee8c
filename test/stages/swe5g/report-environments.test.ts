/**
 * Environments by project and year (`stages/swe5g/report-environments.ts`) over a real SQLite
 * store: which candidates count (testgen done on a resolve output), the UTC year of the base
 * commit, the outcome of each build record (done, failed in the env or the instance layer,
 * skipped for an environment reason or not, pending), the 90% goal flipping, and the section
 * `telebench plan` prints. The CLI over a real git mirror: report-environments-cli.test.ts.
 */
import { describe, it, expect, afterEach } from 'vitest';
import { rmSync } from 'node:fs';
import {
  environmentReport,
  environmentReportMarkdown,
  type EnvironmentRow,
} from '../../../stages/swe5g/report-environments.js';
import { envOutcome } from '../../../stages/swe5g/build/env-outcome.js';
import { planMarkdown } from '../../../stages/swe5g/plan/render.js';
import {
  done,
  failed,
  reader,
  skipped,
  storeWith as storeIn,
  type Cand,
  type End,
} from '../../fixtures/swe5g-build-records.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
const storeWith = (cands: Cand[]) => storeIn(cands, dirs);

/** Base commit dates as git's `%cI` gives them (any offset). */
const DATES = new Map([
  ['b-a', '2021-01-01T03:00:00+08:00'], // 2020-12-31T19:00Z: UTC year 2020, local year 2021
  ['b-b', '2020-06-01T00:00:00Z'],
  ['b-c', '2021-05-05T10:00:00Z'],
  ['b-d', '2021-07-01T00:00:00Z'],
  ['b-e', '2021-12-31T23:30:00-02:00'], // 2022-01-01T01:30Z: UTC year 2022
  ['b-f', '2022-02-01T00:00:00Z'],
  ['b-g', '2022-03-01T00:00:00Z'],
  ['b-h', '2022-04-01T00:00:00Z'],
  ['b-i', '2022-05-01T00:00:00Z'],
  ['b-j', '2022-06-01T00:00:00Z'],
  ...Array.from({ length: 10 }, (_, i) => [`o-${i}`, `202${1 + (i % 2)}-03-1${i}T00:00:00Z`]),
] as [string, string][]);

/** free5gc: every kind of outcome over 2020..2022; open5gs: 9 built, 1 env failed (90%). */
const CANDS: Cand[] = [
  { key: 'free5gc__amf-1', repo: 'free5gc/amf', base: 'b-a', build: done },
  {
    key: 'free5gc__amf-2',
    repo: 'free5gc/amf',
    base: 'b-b',
    build: failed('image_build_failed', { image: 'telebench-env:0123456789abcdef' }),
  },
  { key: 'free5gc__smf-3', repo: 'free5gc/smf', base: 'b-c', build: done },
  { key: 'free5gc__smf-4', repo: 'free5gc/smf', base: 'b-d', build: skipped('toolchain_mismatch') },
  // the run's disk budget: nothing about this history's environment
  {
    key: 'free5gc__smf-5',
    repo: 'free5gc/smf',
    base: 'b-e',
    build: failed('disk_budget_exceeded'),
  },
  {
    key: 'free5gc__pcf-6',
    repo: 'free5gc/pcf',
    base: 'b-f',
    build: failed('image_build_failed', { image: 'telebench-instance:fedcba9876543210' }),
  },
  { key: 'free5gc__pcf-7', repo: 'free5gc/pcf', base: 'b-g', build: { state: 'planned' } },
  { key: 'free5gc__pcf-8', repo: 'free5gc/pcf', base: 'b-h' }, // testgen done, build not planned
  // skipped, but for the instance layer's image contract: not an environment failure
  {
    key: 'free5gc__pcf-9',
    repo: 'free5gc/pcf',
    base: 'b-i',
    build: skipped('image_contract_failed'),
  },
  // no fail-to-pass test: never reaches the environment step (its stale build record is ignored)
  { key: 'free5gc__pcf-10', repo: 'free5gc/pcf', base: 'b-j', tested: false, build: done },
  ...Array.from({ length: 10 }, (_, i): Cand => ({
    key: `open5gs__open5gs-${i}`,
    repo: 'open5gs/open5gs',
    base: `o-${i}`,
    build:
      i === 0
        ? failed('dependency_unavailable', { image: 'telebench-env:00aa', module: 'x' })
        : done,
  })),
];

const row = (rows: EnvironmentRow[], project: string, year: string) =>
  rows.find((r) => r.project === project && r.year === year);

describe('environments by project and year', () => {
  it('counts each tested candidate once under its project and UTC year, by its build outcome', () => {
    const store = storeWith(CANDS);
    const r = environmentReport(reader(store), DATES);
    expect(r.rows.map((x) => `${x.project} ${x.year}`)).toEqual([
      'free5gc 2020',
      'free5gc 2021',
      'free5gc 2022',
      'free5gc all',
      'open5gs 2021',
      'open5gs 2022',
      'open5gs all',
    ]);
    // 2020 holds the +08:00 commit (a local-time year would put it in 2021: tested 1 here)
    expect(row(r.rows, 'free5gc', '2020')).toEqual({
      project: 'free5gc',
      year: '2020',
      tested: 2,
      built: 1,
      env_failed: 1,
      env_reasons: { image_build_failed: 1 },
      not_env: 0,
      not_env_reasons: {},
      pending: 0,
      share: 0.5,
    });
    // the -02:00 commit of 2021-12-31 is 2022 in UTC: 2021 has c (built) and d (toolchain) only
    expect(row(r.rows, 'free5gc', '2021')).toMatchObject({
      tested: 2,
      built: 1,
      env_failed: 1,
      env_reasons: { toolchain_mismatch: 1 },
      not_env: 0,
      pending: 0,
      share: 0.5,
    });
    expect(row(r.rows, 'free5gc', '2022')).toMatchObject({
      tested: 5,
      built: 0,
      env_failed: 0,
      not_env: 3,
      not_env_reasons: {
        'other:disk_budget_exceeded': 1,
        'instance:image_build_failed': 1,
        'instance:image_contract_failed': 1,
      },
      pending: 2,
      share: null,
    });
    // 9 tested (pcf-10 has no test), not 10; env failed 2, not 5 (disk, instance layer, contract)
    expect(row(r.rows, 'free5gc', 'all')).toMatchObject({
      tested: 9,
      built: 2,
      env_failed: 2,
      not_env: 3,
      pending: 2,
      share: 0.5,
    });
    expect(row(r.rows, 'open5gs', 'all')).toMatchObject({
      tested: 10,
      built: 9,
      env_failed: 1,
      env_reasons: { dependency_unavailable: 1 },
      share: 0.9,
    });
    expect(r.goals).toEqual([
      { project: 'free5gc', share: 0.5, verdict: 'not_met', pending: 2 },
      // exactly 90%: the goal is "at least", so met
      { project: 'open5gs', share: 0.9, verdict: 'met', pending: 0 },
    ]);
    store.close();
  });

  it('flips the goal to not met when one more environment fails, and back when it builds', () => {
    const extra = (build: End): Cand => ({
      key: 'open5gs__open5gs-99',
      repo: 'open5gs/open5gs',
      base: 'o-1',
      build,
    });
    const goal = (build: End) => {
      const store = storeWith([...CANDS, extra(build)]);
      const g = environmentReport(reader(store), DATES).goals.find((x) => x.project === 'open5gs');
      store.close();
      return g;
    };
    // 9 / 11 = 81.8%
    expect(goal(failed('image_build_failed', { image: 'telebench-base:77' }))).toEqual({
      project: 'open5gs',
      share: 9 / 11,
      verdict: 'not_met',
      pending: 0,
    });
    // 10 / 11 = 90.9%
    expect(goal(done)).toMatchObject({ share: 10 / 11, verdict: 'met' });
    // still running: pending, the share stays 9 / 10 and the line says it may change
    expect(goal({ state: 'running' })).toEqual({
      project: 'open5gs',
      share: 0.9,
      verdict: 'met',
      pending: 1,
    });
  });

  it('puts a base commit without a known date under unknown, and limits to the given ids', () => {
    const store = storeWith(CANDS);
    const dates = new Map(DATES);
    dates.delete('b-a');
    dates.set('b-b', 'not a date');
    const r = environmentReport(reader(store), dates);
    expect(row(r.rows, 'free5gc', '2020')).toBeUndefined();
    expect(row(r.rows, 'free5gc', 'unknown')).toMatchObject({ tested: 2, built: 1, env_failed: 1 });
    expect(r.rows.filter((x) => x.project === 'free5gc').map((x) => x.year)).toEqual([
      '2021',
      '2022',
      'unknown',
      'all',
    ]);
    const only = environmentReport(reader(store), DATES, new Set(['free5gc__amf-1', 'x__y-1']));
    expect(only.rows.map((x) => [x.project, x.year, x.tested])).toEqual([
      ['free5gc', '2020', 1],
      ['free5gc', 'all', 1],
    ]);
    store.close();
  });

  it('tells the layer of a failure from the commit it names, else counts it as unattributed', () => {
    const rec = (error: Record<string, unknown>, input: Record<string, unknown>) =>
      envOutcome({
        stage: 'swe5g.build',
        key: 'k',
        state: 'failed',
        error,
        input,
      } as never);
    const input = { base_commit: 'b1', environment_setup_commit: 'e1' };
    const missing = (commit: string) => ({ code: 'source_objects_missing', context: { commit } });
    expect(rec(missing('e1'), input)).toEqual({
      kind: 'env_failed',
      reason: 'source_objects_missing',
    });
    expect(rec(missing('b1'), input)).toEqual({
      kind: 'instance_failed',
      reason: 'source_objects_missing',
    });
    // base = environment commit: the record does not tell the layer
    expect(rec(missing('b1'), { base_commit: 'b1', environment_setup_commit: 'b1' })).toEqual({
      kind: 'unattributed',
      reason: 'source_objects_missing',
    });
    expect(rec({ code: 'build_context_missing', context: { layer: 'env' } }, input).kind).toBe(
      'env_failed',
    );
    // an image that is not a telebench layer (a registry base) falls through to the code
    expect(
      rec({ code: 'base_image_unavailable', context: { image: 'golang:1.12-bookworm' } }, input),
    ).toEqual({ kind: 'env_failed', reason: 'base_image_unavailable' });
    expect(rec({ code: 'swarm_node_lost' }, input).kind).toBe('unattributed');
  });

  it('renders the table and one goal line per project', () => {
    const store = storeWith(CANDS);
    const md = environmentReportMarkdown(environmentReport(reader(store), DATES));
    expect(md).toContain('## Environments by project and year');
    expect(md).toContain('| free5gc | 2020 | 2 | 1 | 1 (image_build_failed 1) | 0 | 0 | 50.0% |');
    expect(md).toContain('| free5gc | 2022 | 5 | 0 | 0 | 3 (');
    expect(md).toContain(
      '| open5gs | **all** | 10 | 9 | 1 (dependency_unavailable 1) | 0 | 0 | 90.0% |',
    );
    expect(md).toContain('- free5gc: not met (50.0% < 90%; 2 pending, may change)');
    expect(md).toContain('- open5gs: met (90.0% >= 90%)');
    store.close();
    const empty = storeWith([]);
    expect(environmentReportMarkdown(environmentReport(reader(empty), DATES))).toBe('');
    empty.close();
  });
});

describe('telebench plan: environments of the sample', () => {
  it('prints the section under the plan when the sample went through build, none at testgen', () => {
    const store = storeWith(CANDS);
    const sample = new Set(['free5gc__amf-1', 'free5gc__amf-2', 'open5gs__open5gs-0']);
    const environments = environmentReport(reader(store), DATES, sample);
    store.close();
    const plan = {
      level: 0.95,
      depth: 'validate' as const,
      sample_size: 2,
      seed: 1,
      concurrency: {},
      projects: [],
      total: {
        candidates: 0,
        tests: { point: 0, low: 0, high: 0 },
        validated: null,
        audited: null,
        hours: { point: 0, low: 0, high: 0 },
        env_images: null,
        instance_images: null,
        disk_gib: null,
      },
      not_mined: {},
    };
    const md = planMarkdown({ ...plan, environments });
    expect(md).toContain(
      '### Environments by project and year (swe5g.build of the sampled candidates with a fail-to-pass test; counts, not projected)',
    );
    expect(md).toContain(
      '| free5gc | **all** | 2 | 1 | 1 (image_build_failed 1) | 0 | 0 | 50.0% |',
    );
    expect(md).toContain(
      '| open5gs | **all** | 1 | 0 | 1 (dependency_unavailable 1) | 0 | 0 | 0.0% |',
    );
    expect(md).toContain('- open5gs: not met (0.0% < 90%)');
    expect(planMarkdown({ ...plan, depth: 'testgen' })).not.toContain('Environments by project');
  });
});
