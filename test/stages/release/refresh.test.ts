/**
 * `telebench refresh` through the real CLI on a real git history this test builds
 * (test/fixtures/repos/go-history.ts: Go nil fixes landing as merge PRs at given dates, mined from
 * a bare mirror, problem statements from an issues file), validated with the host's Go through the
 * local executor (no Docker): a release at D1, two PRs merged after D1, `refresh` runs only those
 * (counted by the run summary's "N ran"), release N+1 holds the old row unchanged plus the two, its
 * changelog lists exactly them, a second refresh writes nothing; bad input exits 2 naming what.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { cpSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, type CliResult } from '../../fixtures/cli.js';
import { openState } from '../../../pipeline/state.js';
import type { LinkedPR } from '../../../stages/swe5g/types.js';
import { carryOver } from '../../../stages/release/release.js';
import { newLeftOut, outcomeText } from '../../../stages/release/refresh-report.js';
import { renderChangelog } from '../../../stages/release/changelog.js';
import { swe5gDataset } from '../../../datasets/index.js';
import {
  HISTORY_NAME,
  historyRegistry,
  issueRow,
  mergeFix,
  startHistory,
  syncMirror,
  type HistoryFix,
} from '../../fixtures/repos/go-history.js';

// PRE names OLD's issue too ("Refs #10"): OLD's other_prs is [PRE] over the whole history, and
// OLD is the release's PR at the cutoff, which every refresh mines again (the window is inclusive)
const PRE: HistoryFix = {
  pkg: 'sctp',
  pr: 1,
  issue: 9,
  mergedAt: '2025-02-01T10:00:00Z',
  note: 'Refs #10',
};
const OLD: HistoryFix = { pkg: 'ngap', pr: 2, issue: 10, mergedAt: '2025-03-01T10:00:00+02:00' };
// NEW[0] names PRE, a PR outside the window: a PR number, never an issue (whole-history reading)
const NEW: HistoryFix[] = [
  {
    pkg: 'gmm',
    pr: 3,
    issue: 11,
    mergedAt: '2025-07-01T09:00:00-07:00',
    note: 'Follow-up to #1.',
  },
  { pkg: 'nas', pr: 4, issue: 12, mergedAt: '2025-08-15T12:00:00Z' },
];
// a month later: a fix whose issue the issues file lacks (kept: keep_git_without_issue)
const LATE: HistoryFix = { pkg: 'pfcp', pr: 5, issue: 13, mergedAt: '2025-09-20T08:00:00Z' };
const STAGES = [
  'swe5g.link',
  'swe5g.filter',
  'swe5g.resolve',
  'swe5g.testgen',
  'swe5g.build',
  'swe5g.validate',
] as const;
const id = (f: HistoryFix) => `fixture__${HISTORY_NAME}-${f.pr}`;

let root: string;
let work: string;
let mirror: string;
let state: string;
let config: string;

/** `telebench --state <state> <args> --config <config>` (mirrors from the config only). */
function cli(args: string[], cfg = config, st = state): Promise<CliResult> {
  return runCli(['--state', st, ...args, '--config', cfg], { TELEBENCH_MIRRORS_DIR: '' });
}

/** The summary line's "N ran in this run" of `stage`, or -1 when the stage has no line. */
function ran(r: CliResult, stage: string): number {
  const m = new RegExp(`^ +${stage.replace('.', '\\.')}: .*?; (\\d+) ran in this run`, 'm').exec(
    r.stderr,
  );
  return m ? Number(m[1]) : -1;
}

/** Writes the issues file with the rows of `fixes`. */
function issuesFile(fixes: HistoryFix[]): void {
  writeFileSync(
    join(root, 'issues.jsonl'),
    fixes.map((f) => JSON.stringify(issueRow(f))).join('\n') + '\n',
  );
}

/** The store's record of `key` in each stage (run id, attempts, state), read after a CLI run. */
function records(key: string): Record<string, unknown> {
  const st = openState(state);
  try {
    return Object.fromEntries(
      STAGES.map((s) => {
        const r = st.store.item(s, key);
        return [s, r && { state: r.state, runId: r.runId, attempts: r.attempts }];
      }),
    );
  } finally {
    st.close();
  }
}

/** The issues `swe5g.link`'s evidence for `key` names (once each, sorted). */
function linkedIssues(key: string): string[] {
  const st = openState(state);
  try {
    const out = st.store.item('swe5g.link', key)!.output as LinkedPR;
    return [...new Set(out.links.map((l) => l.issue))].sort();
  } finally {
    st.close();
  }
}

