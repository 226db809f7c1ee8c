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
import { statementStage } from '../../../../stages/swe5g/statement/stage.js';
import { auditStage, type AuditOutput } from '../../../../stages/swe5g/audit/audit.js';
import { startLlmServer } from '../../../servers/llm-server.js';
import { readFileSync } from 'node:fs';
import type { Fixture } from '../../../fixtures/repos/builder.js';
import { runStages } from '../../../fixtures/run-stages.js';

let root: string;
let state: OpenState;
let fixture: Fixture;
/** The fixtures the filter stand-in lists (the first test: `fixture` only). */
let fixtures: Fixture[] = [];
/** The issue each instance links to, once the issues file gives it (absent: no linked issue). */
const issues = new Map<string, LinkedIssue>();

const ISSUE: LinkedIssue = {
  repo: 'fixture/amfmini',
  number: 12,
  title: 'AMF panics on NGSetupRequest without GNbId',
  body: 'Sending an NGSetupRequest whose GlobalRANNodeID has no gNB id crashes the AMF with a nil pointer dereference (TS 38.413).',
  labels: ['bug'],
  state: 'closed',
  created_at: '2024-04-01T00:00:00Z',
};

/** The filter's contract output for a fixture's PR, with or without its linked issue. */
function candidate(f: Fixture): Candidate {
  const c = f.candidate;
  const issue = issues.get(c.instance_id);
  if (!issue)
    return { ...c, issues: [], problem_statement: '', hints_text: '', incomplete: true, links: [] };
  return {
    ...c,
    issues: [issue],
    problem_statement: `${issue.title}\n\n${issue.body}`,
    incomplete: false,
    pr_body: `Fixes ${issue.repo}#${issue.number}`,
    links: [
      {
        kind: 'closing_keyword',
        where: 'pr_body',
        text: `Fixes ${issue.repo}#${issue.number}`,
        issue: `${issue.repo}#${issue.number}`,
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
    for (const f of fixtures) yield { key: f.candidate.instance_id, input: candidate(f) };
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
  const stages = [
    filter,
    resolveStage,
    testgenStage,
    buildStage,
    validateStage,
    statementStage,
    auditStage,
  ];
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

const config = (more: Record<string, unknown> = {}) => ({
  version: 1,
  stages: {},
  release: { verify_before_release: false },
  swe5g: swe5gConfigSchema.parse({
    ...more,
    // these runs release without the audit stage (the statement is their subject; the audit
    // gate has its own test, test/datasets/swe5g-audit-gate.test.ts)
    audit: { release_unaudited: true, ...((more.audit as object | undefined) ?? {}) },
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
  fixtures = [fixture];
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

    issues.set(id, ISSUE); // the issues file now links the PR to its issue
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
  });
});

describe('the audit of an instance without a statement (swe5g.audit.include_incomplete)', () => {
  it('is not planned by default, and graded when asked (a later statement then audits nothing anew)', async () => {
    const st = openState(join(root, 'state-audit'));
    try {
      const stages = [...STAGES.slice(0, -1), 'swe5g.audit'];
      const id = fixture.candidate.instance_id;
      issues.delete(id);
      const run = (audit: Record<string, unknown>) =>
        runStages(st, { registry: registry(), stages, config: config({ audit }), root });
      const first = await run({ kinds: ['noop'] });
      expect(first.stages['swe5g.validate']).toMatchObject({ ran: 1 });
      expect(first.stages['swe5g.audit']).toMatchObject({ ran: 0 });
      const second = await run({ kinds: ['noop'], include_incomplete: true });
      for (const s of ['swe5g.resolve', 'swe5g.build', 'swe5g.validate'])
        expect(second.stages[s], s).toMatchObject({ ran: 0 });
      expect(second.stages['swe5g.audit']).toMatchObject({ ran: 1 });
      const a = (st.store.item('swe5g.audit', id)!.output as AuditOutput).f2p_audit;
      // the go-nil fixture's Strategy B (control) test rejects the no-op guard
      expect(a.weak).toBe(false);
      expect(a.mutants.find((m) => m.kind === 'noop')).toMatchObject({ status: 'graded' });
      issues.set(id, ISSUE); // the statement arrives: the audit does not run again
      const third = await run({ kinds: ['noop'], include_incomplete: true });
      expect(third.stages['swe5g.audit']).toMatchObject({ ran: 0 });
    } finally {
      st.close();
      issues.delete(fixture.candidate.instance_id);
    }
  });
});

describe('model-written problem statements (issue 31)', () => {
  it('writes one for the fix without an issue, refusing a quote of the patch; the release keeps it apart; filler ends statement_uninformative', async () => {
    const QUOTE =
      'AMF crash\n\nAdd if req.GlobalRANNodeID == nil || req.GlobalRANNodeID.GNbId == nil { return "", ErrMissingGNbID }';
    const PARAPHRASE =
      'AMF panics on NG Setup without gNB id\n\nAn NG Setup Request whose RAN node id has no gNB id makes HandleNGSetupRequest dereference a nil pointer, and the AMF crashes instead of rejecting the request.';
    const server = await startLlmServer({ script: [{ content: QUOTE }, { content: PARAPHRASE }] });
    const shipped = goFixture(join(root, 'src'), 'shipped');
    fixtures = [fixture, shipped]; // good-161: no linked issue; shipped-162: an issue
    issues.clear();
    issues.set(shipped.candidate.instance_id, { ...ISSUE, repo: 'fixture/amfmini-shipped' });
    const st = openState(join(root, 'state-model'));
    const stages = [...STAGES.slice(0, -1), 'swe5g.statement', 'release.swe5g'];
    const cfg = config({
      problem_statements: {
        model_written: {
          enabled: true,
          llm: {
            model: 'qwen3.5:2b',
            endpoints: [{ kind: 'openai-compatible', base_url: server.url, context_length: 32768 }],
          },
        },
      },
    });
    try {
      const run = () => runStages(st, { registry: registry(), stages, config: cfg, root });
      const first = await run();
      expect(first.exitCode).toBe(0);
      expect(first.stages['swe5g.validate']).toMatchObject({ ran: 2 });
      // only the fix without an issue gets a statement
      expect(first.stages['swe5g.statement']).toMatchObject({ ran: 1 });
      const good = fixture.candidate.instance_id;
      expect(st.store.item('swe5g.statement', good)!.output).toMatchObject({
        model: 'qwen3.5:2b',
        problem_statement: PARAPHRASE,
        attempts: [
          { ok: false, reason: expect.stringMatching(/^quotes the added line/) },
          { ok: true },
        ],
      });
      const prompt = JSON.stringify(server.chatRequests()[0]!.body);
      expect(prompt).not.toContain('ErrMissingGNbID'); // never shown the fix
      expect(prompt).toContain('return req.GlobalRANNodeID.GNbId.Value, nil');

      const out = st.store.item('release.swe5g', 'swe-bench-5g')!.output as { dir: string };
      const rows = readReleaseRows(out.dir);
      expect(
        rows
          .map((r) => [r.instance_id, r.problem_statement_source, r.problem_statement_model])
          .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      ).toEqual([
        [good, 'model_written', 'qwen3.5:2b'],
        [shipped.candidate.instance_id, 'issues_file', null],
      ]);
      const manifest = JSON.parse(readFileSync(join(out.dir, 'manifest.json'), 'utf8')) as {
        counts: { by_config: Record<string, number> };
      };
      expect(manifest.counts.by_config).toEqual({ fixture: 1, model_written: 1 });
      const card = readFileSync(join(out.dir, 'README.md'), 'utf8');
      // `all` (the default) is the linked issues only; the model-written rows are their own config
      expect(card).toMatch(
        /config_name: all\n\s+default: true\n\s+data_files:\n\s+- split: test\n\s+path: data\/fixture\/test\.parquet/,
      );
      expect(card).toContain('config_name: all_with_model_written');
      expect(card).toContain('config_name: model_written');
      expect(card).toContain(
        '0 rows from the GitHub issues API, 1 rows from an issues file, 1 rows written by a model',
      );

      // resumable: a second run writes nothing and asks the model nothing
      const second = await run();
      expect(second.stages['swe5g.statement']).toMatchObject({ ran: 0 });
      expect(server.chatRequests()).toHaveLength(2);

      // another model that only writes filler: refused by the quality check K times, the item
      // ends statement_uninformative and the instance is incomplete again (no model_written row)
      const filler = await startLlmServer({
        fallback: {
          content: 'The issue is that the code is not working correctly. '.repeat(10),
        },
      });
      try {
        const third = await runStages(st, {
          registry: registry(),
          stages,
          root,
          config: config({
            problem_statements: {
              model_written: {
                enabled: true,
                max_attempts: 2,
                llm: {
                  model: 'qwen3.5:2b',
                  // the response cache is keyed by the request, not the endpoint: off, or the
                  // first server's accepted answer would come back
                  cache: false,
                  endpoints: [
                    { kind: 'openai-compatible', base_url: filler.url, context_length: 32768 },
                  ],
                },
              },
            },
          }),
        });
        expect(third.stages['swe5g.validate']).toMatchObject({ ran: 0 });
        const item = st.store.item('swe5g.statement', good)!;
        expect(item).toMatchObject({
          state: 'skipped',
          skipReason: 'statement_uninformative',
          skipDetail: expect.stringContaining(
            '2 statement(s) refused, the last by the quality check because it repeats itself',
          ),
        });
        expect(filler.chatRequests()).toHaveLength(2);
        const dir = (st.store.item('release.swe5g', 'swe-bench-5g')!.output as { dir: string }).dir;
        expect(readReleaseRows(dir).map((r) => r.instance_id)).toEqual([
          shipped.candidate.instance_id,
        ]);
      } finally {
        await filler.close();
      }
    } finally {
      st.close();
      await server.close();
    }
  });
});
