/**
 * The git mirror source (pipeline/providers/git/mirror-source.ts) and the swe5g mining stages with
 * `source: git`, on real repositories this test builds: GitHub merge and squash PRs with
 * `refs/pull/N/head`, a Bitbucket-style internal merge, issue references in commit messages and
 * branch names, a bot PR, a docs-only PR, and an Open5GS-style repository where `(#N)` names an
 * issue unless `refs/pull/N/head` exists.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach, vi } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { openState } from '../../../../pipeline/state.js';
import { EventBus, type StampedEvent } from '../../../../pipeline/events.js';
import { runSwe5gMining } from '../../../fixtures/swe5g-mining-run.js';
import { swe5gConfigSchema, type HasSwe5g } from '../../../../stages/swe5g/config.js';
import type { Candidate, LinkedPR } from '../../../../stages/swe5g/types.js';
import { findMirror, mineMirror } from '../../../../pipeline/providers/git/mirror-source.js';
import { groupFailures } from '../../../../stages/swe5g/mine/mine.js';

let root: string;
const commits: Record<string, string> = {};

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd: dir,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: root,
      GIT_AUTHOR_NAME: 'Dev',
      GIT_AUTHOR_EMAIL: 'dev@example.org',
      GIT_COMMITTER_NAME: 'Dev',
      GIT_COMMITTER_EMAIL: 'dev@example.org',
      GIT_CONFIG_NOSYSTEM: '1',
    },
  }).trim();
}

function write(dir: string, files: Record<string, string>): void {
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), c);
  }
}

function commit(
  dir: string,
  files: Record<string, string>,
  message: string,
  author?: string,
): string {
  write(dir, files);
  git(dir, 'add', '-A');
  const args = ['commit', '-q', '-m', message];
  if (author) args.push(`--author=${author} <${author}@example.org>`);
  git(dir, ...args);
  return git(dir, 'rev-parse', 'HEAD');
}

/** A PR on a branch merged with --no-ff and the given merge message; records refs/pull/N/head. */
function mergePr(
  dir: string,
  n: number | null,
  branch: string,
  files: Record<string, string>,
  messages: string[],
  mergeMessage: string,
  author?: string,
): { head: string; merge: string; base: string } {
  const base = git(dir, 'rev-parse', 'HEAD');
  git(dir, 'checkout', '-q', '-b', branch);
  let head = base;
  messages.forEach((m, i) => {
    head = commit(dir, i === 0 ? files : { [`${branch}.${i}.txt`]: m }, m, author);
  });
  git(dir, 'checkout', '-q', 'main');
  git(dir, 'merge', '-q', '--no-ff', '-m', mergeMessage, branch);
  if (n !== null) git(dir, 'update-ref', `refs/pull/${n}/head`, head);
  return { head, merge: git(dir, 'rev-parse', 'HEAD'), base };
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-gitmine-'));
  // free5gc/amf-like: issues filed in free5gc/free5gc
  const amf = join(root, 'work-amf');
  mkdirSync(amf);
  git(amf, 'init', '-q', '-b', 'main');
  commit(amf, { 'internal/ngap/handler.go': 'package ngap\n', 'README.md': '# amf\n' }, 'initial');
  const pr1 = mergePr(
    amf,
    1,
    'fix/12-nil-check',
    { 'internal/ngap/handler.go': 'package ngap\n// nil check\n' },
    ['amf: nil check on GNbId\n\nFixes free5gc/free5gc#12', 'review: rename'],
    'Merge pull request #1 from alice/fix/12-nil-check\n\nfix: nil check on GNbId',
  );
  commits.pr1_head = pr1.head;
  commits.pr1_merge = pr1.merge;
  commits.pr1_base = pr1.base;
  // squash PR 2 with its head kept under refs/pull/2/head
  commits.pr2_base = git(amf, 'rev-parse', 'HEAD');
  git(amf, 'checkout', '-q', '-b', 'side2');
  commits.pr2_head = commit(amf, { 'internal/gmm/sm.go': 'package gmm\n// wip\n' }, 'wip');
  git(amf, 'checkout', '-q', 'main');
  commits.pr2_merge = commit(
    amf,
    { 'internal/gmm/sm.go': 'package gmm\n// reject NIA0\n' },
    'fix: reject NIA0 (#2)\n\n* wip\n\nresolves https://github.com/free5gc/free5gc/issues/13',
  );
  git(amf, 'update-ref', 'refs/pull/2/head', commits.pr2_head);
  // Bitbucket-style internal merge
  const bb = mergePr(
    amf,
    null,
    'bugfix/FR5GC-1250-dont-quit',
    { 'internal/sbi/server.go': 'package sbi\n' },
    ['FR5GC-1250 do not quit on error'],
    'Merged in bugfix/FR5GC-1250-dont-quit (pull request #53)\n\nFR5GC-1250 do not quit',
  );
  commits.bb_merge = bb.merge;
  // dependabot PR and a docs-only squash PR without refs/pull (issues live elsewhere: still a PR)
  mergePr(
    amf,
    3,
    'dependabot/go_modules/golang.org/x/net-0.38.0',
    { 'go.mod': 'module amf\n' },
    ['Bump golang.org/x/net'],
    'Merge pull request #3 from free5gc/dependabot/go_modules/golang.org/x/net-0.38.0\n\nBump',
  );
  commit(amf, { 'README.md': '# amf\nmore docs\n' }, 'docs: README (#14)');
  commit(amf, { 'internal/ngap/util.go': 'package ngap\n' }, 'chore: plain commit, not a PR');
  const mirrors = join(root, 'mirrors');
  mkdirSync(join(mirrors, 'free5gc+amf'), { recursive: true });
  git(root, 'clone', '-q', '--mirror', amf, join(mirrors, 'free5gc+amf', 'repo'));

  // open5gs-like: issues in the same repository, so (#N) is a PR only with refs/pull/N/head
  const o5 = join(root, 'work-open5gs');
  mkdirSync(o5);
  git(o5, 'init', '-q', '-b', 'main');
  commit(o5, { 'src/amf/ngap.c': 'int x;\n' }, 'initial');
  commits.o5_issue = commit(
    o5,
    { 'src/amf/ngap.c': 'int x = 1;\n' },
    '[AMF] Fix crash on NGAP (#20)',
  );
  commits.o5_pr = commit(o5, { 'src/smf/gsm.c': 'int y;\n' }, '[SMF] Fix leak (#21)');
  git(o5, 'update-ref', 'refs/pull/21/head', commits.o5_pr);
  // a later commit naming the same PR is a follow-up, not the landing commit
  commit(o5, { 'src/smf/gsm.c': 'int y = 0;\n' }, '[SMF] follow-up to the leak fix (#21)');
  mkdirSync(join(mirrors, 'open5gs'), { recursive: true });
  git(root, 'clone', '-q', '--mirror', o5, join(mirrors, 'open5gs', 'open5gs.git'));

  writeFileSync(
    join(root, 'repos.yaml'),
    `version: 1
repositories:
  - { id: free5gc/amf, owner: free5gc, name: amf, language: go, default_branch: main, nf: AMF, issues_repo: free5gc/free5gc, license: Apache-2.0, test: { scope: touched }, image: go }
  - { id: open5gs/open5gs, owner: open5gs, name: open5gs, language: c, default_branch: main, nf: 5GC, issues_repo: open5gs/open5gs, license: AGPL-3.0, test: { scope: repo }, image: c-meson }
`,
  );
  const longBody =
    'The AMF crashes with a nil pointer dereference when the gNB omits GlobalRANNodeID in the NGSetupRequest; it should reject the setup instead.';
  writeFileSync(
    join(root, 'issues.jsonl'),
    [
      {
        number: 12,
        title: 'AMF nil GNbId panic',
        body: longBody,
        state: 'closed',
        created_at: '2024-01-01T00:00:00Z',
        labels: [{ name: 'bug' }],
        repository_url: 'https://api.github.com/repos/free5gc/free5gc',
      },
      {
        number: 20,
        title: '[SMF] memory leak on session release',
        body: longBody,
        state: 'closed',
        created_at: '2024-01-01T00:00:00Z',
        repository_url: 'https://api.github.com/repos/open5gs/open5gs',
      },
      {
        number: 21,
        title: '[SMF] Fix leak',
        body: 'Fixes #20',
        state: 'closed',
        created_at: '2024-01-02T00:00:00Z',
        html_url: 'https://github.com/open5gs/open5gs/pull/21',
        pull_request: { url: 'https://api.github.com/repos/open5gs/open5gs/pulls/21' },
      },
      {
        number: 99,
        title: 'a PR in the export',
        body: '',
        state: 'closed',
        created_at: '2024-01-01T00:00:00Z',
        html_url: 'https://github.com/free5gc/free5gc/issues/99',
        pull_request: {},
      },
    ]
      .map((o) => JSON.stringify(o))
      .join('\n') + '\n',
  );
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

async function runMining(
  extra: Record<string, unknown> = {},
  top: Record<string, unknown> = {},
  stateName = `state-${Math.random().toString(36).slice(2)}`,
) {
  const state = openState(join(root, stateName));
  const bus = new EventBus();
  const events: StampedEvent[] = [];
  bus.on((e) => events.push(e));
  const config: HasSwe5g = {
    swe5g: swe5gConfigSchema.parse({
      source: 'git',
      mining: { mirrors_dir: 'mirrors', ...extra },
      ...top,
    }),
  };
  const result = await runSwe5gMining({
    config,
    dir: root,
    stateDir: state.store.file.replace(/\/state\.db$/, ''),
    state,
    bus,
  });
  const outcomes: Record<string, string> = {};
  for (const r of state.store.items('swe5g.filter'))
    outcomes[r.key] = r.state === 'done' ? 'kept' : (r.skipReason ?? r.state);
  return { result, events, state, outcomes };
}

describe('git mirror source', () => {
  it('finds the mirror layouts <owner>+<name>/repo and <owner>/<name>.git', () => {
    const m = join(root, 'mirrors');
    expect(findMirror(m, 'free5gc', 'amf')).toBe(join(m, 'free5gc+amf', 'repo'));
    expect(findMirror(m, 'open5gs', 'open5gs')).toBe(join(m, 'open5gs', 'open5gs.git'));
    expect(findMirror(m, 'free5gc', 'smf')).toBeUndefined();
  });

  it('recognises merge and squash PRs with their three commits, and foreign-forge merges', async () => {
    const { prs } = await mineMirror(join(root, 'mirrors', 'free5gc+amf', 'repo'), {
      branch: 'main',
      issuesElsewhere: true,
    });
    const by = new Map(prs.map((p) => [`${p.foreign_forge ? 'bb' : 'gh'}${p.number}`, p]));
    expect([...by.keys()].sort()).toEqual(['bb53', 'gh1', 'gh14', 'gh2', 'gh3']);
    expect(by.get('gh1')).toMatchObject({
      merge_style: 'merge',
      merge_commit: commits.pr1_merge,
      base_commit: commits.pr1_base,
      pr_head: commits.pr1_head,
      head_ref: 'fix/12-nil-check',
      author: 'alice',
      title: 'fix: nil check on GNbId',
    });
    expect(by.get('gh1')!.commit_messages).toHaveLength(2);
    expect(by.get('gh2')).toMatchObject({
      merge_style: 'squash',
      merge_commit: commits.pr2_merge,
      base_commit: commits.pr2_base,
      pr_head: commits.pr2_head,
      title: 'fix: reject NIA0',
    });
    expect(by.get('gh2')!.changed_files).toEqual([
      { path: 'internal/gmm/sm.go', additions: 2, deletions: 0 },
    ]);
    expect(by.get('gh14')!.pr_head).toBeNull();
    expect(by.get('bb53')).toMatchObject({ merge_commit: commits.bb_merge, foreign_forge: true });
  });

  it('treats (#N) as an issue in a repository holding its own issues unless refs/pull/N/head exists', async () => {
    const { prs } = await mineMirror(join(root, 'mirrors', 'open5gs', 'open5gs.git'), {
      branch: 'main',
      issuesElsewhere: false,
    });
    expect(prs.map((p) => [p.number, p.merge_commit])).toEqual([[21, commits.o5_pr]]);
  });

  it('runs mine/link/filter from git: incomplete candidates, reasons, evidence', async () => {
    const { result, state, outcomes } = await runMining();
    expect(result.exitCode).toBe(0);
    const foreignKey = Object.keys(outcomes).find((k) => k.includes('foreign53'))!;
    expect(foreignKey).toMatch(/^free5gc__amf-foreign53-[0-9a-f]{7}$/);
    expect(outcomes).toEqual({
      'free5gc__amf-1': 'kept',
      'free5gc__amf-2': 'kept',
      'free5gc__amf-3': 'bot_author',
      'free5gc__amf-14': 'docs_or_ci_only',
      [foreignKey]: 'foreign_forge_pr',
      'open5gs__open5gs-21': 'kept',
    });
    const c1 = state.store.item('swe5g.filter', 'free5gc__amf-1')!.output as Candidate;
    expect(c1).toMatchObject({
      source: 'git',
      incomplete: true,
      problem_statement: '',
      merge_commit: commits.pr1_merge,
      base_commit: commits.pr1_base,
      pr_head: commits.pr1_head,
      alias: 'amf_pr1',
    });
    expect(c1.links.map((l) => [l.kind, l.issue])).toEqual([
      ['closing_keyword', 'free5gc/free5gc#12'],
      ['branch_name', 'free5gc/free5gc#12'],
    ]);
    const l2 = state.store.item('swe5g.link', 'free5gc__amf-2')!.output as LinkedPR;
    // the squash subject's own "(#2)" is the PR itself, not an issue
    expect(l2.links.map((l) => l.issue)).toEqual(['free5gc/free5gc#13']);
    state.close();
  });

  it('completes git-only candidates from --issues-from (JSON Lines of REST issues)', async () => {
    const { state, outcomes } = await runMining({ issues_from: 'issues.jsonl' });
    expect(outcomes['free5gc__amf-1']).toBe('kept');
    const c1 = state.store.item('swe5g.filter', 'free5gc__amf-1')!.output as Candidate;
    expect(c1.incomplete).toBe(false);
    expect(c1.problem_statement).toMatch(/^AMF nil GNbId panic\n\nThe AMF crashes/);
    // a PR row of the file gives the git-only PR its body, whose closing reference links issue 20
    const o21 = state.store.item('swe5g.filter', 'open5gs__open5gs-21')!.output as Candidate;
    expect(o21.pr_body).toBe('Fixes #20');
    expect(o21.links[0]).toMatchObject({
      kind: 'closing_keyword',
      where: 'pr_body',
      issue: 'open5gs/open5gs#20',
    });
    expect(o21.problem_statement).toMatch(/^\[SMF\] memory leak/);
    expect(c1.issues).toEqual([
      expect.objectContaining({
        repo: 'free5gc/free5gc',
        number: 12,
        labels: ['bug'],
        state: 'closed',
      }),
    ]);
    state.close();
  });

  it('a state grows: a second instances list adds to the first; narrowing is explicit', async () => {
    const issues = { issues_from: 'issues.jsonl' };
    const one = await runMining(issues, { instances: ['free5gc__amf-1'] }, 'state-grow');
    expect(one.outcomes['free5gc__amf-1']).toBe('kept');
    expect(one.outcomes['open5gs__open5gs-21']).toBe('not_selected');
    one.state.close();
    // issue 31: the second list used to orphan the first list's instances
    const two = await runMining(issues, { instances: ['open5gs__open5gs-21'] }, 'state-grow');
    expect(two.outcomes['free5gc__amf-1']).toBe('kept');
    expect(two.outcomes['open5gs__open5gs-21']).toBe('kept');
    two.state.close();
    const narrowed = await runMining(
      issues,
      { instances: ['open5gs__open5gs-21'], selection: 'replace' },
      'state-grow',
    );
    expect(narrowed.outcomes['free5gc__amf-1']).toBe('not_selected');
    expect(narrowed.outcomes['open5gs__open5gs-21']).toBe('kept');
    narrowed.state.close();
    // a fresh state selects exactly its list
    const fresh = await runMining(issues, { instances: ['open5gs__open5gs-21'] });
    expect(fresh.outcomes['free5gc__amf-1']).toBe('not_selected');
    fresh.state.close();
  });

  it('telebench mine --issues-from FILE completes candidates through the CLI', () => {
    writeFileSync(
      join(root, 'config.yaml'),
      'version: 1\nswe5g:\n  source: git\n  mining:\n    mirrors_dir: mirrors\n',
    );
    const cli = join(dirname(fileURLToPath(import.meta.url)), '../../../../bin/telebench.js');
    const state = join(root, 'state-cli');
    const env: NodeJS.ProcessEnv = { ...process.env, CI: 'true' };
    delete env.TELEBENCH_ISSUES_FROM;
    execFileSync(
      process.execPath,
      [
        cli,
        '--state',
        state,
        'mine',
        '--config',
        join(root, 'config.yaml'),
        '--issues-from',
        join(root, 'issues.jsonl'),
      ],
      { env, stdio: 'pipe' },
    );
    const shown = JSON.parse(
      execFileSync(
        process.execPath,
        [cli, '--state', state, 'show', 'swe5g.filter', 'free5gc__amf-1'],
        { env, encoding: 'utf8' },
      ),
    ) as { output: Candidate };
    expect(shown.output.incomplete).toBe(false);
    expect(shown.output.issues[0]?.number).toBe(12);
    const report = execFileSync(
      process.execPath,
      [cli, '--state', state, 'report', 'swe5g-mine', '--config', join(root, 'config.yaml')],
      { env, encoding: 'utf8' },
    );
    expect(report).toContain(
      '| free5gc/amf | git | 5 | 2 | 1 | 0 | 2 | 1 | docs_or_ci_only 1, bot_author 1, foreign_forge_pr 1 |',
    );
    // the hint's second command, in the same state and without the flag, still links with the
    // file (the state keeps a copy): issue 31 measured it re-linking everything without it
    /** `telebench run swe5g-mine` in `st`, then the filter's record of free5gc__amf-1 there. */
    const mineAndShow = (st: string): Candidate => {
      const cfg = join(root, 'config.yaml');
      execFileSync(process.execPath, [cli, '--state', st, 'run', 'swe5g-mine', '--config', cfg], {
        env,
        stdio: 'pipe',
      });
      const shown = execFileSync(
        process.execPath,
        [cli, '--state', st, 'show', 'swe5g.filter', 'free5gc__amf-1'],
        { env, encoding: 'utf8' },
      );
      return (JSON.parse(shown) as { output: Candidate }).output;
    };
    const again = mineAndShow(state);
    expect(again.incomplete).toBe(false);
    expect(again.problem_statement).toMatch(/^AMF nil GNbId panic/);
    expect(existsSync(join(state, 'inputs', 'issues-from.jsonl'))).toBe(true);
    // a state never given the file links without it
    const none = { output: mineAndShow(join(root, 'state-cli-none')) };
    expect(none.output.incomplete).toBe(true);
  });

  it('rejects a malformed --issues-from file naming the file and line (config error)', async () => {
    writeFileSync(
      join(root, 'bad.jsonl'),
      '{"number": 1, "title": "x", "state": "closed", "created_at": "2024"}\n{oops\n',
    );
    await expect(runMining({ issues_from: 'bad.jsonl' })).rejects.toThrow(
      /bad\.jsonl:1: issue #1 has neither repository_url/,
    );
    writeFileSync(join(root, 'bad2.jsonl'), '\n{oops\n');
    await expect(runMining({ issues_from: 'bad2.jsonl' })).rejects.toMatchObject({
      code: 'config_invalid',
      context: { line: 2 },
    });
  });

  it('swe5g.instances restricts the branch; keep_git_without_issue off rejects unreferenced PRs', async () => {
    const a = await runMining({}, { instances: ['free5gc__amf-1'] });
    expect(Object.entries(a.outcomes).filter(([, v]) => v === 'kept')).toEqual([
      ['free5gc__amf-1', 'kept'],
    ]);
    expect(a.outcomes['free5gc__amf-2']).toBe('not_selected');
    a.state.close();
    const b = await runMining({}, { filter: { keep_git_without_issue: false } });
    expect(b.outcomes['open5gs__open5gs-21']).toBe('no_linked_issue');
    expect(b.outcomes['free5gc__amf-1']).toBe('kept');
    b.state.close();
  });

  it('stops at preflight when source is git and no mirror exists', async () => {
    const { result, events, state } = await runMining({ mirrors_dir: 'nowhere' });
    expect(result.exitCode).toBe(3);
    expect(JSON.stringify(events.find((e) => e.kind === 'stage-preflight-failed'))).toMatch(
      /mirrors_dir/,
    );
    state.close();
  });

  describe('no mirrors folder configured: clones into <state>/mirrors', () => {
    // each test sets or clears $TELEBENCH_MIRRORS_DIR; vitest puts the original back
    afterEach(() => vi.unstubAllEnvs());

    const logs = (events: StampedEvent[]): string =>
      events
        .filter((e) => e.kind === 'log')
        .map((e) => JSON.stringify(e))
        .join('\n');

    it('clones from git_url_base on the first run and updates the clone on the second', async () => {
      // A local "GitHub": bare repositories at <base>/<owner>/<name>.git.
      const gh = join(root, 'github');
      mkdirSync(join(gh, 'free5gc'), { recursive: true });
      mkdirSync(join(gh, 'open5gs'), { recursive: true });
      git(
        root,
        'clone',
        '-q',
        '--mirror',
        join(root, 'mirrors', 'free5gc+amf', 'repo'),
        join(gh, 'free5gc', 'amf.git'),
      );
      git(
        root,
        'clone',
        '-q',
        '--mirror',
        join(root, 'mirrors', 'open5gs', 'open5gs.git'),
        join(gh, 'open5gs', 'open5gs.git'),
      );
      vi.stubEnv('TELEBENCH_MIRRORS_DIR', undefined);
      const top = { environments: { git_url_base: 'github' } };
      const a = await runMining({ mirrors_dir: undefined }, top, 'state-clone');
      expect(a.result.exitCode).toBe(0);
      const cloned = join(root, 'state-clone', 'mirrors', 'free5gc', 'amf.git');
      expect(git(cloned, 'rev-parse', 'refs/heads/main').trim()).toBe(
        git(join(gh, 'free5gc', 'amf.git'), 'rev-parse', 'refs/heads/main').trim(),
      );
      expect(logs(a.events)).toContain(`cloning ${join(gh, 'free5gc', 'amf.git')} into ${cloned}`);
      expect(a.outcomes['free5gc__amf-1']).toBe('kept');
      a.state.close();

      // A new commit upstream reaches the clone through the second run's fetch, not a re-clone.
      const inode = statSync(join(cloned, 'objects')).ino;
      const work = join(root, 'work-update');
      git(root, 'clone', '-q', join(gh, 'free5gc', 'amf.git'), work);
      writeFileSync(join(work, 'NEW.md'), 'new\n');
      git(work, 'add', '.');
      git(work, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'docs: new');
      git(work, 'push', '-q', 'origin', 'HEAD:main');
      const b = await runMining({ mirrors_dir: undefined }, top, 'state-clone');
      expect(b.result.exitCode).toBe(0);
      expect(logs(b.events)).toContain(`updating mirror ${cloned}`);
      expect(logs(b.events)).not.toContain('cloning ');
      expect(statSync(join(cloned, 'objects')).ino).toBe(inode);
      expect(git(cloned, 'rev-parse', 'refs/heads/main').trim()).toBe(
        git(work, 'rev-parse', 'HEAD').trim(),
      );
      b.state.close();
    });

    it('uses $TELEBENCH_MIRRORS_DIR when mirrors_dir is unset (no clone)', async () => {
      vi.stubEnv('TELEBENCH_MIRRORS_DIR', join(root, 'mirrors'));
      const r = await runMining(
        { mirrors_dir: undefined },
        { environments: { git_url_base: 'http://127.0.0.1:9' } },
        'state-env',
      );
      expect(r.result.exitCode).toBe(0);
      expect(r.outcomes['free5gc__amf-1']).toBe('kept');
      expect(logs(r.events)).not.toContain('cloning ');
      expect(existsSync(join(root, 'state-env', 'mirrors'))).toBe(false);
      r.state.close();
    });

    it('stops at preflight naming the URL when git_url_base is unreachable', async () => {
      vi.stubEnv('TELEBENCH_MIRRORS_DIR', undefined);
      const r = await runMining(
        { mirrors_dir: undefined },
        { environments: { git_url_base: 'http://127.0.0.1:9' } },
        'state-offline',
      );
      expect(r.result.exitCode).toBe(3);
      const pf = JSON.stringify(r.events.find((e) => e.kind === 'stage-preflight-failed'));
      // one cause (connection refused), named once, with the URLs it hit
      expect(pf).toMatch(
        /\d+ repositories unreachable \([^)]*http:\/\/127\.0\.0\.1:9\/free5gc\/amf\.git[^)]*\): [^;]*127\.0\.0\.1/,
      );
      expect(pf.match(/unreachable/g)).toHaveLength(1);
      expect(pf).toContain('TELEBENCH_MIRRORS_DIR');
      r.state.close();
    });
  });
});

describe('groupFailures (the preflight message when clones fail)', () => {
  const fail = (owner: string, name: string, why: string) => {
    const url = `https://github.com/${owner}/${name}.git`;
    return {
      repo: `${owner}/${name}`,
      url,
      message: `could not mirror ${url} into /s/mirrors/${owner}/${name}.git: fatal: unable to access '${url}/': ${why}\nmore`,
    };
  };
  it('names one cause once for every repository it hit, and the others apart', () => {
    const dns = 'Could not resolve host: github.com';
    const names = ['amf', 'smf', 'udm', 'pcf', 'nrf', 'ausf', 'nssf'];
    const out = groupFailures([
      ...names.map((n) => fail('free5gc', n, dns)),
      fail('magma', 'magma', 'The requested URL returned error: 403'),
    ]);
    expect(out).toBe(
      `7 repositories unreachable (https://github.com/free5gc/amf.git, https://github.com/free5gc/smf.git, https://github.com/free5gc/udm.git, https://github.com/free5gc/pcf.git, https://github.com/free5gc/nrf.git, and 2 more): fatal: unable to access '<url>/': ${dns}; https://github.com/magma/magma.git unreachable: fatal: unable to access '<url>/': The requested URL returned error: 403`,
    );
  });
});