function release(version: string) {
  const dir = join(state, 'releases', 'swe-bench-5g', version);
  const rows = readFileSync(join(dir, 'data', 'fixture', 'test.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return {
    rows,
    manifest: JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<
      string,
      unknown
    >,
    changelog: readFileSync(join(dir, 'CHANGELOG.md'), 'utf8'),
  };
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-refresh-'));
  ({ work, mirror } = startHistory(
    root,
    ['sctp', 'ngap', 'gmm', 'nas', 'pfcp'],
    '2025-01-01T00:00:00Z',
  ));
  mergeFix(work, PRE);
  mergeFix(work, OLD);
  syncMirror(mirror);
  writeFileSync(join(root, 'repos.yaml'), historyRegistry());
  // the issues the release needs; each refresh's issues are added to the file before it (a new
  // digest of the file must not re-link the PRs whose issues did not change)
  issuesFile([PRE, OLD]);
  config = join(root, 'config.yaml');
  writeFileSync(
    config,
    `version: 1
swe5g:
  registry: repos.yaml
  source: git
  mining: { mirrors_dir: mirrors, issues_from: issues.jsonl }
  filter: { keep_git_without_issue: true }
  environments:
    executor: local
    test_scope: touched
    limits: { timeout_s: 300 }
    # CI time: one run per step (the repeats are validate's own tests)
    fix_runs: 1
    parent_reruns: 0
    test_repeats: 1
  audit: { enabled: false }
`,
  );
  state = join(root, 'state');
});

