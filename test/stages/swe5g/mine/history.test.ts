/**
 * Issue 21, "Mining over the whole history" and "Missing objects": real repositories built here,
 * mirrored with `git clone --mirror`, through the mining stages (swe5g.mine -> link -> filter):
 * - main fast-forwarded onto a branch that had merged main: a PR landed on the old main line is
 *   off the first-parent line and still found;
 * - a maintainer-rebased landing (new hash, same `git patch-id --stable` as `refs/pull/N/head`);
 * - a `(#N)` subject while `refs/pull/N/head` belongs to a PR that landed elsewhere: the commit is
 *   the PR its patch-id names, never N's;
 * - an object file removed from the mirror: that commit is `object_missing`, the rest is mined.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { execFileSync } from 'node:child_process';
import { openState } from '../../../../pipeline/state.js';
import { runSwe5gMining } from '../../../fixtures/swe5g-mining-run.js';
import { swe5gConfigSchema, type HasSwe5g } from '../../../../stages/swe5g/config.js';
import type { MineOutput } from '../../../../stages/swe5g/mine/mine.js';
import type { MinedPR } from '../../../../stages/swe5g/types.js';

let root: string;
const c: Record<string, string> = {};
let date = Date.parse('2024-03-01T10:00:00Z');

function git(dir: string, ...args: string[]): string {
  // each call a minute later: committer dates order the history as it was made
  const at = new Date((date += 60_000)).toISOString();
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
      GIT_AUTHOR_DATE: at,
      GIT_COMMITTER_DATE: at,
      GIT_CONFIG_NOSYSTEM: '1',
    },
  }).trim();
}

function commit(dir: string, files: Record<string, string | Buffer>, message: string): string {
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', message);
  return git(dir, 'rev-parse', 'HEAD');
}

/** A PR branch off `from` with one commit; `refs/pull/n/head` points to it. Back on main after. */
function prHead(dir: string, n: number, from: string, files: Record<string, string>, msg: string) {
  git(dir, 'checkout', '-q', '-b', `pr${n}`, from);
  const head = commit(dir, files, msg);
  git(dir, 'update-ref', `refs/pull/${n}/head`, head);
  git(dir, 'checkout', '-q', 'main');
  return head;
}

/** The maintainer lands `head` on the current branch as a new commit (rebase), with `subject`. */
function rebaseLand(dir: string, head: string, subject?: string): string {
  git(dir, 'cherry-pick', head);
  if (subject) git(dir, 'commit', '-q', '--amend', '-m', subject);
  return git(dir, 'rev-parse', 'HEAD');
}

const lines = (n: number, tag: string): string =>
  Array.from({ length: n }, (_, i) => `int ${tag}${i} = ${i};`).join('\n') + '\n';

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-history-'));
  // open5gs-like: issues filed in the same repository
  const o5 = join(root, 'o5');
  mkdirSync(o5);
  git(o5, 'init', '-q', '-b', 'main');
  const init = commit(
    o5,
    { 'src/a.c': lines(20, 'a'), 'src/b.c': lines(20, 'b'), 'src/c.c': lines(20, 'c') },
    'initial',
  );
  // PR 10 is opened on the initial commit; main moves on; the maintainer rebases it onto main
  c.h10 = prHead(o5, 10, init, { 'src/a.c': lines(20, 'a') + 'int fix_a;\n' }, 'Fix A');
  commit(o5, { 'src/c.c': lines(21, 'c') }, 'Unrelated change on main');
  c.l10 = rebaseLand(o5, c.h10);
  // a feature branch merges main, then main is fast-forwarded onto it: PR 11, landed on main
  // in between, ends up on the second-parent side of "Merge branch 'main' into feature"
  git(o5, 'checkout', '-q', '-b', 'feature');
  commit(o5, { 'src/f.c': lines(5, 'f') }, 'Feature work');
  git(o5, 'checkout', '-q', 'main');
  c.h11 = prHead(o5, 11, c.l10, { 'src/b.c': lines(20, 'b') + 'int fix_b;\n' }, 'Fix B');
  commit(o5, { 'src/c.c': lines(22, 'c') }, 'Another change on main');
  c.l11 = rebaseLand(o5, c.h11);
  git(o5, 'checkout', '-q', 'feature');
  git(o5, 'merge', '-q', '--no-ff', '-m', "Merge branch 'main' into feature", 'main');
  commit(o5, { 'src/f.c': lines(6, 'f') }, 'More feature work');
  git(o5, 'checkout', '-q', 'main');
  git(o5, 'merge', '-q', '--ff-only', 'feature');
  // PR 20 lands (rebased); PR 21 lands with "(#20)" in its subject: 20 is a PR that landed
  // elsewhere, the commit's patch is PR 21's
  c.h20 = prHead(o5, 20, 'main', { 'src/d.c': lines(3, 'd') }, 'Add d');
  commit(o5, { 'src/c.c': lines(23, 'c') }, 'Yet another change on main');
  c.l20 = rebaseLand(o5, c.h20);
  c.h21 = prHead(o5, 21, 'main', { 'src/e.c': lines(3, 'e') }, 'Fix e crash');
  commit(o5, { 'src/c.c': lines(24, 'c') }, 'Change before 21 lands');
  c.l21 = rebaseLand(o5, c.h21, 'Fix e crash (#20)');
  // a (#20) subject with no PR of that patch: a reference, not a landing
  c.ref20 = commit(o5, { 'src/d.c': lines(4, 'd') }, 'Tweak d (#20)');
  mkdirSync(join(root, 'mirrors', 'open5gs'), { recursive: true });
  git(root, 'clone', '-q', '--mirror', o5, join(root, 'mirrors', 'open5gs', 'open5gs.git'));

  // free5gc-like repository whose mirror lacks one blob (a document of PR 1)
  const amf = join(root, 'amf');
  mkdirSync(amf);
  git(amf, 'init', '-q', '-b', 'main');
  commit(amf, { 'internal/a.go': 'package a\n' }, 'initial');
  git(amf, 'checkout', '-q', '-b', 'docs');
  c.docHead = commit(
    amf,
    {
      'docs/guide.docx': Buffer.from('PK\u0003\u0004 a word document'),
      'internal/a.go': 'package a\n// x\n',
    },
    'Add the guide',
  );
  git(amf, 'checkout', '-q', 'main');
  git(
    amf,
    'merge',
    '-q',
    '--no-ff',
    '-m',
    'Merge pull request #1 from dev/docs\n\nAdd the guide',
    'docs',
  );
  c.docMerge = git(amf, 'rev-parse', 'HEAD');
  git(amf, 'update-ref', 'refs/pull/1/head', c.docHead);
  c.h2 = prHead(amf, 2, 'main', { 'internal/b.go': 'package a\n' }, 'Guard nil');
  c.l2 = rebaseLand(amf, c.h2, 'Guard nil (#2)');
  const mirror = join(root, 'mirrors', 'free5gc+amf', 'repo');
  mkdirSync(dirname(mirror), { recursive: true });
  git(root, 'clone', '-q', '--mirror', amf, mirror);
  c.blob = git(mirror, 'rev-parse', `${c.docHead}:docs/guide.docx`);
  const loose = join(mirror, 'objects', c.blob.slice(0, 2), c.blob.slice(2));
  expect(existsSync(loose)).toBe(true);
  rmSync(loose);

  writeFileSync(
    join(root, 'repos.yaml'),
    `version: 1
repositories:
  - { id: open5gs/open5gs, owner: open5gs, name: open5gs, language: c, default_branch: main, nf: 5GC, issues_repo: open5gs/open5gs, license: AGPL-3.0, test: { scope: repo }, image: c-meson }
  - { id: free5gc/amf, owner: free5gc, name: amf, language: go, default_branch: main, nf: AMF, issues_repo: free5gc/free5gc, license: Apache-2.0, test: { scope: touched }, image: go }
`,
  );
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

