/**
 * `telebench plan` end to end through the real CLI, without Docker (`--depth testgen`), on real
 * git repositories this test builds: project `acme` (Go, two nil-check fixes and a formatting-only
 * change: kept, the fixes get a fail-to-pass test, the formatting change is lost with
 * `no_fix_pattern`; a docs-only PR the filter rejects), project `zeta` (three formatting-only
 * changes: every sampled one is lost), and a registry entry with no mirror (reported, not fatal).
 * The estimate's counts are the funnel's, its projections follow from what the sampled ids are,
 * a later full run reuses the sample's work, and bad input stops with a clear error (exit 2).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { runCli } from '../../../fixtures/cli.js';
import { openState } from '../../../../pipeline/state.js';
import type { PlanEstimate } from '../../../../stages/swe5g/plan/render.js';

let root: string;
const GIT_ENV = {
  PATH: process.env.PATH,
  GIT_AUTHOR_NAME: 'Dev',
  GIT_AUTHOR_EMAIL: 'dev@example.org',
  GIT_COMMITTER_NAME: 'Dev',
  GIT_COMMITTER_EMAIL: 'dev@example.org',
  GIT_CONFIG_NOSYSTEM: '1',
};
const git = (dir: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...GIT_ENV, HOME: root } }).trim();

function write(dir: string, files: Record<string, string>): void {
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), c);
  }
}

/** Merges a one-commit PR #n (a `--no-ff` merge, `refs/pull/n/head` recorded). */
function pr(dir: string, n: number, files: Record<string, string>, title: string): void {
  git(dir, 'checkout', '-q', '-b', `pr${n}`);
  write(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', title);
  const head = git(dir, 'rev-parse', 'HEAD');
  git(dir, 'checkout', '-q', 'main');
  git(
    dir,
    'merge',
    '-q',
    '--no-ff',
    '-m',
    `Merge pull request #${n} from dev/pr${n}\n\n${title}`,
    `pr${n}`,
  );
  git(dir, 'update-ref', `refs/pull/${n}/head`, head);
}

const GO = `package ngap

// Node is a RAN node.
type Node struct{ ID *struct{ V string } }

// Name returns the node id.
func Name(n *Node) string {
	return n.ID.V
}

// Feed sends the node id.
func Feed(n *Node, out chan string) {
	out <- n.ID.V
}
`;

/** A Go repository `<owner>/<name>` with PRs made by `prs`, mirrored into `<root>/mirrors`. */
function repo(owner: string, name: string, prs: (dir: string) => void): void {
  const dir = join(root, `work-${name}`);
  mkdirSync(dir);
  git(dir, 'init', '-q', '-b', 'main');
  write(dir, { 'go.mod': `module example.org/${name}\n\ngo 1.21\n`, 'ngap/node.go': GO });
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  prs(dir);
  git(root, 'clone', '-q', '--mirror', dir, join(root, 'mirrors', `${owner}+${name}`, 'repo'));
}

const fmt = (dir: string, n: number, spaces: number): void =>
  pr(
    dir,
    n,
    { 'ngap/node.go': GO.replace('return n.ID.V', `return${' '.repeat(spaces)}n.ID.V`) },
    `ngap: format (${n})`,
  );

const entry = (owner: string, name: string): string =>
  `  - { id: ${owner}/${name}, owner: ${owner}, name: ${name}, language: go, default_branch: main, nf: AMF, issues_repo: ${owner}/${name}, license: Apache-2.0, test: { scope: touched }, image: go }`;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-plan-'));
  repo('acme', 'nf', (dir) => {
    pr(
      dir,
      1,
      {
        'ngap/node.go': GO.replace(
          '\treturn n.ID.V',
          '\tif n.ID == nil {\n\t\treturn ""\n\t}\n\treturn n.ID.V',
        ),
      },
      'ngap: nil check in Name',
    );
    fmt(dir, 2, 2);
    pr(dir, 3, { 'README.md': '# nf\n' }, 'docs: readme');
    pr(
      dir,
      4,
      {
        'ngap/node.go': GO.replace(
          '\tout <- n.ID.V',
          '\tif n.ID == nil {\n\t\treturn\n\t}\n\tout <- n.ID.V',
        ),
      },
      'ngap: nil check in Feed',
    );
  });
  repo('zeta', 'core', (dir) => [1, 2, 3].forEach((n) => fmt(dir, n, n + 1)));
  write(root, {
    'repos.yaml': `version: 1\nrepositories:\n${[entry('acme', 'nf'), entry('zeta', 'core'), entry('acme', 'gone')].join('\n')}\n`,
    'plan.yaml': [
      'version: 1',
      'swe5g:',
      '  registry: repos.yaml',
      '  source: git',
      '  mining: { mirrors_dir: mirrors }',
      '  filter: { keep_git_without_issue: true }',
      '  testgen: { strategy_a: false }',
      '',
    ].join('\n'),
    'no-registry.yaml': 'version: 1\nswe5g:\n  registry: missing-repos.yaml\n  source: git\n',
  });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

const FIXES = new Set(['acme__nf-1', 'acme__nf-4']);

describe('telebench plan', () => {
  it('projects a testgen sample per project with the funnel counts, and a full run reuses it', async () => {
    const state = join(root, 'state');
    const args = [
      '--state',
      state,
      'plan',
      '--config',
      join(root, 'plan.yaml'),
      '--depth',
      'testgen',
    ];
    const r = await runCli([...args, '--sample', '2', '--seed', '7', '--json']);
    expect(r.stderr).toContain('telebench run swe5g');
    expect(r.code).toBe(0);
    const e = JSON.parse(r.stdout) as PlanEstimate;
    const by = Object.fromEntries(e.projects.map((p) => [p.project, p]));
    // the counts are the funnel's: 4 PRs of acme, the docs one rejected; 3 of zeta, all kept
    expect(by.acme!.funnel).toMatchObject({ mined: 4, kept: 3, rejected: { docs_or_ci_only: 1 } });
    expect(by.zeta!.funnel).toMatchObject({ mined: 3, kept: 3, rejected: {} });
    expect(e.not_mined).toEqual({ no_mirror: ['acme/gone'] });
    // acme: the sampled fixes get a test, a sampled formatting change is lost at testgen
    const acme = by.acme!;
    expect(acme.sample).toHaveLength(2);
    const k = acme.sample.filter((id) => FIXES.has(id)).length;
    expect(acme.tests).toMatchObject({ k, n: 2, point: (3 * k) / 2 });
    expect(acme.losses.map((l) => [l.reason, l.projected.k])).toEqual(
      k < 2 ? [['no_fix_pattern', 2 - k]] : [],
    );
    // zeta: everything lost, projected 0 with the exact upper end 3 (1 - 0.025^(1/2))
    const zeta = by.zeta!;
    expect(zeta.tests).toMatchObject({ k: 0, n: 2, point: 0, low: 0 });
    expect(zeta.tests.high).toBeCloseTo(3 * (1 - Math.sqrt(0.025)), 6);
    expect(zeta.losses).toEqual([
      { stage: 'testgen', reason: 'no_fix_pattern', projected: expect.objectContaining({ k: 2 }) },
    ]);
    expect(zeta.validated).toBeNull();
    expect(e.total.validated).toBeNull();

    // the same seed draws the same sample; the table names what it projects
    const again = await runCli([...args, '--sample', '2', '--seed', '7']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('| zeta | 3 |');
    expect(again.stdout).toContain('testgen: no_fix_pattern 2');
    expect(again.stdout).toContain('- no_mirror (1): acme/gone');

    // the state selects every kept candidate again, and a full run does not redo the sample
    const sampled = [...acme.sample, ...zeta.sample];
    const before = openState(state, { mode: 'read' });
    const done = Object.fromEntries(
      sampled.map((id) => [id, before.store.item('swe5g.testgen', id)!.finishedAt]),
    );
    const filtered = [...before.store.items('swe5g.filter')].filter((x) => x.state === 'done');
    expect(filtered).toHaveLength(6);
    before.close();
    const full = (stage: string) =>
      runCli([
        '--state',
        state,
        'run',
        'swe5g',
        '--config',
        join(root, 'plan.yaml'),
        '--only',
        stage,
      ]);
    expect((await full('swe5g.resolve')).code).toBe(0);
    expect((await full('swe5g.testgen')).code).toBe(0);
    const after = openState(state, { mode: 'read' });
    const tested = [...after.store.items('swe5g.testgen')];
    expect(
      tested
        .filter((x) => x.state === 'done')
        .map((x) => x.key)
        .sort(),
    ).toEqual([...FIXES]);
    expect(tested).toHaveLength(6);
    for (const id of sampled)
      expect(after.store.item('swe5g.testgen', id)!.finishedAt).toBe(done[id]);
    after.close();
  });

  it('stops with a clear error for a sample of 0, a sample larger than a project, and no registry', async () => {
    const state = join(root, 'state-bad');
    const cfg = join(root, 'plan.yaml');
    const zero = await runCli(['--state', state, 'plan', '--config', cfg, '--sample', '0']);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain('--sample expects a whole number of at least 1, got "0"');
    const big = await runCli([
      '--state',
      state,
      'plan',
      '--config',
      cfg,
      '--sample',
      '4',
      '--depth',
      'testgen',
    ]);
    expect(big.code).toBe(2);
    expect(big.stderr).toMatch(/--sample 4 is more than the 3 kept candidates of acme/);
    const none = await runCli([
      '--state',
      state,
      'plan',
      '--config',
      join(root, 'no-registry.yaml'),
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/missing-repos\.yaml/);
  });
});