describe('telebench refresh (SWE-Bench 5G)', () => {
  it('bad input: no release yet (of either dataset), an unknown dataset: exit 2 naming it', async () => {
    const none = await cli(['refresh', 'swe5g']);
    expect(none.code, none.stderr).toBe(2);
    expect(none.stderr).toContain(
      `no release of swe-bench-5g to refresh in ${state}/releases/swe-bench-5g`,
    );
    expect(none.stderr).toContain('telebench release swe-bench-5g --version V');
    const unknown = await cli(['refresh', 'glue']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown dataset "glue"; known: swe-bench-5g/);
    // TeleResilienceBench is refreshed by its sources (refresh-resilience.test.ts); without a
    // release it is refused the same way
    const trb = await cli(['refresh', 'resilience']);
    expect(trb.code).toBe(2);
    expect(trb.stderr).toContain(`no release of teleresiliencebench to refresh in ${state}`);
  });

  it('release at D1, two PRs merged after it: refresh runs only those and releases N+1 with them', async () => {
    const first = await cli(['run', 'swe5g']);
    expect(first.code, first.stderr.slice(-3000)).toBe(0);
    expect(ran(first, 'swe5g.validate')).toBe(2);
    const rel = await cli(['release', 'swe5g', '--version', '1.0.0']);
    expect(rel.code, rel.stderr.slice(-3000)).toBe(0);
    const v1 = release('1.0.0');
    expect(v1.rows.map((r) => r.instance_id)).toEqual([id(PRE), id(OLD)]);
    // the cutoff is the latest merged_at mined, in UTC (the commit said +02:00)
    expect(v1.manifest.cutoff).toBe('2025-03-01T08:00:00.000Z');
    const atCutoff = records(id(OLD));
    const outside = records(id(PRE));
    expect(outside['swe5g.validate']).toMatchObject({ state: 'done' });

    for (const f of NEW) mergeFix(work, f);
    syncMirror(mirror);
    issuesFile([PRE, OLD, ...NEW]);
    const r = await cli(['refresh', 'swe5g', '--version', '1.1.0']);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.stderr).toContain('running swe5g on what landed at or after 2025-03-01T08:00:00.000Z');
    // only the new candidates went through the stages: the PR at the cutoff, mined again, was
    // not redone by any stage (its link input reads the whole history, not the window), although
    // the issues file changed
    for (const stage of STAGES) expect(ran(r, stage), stage).toBe(2);
    expect(records(id(OLD))).toEqual(atCutoff);
    // the release's PR outside the window stays done in every stage (not orphaned), so evaluate
    // from the state, the solver runs and the next release still see it
    expect(records(id(PRE))).toEqual(outside);
    // a PR outside the window named by a new one is a PR, as a whole-history run reads it
    expect(linkedIssues(id(NEW[0]!))).toEqual([`fixture/${HISTORY_NAME}#11`]);
    expect(r.stdout).toContain('refreshed: swe-bench-5g 1.0.0 -> 1.1.0 (written)');
    expect(r.stdout).toContain('rows 2 -> 4; new candidates released 2 of 2; removed 0');
    const v2 = release('1.1.0');
    expect(v2.rows.map((x) => x.instance_id)).toEqual([id(PRE), id(OLD), ...NEW.map(id)].sort());
    // the carried rows are the released ones, byte for byte
    expect(
      v2.rows.filter((x) => x.instance_id !== id(NEW[0]!) && x.instance_id !== id(NEW[1]!)),
    ).toEqual(v1.rows);
    expect(v2.manifest).toMatchObject({
      previous_version: '1.0.0',
      cutoff: '2025-08-15T12:00:00.000Z',
    });
    expect(v2.changelog).toContain('Against 1.0.0: 2 -> 4 rows; 2 added, 0 removed, 0 changed.');
    expect(v2.changelog).toContain(`- added: ${NEW.map((f) => `\`${id(f)}\``).join(', ')}`);
    expect(v2.changelog).not.toContain(id(OLD));
  });

  it('a second refresh with nothing new runs no stage after mining, a third not even that (exit 0)', async () => {
    const atCutoff = records(id(NEW[1]!));
    const r = await cli(['refresh', 'swe5g']);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.stdout).toContain(
      'nothing new: no swe-bench-5g row landed at or after 2025-08-15T12:00:00.000Z that 1.1.0 lacks; 1.1.0 stays the latest release (no version written)\n',
    );
    expect(r.stdout).not.toMatch(/releas(ing|ed) what held|candidate\(s\) validated/);
    // the PR at the cutoff is 1.1.0's: nothing landed that it lacks, and the outcome says so
    expect(r.stdout).toContain(
      '  0 PR(s) landed at or after 2025-08-15T12:00:00.000Z that 1.1.0 lacks\n',
    );
    // the window moved (a new since): mining looks once; nothing after it runs
    expect(ran(r, 'swe5g.mine')).toBe(1);
    for (const stage of STAGES) expect(ran(r, stage), stage).toBe(0);
    expect(records(id(NEW[1]!))).toEqual(atCutoff);
    // same window, same mirror: nothing at all
    const again = await cli(['refresh', 'swe5g']);
    expect(again.code, again.stderr.slice(-3000)).toBe(0);
    for (const stage of ['swe5g.mine', ...STAGES]) expect(ran(again, stage), stage).toBe(0);
    expect(readdirSync(join(state, 'releases', 'swe-bench-5g')).sort()).toEqual(['1.0.0', '1.1.0']);
  });

  it('a validated candidate without a problem statement: nothing new says so and how to complete it; once its issue is there, the next refresh releases it', async () => {
    // the same window as the last refresh: the mirror moved, so mining looks again
    mergeFix(work, LATE);
    syncMirror(mirror);
    const r = await cli(['refresh', 'swe5g', '--version', '1.2.0']);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(ran(r, 'swe5g.mine')).toBe(1);
    expect(ran(r, 'swe5g.validate')).toBe(1);
    expect(r.stdout).toContain(
      'nothing new: no swe-bench-5g row landed at or after 2025-08-15T12:00:00.000Z that 1.1.0 lacks; 1.1.0 stays the latest release (no version written)',
    );
    expect(r.stdout).toContain(
      `1 candidate(s) validated but incomplete (${id(LATE)}): no problem statement`,
    );
    expect(r.stdout).toContain('add the issue to the issues file (swe5g.mining.issues_from');
    expect(r.stdout).toContain(
      '  1 PR(s) landed at or after 2025-08-15T12:00:00.000Z that 1.1.0 lacks: 0 validated for release, 1 validated but left out (below), 0 stopped before a row\n',
    );
    expect(r.stdout).toContain('swe5g.problem_statements.model_written.enabled');
    expect(r.stdout).not.toMatch(/releas(ing|ed) what held/);
    // its issue added: only it is linked again, and released
    issuesFile([PRE, OLD, ...NEW, LATE]);
    const done = await cli(['refresh', 'swe5g', '--version', '1.2.0']);
    expect(done.code, done.stderr.slice(-3000)).toBe(0);
    expect(ran(done, 'swe5g.link')).toBe(1);
    expect(ran(done, 'swe5g.build')).toBe(0);
    expect(done.stdout).toContain('rows 4 -> 5; new candidates released 1 of 1; removed 0');
    expect(done.stdout).not.toContain('incomplete');
    expect(release('1.2.0').manifest.cutoff).toBe('2025-09-20T08:00:00.000Z');
  });

  it('a refresh that stops (no mirror: exit 3) prints a resume command with every flag given', async () => {
    const bad = join(root, 'no-mirror.yaml');
    writeFileSync(
      bad,
      readFileSync(config, 'utf8').replace('mirrors_dir: mirrors', 'mirrors_dir: gone'),
    );
    const r = await cli(['refresh', 'swe5g', '--version', '9.9.9', '--no-verify'], bad);
    expect(r.code, r.stderr.slice(-3000)).toBe(3);
    expect(r.stderr).toMatch(
      new RegExp(
        `to resume: .*--state ${state} refresh swe5g --version 9\\.9\\.9 --config ${bad} --no-verify\\n`,
      ),
    );
    expect(r.stdout).not.toContain('nothing new');
    expect(readdirSync(join(state, 'releases', 'swe-bench-5g'))).not.toContain('9.9.9');
  });

  it('a release without a recorded cutoff and a config without swe5g.mining.since: exit 2 naming both', async () => {
    const own = mkdtempSync(join(tmpdir(), 'telebench-refresh-nocut-'));
    const v = join(own, 'releases', 'swe-bench-5g', '0.9.0');
    const old = join(state, 'releases', 'swe-bench-5g', '1.0.0');
    cpSync(old, v, { recursive: true });
    const m = JSON.parse(readFileSync(join(v, 'manifest.json'), 'utf8')) as Record<string, unknown>;
    delete m.cutoff;
    m.version = '0.9.0';
    writeFileSync(join(v, 'manifest.json'), JSON.stringify(m));
    const r = await cli(['refresh', 'swe5g'], config, own);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${join(v, 'manifest.json')} records no cutoff`);
    expect(r.stderr).toContain(`${config} sets no swe5g.mining.since`);
  });
});