async function mine(): Promise<(id: string) => MineOutput> {
  const state = openState(join(root, `state-${Math.random().toString(36).slice(2)}`));
  const config: HasSwe5g = {
    swe5g: swe5gConfigSchema.parse({
      source: 'git',
      mining: { mirrors_dir: 'mirrors' },
      filter: { keep_git_without_issue: true },
    }),
  };
  const result = await runSwe5gMining({
    config,
    dir: root,
    stateDir: state.store.file.replace(/\/state\.db$/, ''),
    state,
  });
  expect(result.exitCode).toBe(0);
  return (id) => {
    const rec = state.store.item('swe5g.mine', id)!;
    expect(rec.state).toBe('done');
    return rec.output as MineOutput;
  };
}

describe('mining the whole history of the default branch', () => {
  it('finds a PR off the first-parent line, rebased landings by patch-id, and never reads (#N) as a PR whose patch differs', async () => {
    const out = (await mine())('open5gs/open5gs');
    const mirror = join(root, 'mirrors', 'open5gs', 'open5gs.git');
    const firstParent = git(mirror, 'rev-list', '--first-parent', 'main').split('\n');
    expect(firstParent).not.toContain(c.l11); // the fast-forward moved PR 11 off that line
    const all = git(mirror, 'rev-list', 'main').split('\n');
    expect(out.walk!.commits_scanned).toBe(all.length);
    const by = new Map(out.prs.map((p) => [p.pr_number, p as MinedPR]));
    expect([...by.keys()].sort((a, b) => a - b)).toEqual([10, 11, 20, 21]);
    for (const [n, land, head] of [
      [10, c.l10, c.h10],
      [11, c.l11, c.h11],
      [20, c.l20, c.h20],
      [21, c.l21, c.h21],
    ] as const) {
      expect(land).not.toBe(head); // a new hash: the maintainer's rebase
      expect(by.get(n)).toMatchObject({
        merge_commit: land,
        base_commit: git(mirror, 'rev-parse', `${land}^`),
        pr_head: head,
        landing_evidence: 'patch_id',
        merge_style: 'squash',
      });
    }
    expect(by.get(21)!.landing).toMatch(/"\(#20\)" in its subject is read as a reference/);
    expect(by.get(11)!.changed_files).toEqual([{ path: 'src/b.c', additions: 1, deletions: 0 }]);
    const skipped = new Map(out.skipped_commits!.map((s) => [s.commit, s]));
    expect(skipped.get(c.ref20!)).toMatchObject({ reason: 'follow_up' });
    expect(out.walk!.by_evidence).toEqual({ patch_id: 4 });
  });

  it('skips a commit whose diff needs an object the mirror lacks, naming commit, path and object, and mines the rest', async () => {
    const out = (await mine())('free5gc/amf');
    const miss = out.skipped_commits!.find((s) => s.reason === 'object_missing');
    expect(miss).toMatchObject({ commit: c.docMerge });
    expect(miss!.detail).toContain(c.blob);
    expect(miss!.detail).toContain('docs/guide.docx');
    expect(out.walk!.object_missing).toBe(1);
    expect(out.prs.map((p) => [p.pr_number, p.merge_commit, p.landing_evidence])).toEqual([
      [2, c.l2, 'subject_patch_id'],
    ]);
  });
});
