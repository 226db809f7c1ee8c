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
import { carryOver } from '../../../stages/release/release.js';
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

const OLD: HistoryFix = { pkg: 'ngap', pr: 1, issue: 10, mergedAt: '2025-03-01T10:00:00+02:00' };
const NEW: HistoryFix[] = [
  { pkg: 'gmm', pr: 2, issue: 11, mergedAt: '2025-07-01T09:00:00-07:00' },
  { pkg: 'nas', pr: 3, issue: 12, mergedAt: '2025-08-15T12:00:00Z' },
];
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
  ({ work, mirror } = startHistory(root, ['ngap', 'gmm', 'nas'], '2025-01-01T00:00:00Z'));
  mergeFix(work, OLD);
  syncMirror(mirror);
  writeFileSync(join(root, 'repos.yaml'), historyRegistry());
  writeFileSync(
    join(root, 'issues.jsonl'),
    [OLD, ...NEW].map((f) => JSON.stringify(issueRow(f))).join('\n') + '\n',
  );
  config = join(root, 'config.yaml');
  writeFileSync(
    config,
    `version: 1
swe5g:
  registry: repos.yaml
  source: git
  mining: { mirrors_dir: mirrors, issues_from: issues.jsonl }
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
    expect(ran(first, 'swe5g.validate')).toBe(1);
    const rel = await cli(['release', 'swe5g', '--version', '1.0.0']);
    expect(rel.code, rel.stderr.slice(-3000)).toBe(0);
    const v1 = release('1.0.0');
    expect(v1.rows.map((r) => r.instance_id)).toEqual([id(OLD)]);
    // the cutoff is the latest merged_at mined, in UTC (the commit said +02:00)
    expect(v1.manifest.cutoff).toBe('2025-03-01T08:00:00.000Z');

    for (const f of NEW) mergeFix(work, f);
    syncMirror(mirror);
    const r = await cli(['refresh', 'swe5g', '--version', '1.1.0']);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.stderr).toContain('running swe5g on what landed at or after 2025-03-01T08:00:00.000Z');
    // only the new candidates went through the stages; the old one was not redone
    for (const stage of [
      'swe5g.link',
      'swe5g.filter',
      'swe5g.resolve',
      'swe5g.testgen',
      'swe5g.build',
      'swe5g.validate',
    ])
      expect(ran(r, stage), stage).toBe(2);
    expect(r.stdout).toContain('refreshed: swe-bench-5g 1.0.0 -> 1.1.0 (written)');
    expect(r.stdout).toContain('rows 1 -> 3; new candidates released 2 of 2; removed 0');
    const v2 = release('1.1.0');
    expect(v2.rows.map((x) => x.instance_id)).toEqual([id(OLD), ...NEW.map(id)].sort());
    // the carried row is the released one, byte for byte
    expect(v2.rows.find((x) => x.instance_id === id(OLD))).toEqual(v1.rows[0]);
    expect(v2.manifest).toMatchObject({
      previous_version: '1.0.0',
      cutoff: '2025-08-15T12:00:00.000Z',
    });
    expect(v2.changelog).toContain('Against 1.0.0: 1 -> 3 rows; 2 added, 0 removed, 0 changed.');
    expect(v2.changelog).toContain(`- added: ${NEW.map((f) => `\`${id(f)}\``).join(', ')}`);
    expect(v2.changelog).not.toContain(id(OLD));
  });

  it('a second refresh with nothing new writes no version and says so (exit 0)', async () => {
    const r = await cli(['refresh', 'swe5g']);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.stdout).toContain(
      'nothing new: no swe-bench-5g row landed at or after 2025-08-15T12:00:00.000Z that 1.1.0 lacks',
    );
    expect(ran(r, 'swe5g.validate')).toBe(0);
    expect(readdirSync(join(state, 'releases', 'swe-bench-5g')).sort()).toEqual(['1.0.0', '1.1.0']);
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