describe('what a refresh says (pure)', () => {
  const base = { dataset: 'swe-bench-5g', previous: '1.1.0', leftOut: [], nextFrom: '2025-08-15' };
  const incomplete = {
    reason: 'incomplete_left_out',
    keys: ['fixture__x-5'],
    hint: 'add the issue',
  };
  it('nothing new with failed items: one story, no release claimed, the failure named', () => {
    const text = outcomeText({ ...base, nothingNew: 'no row', refreshed: [], failed: true });
    expect(text).toContain('nothing new: no row; 1.1.0 stays the latest release');
    expect(text).toContain('nothing was released; the next refresh mines from 2025-08-15');
    expect(text).not.toContain('released what held');
  });
  it('a new version with failed items says it released what held; left-out rows are named', () => {
    const text = outcomeText({
      ...base,
      nothingNew: null,
      refreshed: ['refreshed: x'],
      failed: true,
      leftOut: [incomplete],
    });
    expect(text).toMatch(
      /^refreshed: x\n {2}1 candidate\(s\) validated but incomplete \(fixture__x-5\): add the issue\n {2}items failed \(named above\): released what held/,
    );
    expect(text).not.toContain('nothing new');
  });
  it('left-out rows the previous release holds are not new', () => {
    const keys = { incomplete_left_out: ['a', 'b'], weak_f2p_test: ['a'] };
    expect(newLeftOut(keys, { incomplete_left_out: 'h' }, new Set(['a']))).toEqual([
      { reason: 'incomplete_left_out', keys: ['b'], hint: 'h' },
    ]);
    expect(newLeftOut(undefined, undefined, new Set())).toEqual([]);
  });
});

describe('refresh rows and changelog (pure)', () => {
  const row = (n: number, image: string) => ({ instance_id: `fixture__x-${n}`, image_name: image });
  it('keeps each carried row as released (a pushed image by digest), adds only new keys', () => {
    const pushed = row(1, 'reg:5000/telebench-instance:a@sha256:' + 'a'.repeat(64));
    // the store's row of the same instance names the local image: the released one wins
    const out = carryOver(swe5gDataset, [pushed], [row(1, 'telebench-instance:a'), row(2, 'l')]);
    expect(out).toEqual([pushed, row(2, 'l')]);
    expect(carryOver(swe5gDataset, [pushed], [])).toEqual([pushed]);
  });
  it('the changelog says why each removed row left', () => {
    const text = renderChangelog({
      dataset: swe5gDataset,
      version: '1.2.0',
      rows: [row(2, '')],
      previous: { version: '1.1.0', rows: [row(1, ''), row(2, ''), row(3, '')] },
      removedReasons: {
        'fixture__x-1':
          'dropped at release: gold patch did not resolve (FAIL_TO_PASS still failing)',
      },
    });
    expect(text).toContain('2 removed');
    expect(text).toContain('- removed: `fixture__x-3`');
    expect(text).toContain(
      '- removed `fixture__x-1`: dropped at release: gold patch did not resolve',
    );
    expect(text).not.toContain('`fixture__x-3`:');
  });
});
