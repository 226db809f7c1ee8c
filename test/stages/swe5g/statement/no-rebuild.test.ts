/**
 * Issue 31: a new problem statement never re-builds or re-validates. A real Go repository (the
 * go-nil fixture) goes through the real resolve, testgen (Strategy B), build and validate stages
 * with the local executor (no Docker: the host's Go runs the tests) while its PR has no linked
 * issue, so the instance is validated but incomplete and nothing is released. Then the filter's
 * candidate gets issue text (what `mine --issues-from` gives it) and the run is repeated: testgen
 * re-runs (its classification reads the text), resolve, build and validate run nothing, and the
 * release row carries the new statement.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openState, type OpenState } from '../../../../pipeline/state.js';
import { defineStage } from '../../../../pipeline/stage.js';
import type { StageRegistry } from '../../../../pipeline/runner.js';
import { swe5gConfigSchema } from '../../../../stages/swe5g/config.js';
import { resolveStage } from '../../../../stages/swe5g/resolve/resolve.js';
import { testgenStage } from '../../../../stages/swe5g/testgen/testgen.js';
import { buildStage } from '../../../../stages/swe5g/build/build.js';
import { validateStage } from '../../../../stages/swe5g/validate/validate.js';
import { swe5gEntry } from '../../../../stages/swe5g/dataset.js';
import { localReleaseStages } from '../../../../stages/release/stage.js';
import { datasetRegistry } from '../../../../stages/release/entry.js';
import { readReleaseRows } from '../../../../stages/release/assemble.js';
import type { Candidate, LinkedIssue } from '../../../../stages/swe5g/types.js';
import { goFixture } from '../../../fixtures/repos/go-nil.js';
import type { Fixture } from '../../../fixtures/repos/builder.js';
import { runStages } from '../../../fixtures/run-stages.js';

let root: string;
let state: OpenState;
let fixture: Fixture;
/** The issue the candidate links to, once the issues file gives it (null: no linked issue). */
let issue: LinkedIssue | null = null;

const ISSUE: LinkedIssue = {
  repo: 'fixture/amfmini',
  number: 12,
  title: 'AMF panics on NGSetupRequest without GNbId',
  body: 'Sending an NGSetupRequest whose GlobalRANNodeID has no gNB id crashes the AMF with a nil pointer dereference (TS 38.413).',
  labels: ['bug'],
  state: 'closed',
  created_at: '2024-04-01T00:00:00Z',
};

/** The filter's contract output for the fixture's PR, with or without the linked issue. */
function candidate(): Candidate {
  const c = fixture.candidate;
  if (!issue)
    return { ...c, issues: [], problem_statement: '', hints_text: '', incomplete: true, links: [] };
  return {
    ...c,
    issues: [issue],
    problem_statement: `${issue.title}\n\n${issue.body}`,
    incomplete: false,
    pr_body: 'Fixes fixture/amfmini#12',
    links: [
      {
        kind: 'closing_keyword',
        where: 'pr_body',
        text: 'Fixes fixture/amfmini#12',
        issue: 'fixture/amfmini#12',
        confidence: 0.95,
      },
    ],
  };
}

/** Stand-in for swe5g.filter (mine -> link -> filter): its input is what the link gave it. */
const filter = defineStage<Candidate, Candidate, unknown>({
  name: 'swe5g.filter',
  version: 1,
  needs: [],
  description: 'the fixture PR as linked now',
  *plan() {
    yield { key: fixture.candidate.instance_id, input: candidate() };
  },
  run: async (item) => item.input,
});

const STAGES = [
  'swe5g.filter',
  'swe5g.resolve',
  'swe5g.testgen',
  'swe5g.build',
  'swe5g.validate',
  'release.swe5g',
];

function registry(): StageRegistry {
  const datasets = datasetRegistry([swe5gEntry]);
  const stages = [filter, resolveStage, testgenStage, buildStage, validateStage];
  const names = new Map(stages.map((s) => [s.name, s.version]));
  const release = localReleaseStages({
    datasets,
    pipelineStages: () => STAGES.slice(0, -1),
    stageVersion: (n) => names.get(n),
  });
  return new Map(
    [...stages, ...release].map((s) => [s.name, s as never]),
  ) as unknown as StageRegistry;
}

const config = () => ({
  version: 1,
  stages: {},
  release: { verify_before_release: false },
  swe5g: swe5gConfigSchema.parse({
    environments: {
      executor: 'local',
      git_url_base: join(root, 'src'),
      limits: { timeout_s: 300 },
    },
    testgen: { strategy_a: false },
  }),
});

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-statement-'));
  state = openState(join(root, 'state'));
  fixture = goFixture(join(root, 'src'), 'good');
});
afterAll(() => {
  state.close();
  rmSync(root, { recursive: true, force: true });
});

describe('a new problem statement (issue 31)', () => {
  it('re-runs only what reads it: no build, no validation; the release row carries it', async () => {
    const id = fixture.candidate.instance_id;
    const run = () =>
      runStages(state, { registry: registry(), stages: STAGES, config: config(), root });
    const first = await run();
    for (const s of ['swe5g.resolve', 'swe5g.testgen', 'swe5g.build', 'swe5g.validate'])
      expect(first.stages[s], s).toMatchObject({ status: 'completed', ran: 1 });
    expect(state.store.item('swe5g.validate', id)).toMatchObject({ state: 'done' });
    expect(state.store.item('swe5g.validate', id)!.output).toMatchObject({ incomplete: true });
    // validated but without a statement: nothing to release (skipped with the reason)
    expect(state.store.item('release.swe5g', 'swe-bench-5g')).toMatchObject({ state: 'skipped' });

    issue = ISSUE; // the issues file now links the PR to its issue
    const second = await run();
    expect(second.exitCode).toBe(0);
    expect(second.stages['swe5g.filter']).toMatchObject({ ran: 1 });
    // testgen reads the issue text (bug category, 3GPP references): it re-runs
    expect(second.stages['swe5g.testgen']).toMatchObject({ ran: 1 });
    for (const s of ['swe5g.resolve', 'swe5g.build', 'swe5g.validate'])
      expect(second.stages[s], s).toMatchObject({ status: 'completed', ran: 0 });
    expect(state.store.item('swe5g.testgen', id)!.output).toMatchObject({
      spec_refs: ['TS 38.413'],
    });
    expect(second.stages['release.swe5g']).toMatchObject({ ran: 1 });
    const out = state.store.item('release.swe5g', 'swe-bench-5g')!.output as { dir: string };
    const rows = readReleaseRows(out.dir);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      instance_id: id,
      problem_statement: `${ISSUE.title}\n\n${ISSUE.body}`,
      problem_statement_source: 'issues_file',
      problem_statement_model: null,
      spec_refs: ['TS 38.413'],
    });

    // a third run with nothing new runs nothing at all
    const third = await run();
    for (const s of STAGES) expect(third.stages[s], s).toMatchObject({ ran: 0 });
  }, 300_000);
});
