/**
 * Issue 16, "Rebase-merged PRs" and "Registering a repository": landings the git mirror source
 * must recognise beyond GitHub's merge subject and `(#N)` squash subjects, and the reasons it
 * reports for commits it does not take. Real repositories built here, cloned with
 * `git clone --mirror` (keeps `refs/pull/*`) or `git clone --bare` (drops them).
 */
import { storeReader } from '../../../../pipeline/runner.js';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openState } from '../../../../pipeline/state.js';
import type { StageContext } from '../../../../pipeline/stage.js';
import { runSwe5gMining } from '../../../fixtures/swe5g-mining-run.js';
import { swe5gConfigSchema, type HasSwe5g } from '../../../../stages/swe5g/config.js';
import {
  miningFunnelMarkdown,
  miningNotes,
  swe5gMiningStages,
} from '../../../../stages/swe5g/mining.js';
import type { MineOutput } from '../../../../stages/swe5g/mine/mine.js';
import type { LinkedPR, MinedPR } from '../../../../stages/swe5g/types.js';
import { mineMirror } from '../../../../pipeline/providers/git/mirror-source.js';
import { git, commit } from '../../../fixtures/git-repo.js';

let root: string;
const c: Record<string, string> = {};

/** A repository with a rebase-landed PR, a fast-forwarded PR, a manual merge and a follow-up. */
function history(dir: string, src: string): void {
  mkdirSync(dir);
  git(dir, 'init', '-q', '-b', 'main');
  commit(dir, { [`${src}/a.go`]: 'package a\n' }, 'initial');
  // PR 22 rebase-merged: its own commit is on main, its subject names issue 21
  c.base22 = git(dir, 'rev-parse', 'HEAD');
  c.pr22 = commit(dir, { [`${src}/a.go`]: 'package a\n// nil check\n' }, 'Fix crash (#21)');
  git(dir, 'update-ref', 'refs/pull/22/head', c.pr22);
  // PR 23 fast-forwarded: no number in its subject at all
  c.pr23 = commit(dir, { [`${src}/b.go`]: 'package a\n' }, 'Guard nil SUPI');
  git(dir, 'update-ref', 'refs/pull/23/head', c.pr23);
  // PR 24 merged outside GitHub's button: "Merge branch ..." whose second parent is its head
  git(dir, 'checkout', '-q', '-b', 'topic');
  c.pr24head = commit(dir, { [`${src}/c.go`]: 'package a\n' }, 'Reject empty DNN');
  git(dir, 'checkout', '-q', 'main');
  commit(dir, { [`${src}/d.go`]: 'package a\n' }, 'direct push');
  git(dir, 'merge', '-q', '--no-ff', '-m', "Merge branch 'topic'", 'topic');
  c.pr24 = git(dir, 'rev-parse', 'HEAD');
  git(dir, 'update-ref', 'refs/pull/24/head', c.pr24head);
  // a later commit naming the rebase-landed PR 23 is a follow-up, not its landing
  c.follow = commit(dir, { [`${src}/b.go`]: 'package a\n// more\n' }, 'Follow-up (#23)');
  // a (#30) subject without refs/pull/30/head
  c.issue30 = commit(dir, { [`${src}/e.go`]: 'package a\n' }, 'Fix leak (#30)');
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-landings-'));
  const mirrors = join(root, 'mirrors');
  // free5gc/amf-like: issues filed in free5gc/free5gc
  history(join(root, 'amf'), 'internal');
  c.amf_pr22 = c.pr22!;
  c.amf_base22 = c.base22!;
  mkdirSync(join(mirrors, 'free5gc+amf'), { recursive: true });
  git(root, 'clone', '-q', '--mirror', join(root, 'amf'), join(mirrors, 'free5gc+amf', 'repo'));
  // open5gs-like: issues filed in the same repository
  history(join(root, 'o5'), 'src');
  mkdirSync(join(mirrors, 'open5gs'), { recursive: true });
  git(root, 'clone', '-q', '--mirror', join(root, 'o5'), join(mirrors, 'open5gs', 'open5gs.git'));
  // free5gc/smf-like, cloned with --bare: refs/pull/* are gone
  history(join(root, 'smf'), 'internal');
  mkdirSync(join(mirrors, 'free5gc+smf'), { recursive: true });
  git(root, 'clone', '-q', '--bare', join(root, 'smf'), join(mirrors, 'free5gc+smf', 'repo'));
  writeFileSync(
    join(root, 'repos.yaml'),
    `version: 1
repositories:
  - { id: free5gc/amf, owner: free5gc, name: amf, language: go, default_branch: main, nf: AMF, issues_repo: free5gc/free5gc, license: Apache-2.0, test: { scope: touched }, image: go }
  - { id: free5gc/smf, owner: free5gc, name: smf, language: go, default_branch: main, nf: SMF, issues_repo: free5gc/free5gc, license: Apache-2.0, test: { scope: touched }, image: go }
  - { id: open5gs/open5gs, owner: open5gs, name: open5gs, language: c, default_branch: main, nf: 5GC, issues_repo: open5gs/open5gs, license: AGPL-3.0, test: { scope: repo }, image: c-meson }
`,
  );
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('git mirror source: rebase-merged and manually merged PRs', () => {
  it('reads a commit that is refs/pull/M/head as PR M, never as the (#N) of its subject', async () => {
    const { prs, skipped } = await mineMirror(join(root, 'mirrors', 'free5gc+amf', 'repo'), {
      branch: 'main',
      issuesElsewhere: true,
    });
    const by = new Map(prs.map((p) => [p.number, p]));
    // (#21) is not a PR: the commit is PR 22's head. Today's main yields PR 21 with no head.
    expect(by.has(21)).toBe(false);
    expect(by.get(22)).toMatchObject({
      merge_style: 'rebase',
      merge_commit: c.amf_pr22,
      pr_head: c.amf_pr22,
      base_commit: c.amf_base22,
      title: 'Fix crash (#21)',
    });
    expect(by.get(22)!.landing).toMatch(/refs\/pull\/22\/head.*"\(#21\)" in its subject/);
    expect(by.get(23)).toMatchObject({ merge_style: 'rebase', pr_head: by.get(23)!.merge_commit });
    expect(by.get(24)).toMatchObject({ merge_style: 'merge', title: "Merge branch 'topic'" });
    expect(by.get(24)!.changed_files.map((f) => f.path)).toEqual(['internal/c.go']);
    // issues live elsewhere: (#30) without a ref is still read as the PR, and says so
    expect(by.get(30)!.landing).toMatch(/issues are filed in another repository/);
    expect(skipped.map((s) => [s.reason, s.subject])).toEqual([['follow_up', 'Follow-up (#23)']]);
  });

  it('finds them where issues are filed in the same repository, with a reason for each commit not taken', async () => {
    const { prs, skipped, pull_refs } = await mineMirror(
      join(root, 'mirrors', 'open5gs', 'open5gs.git'),
      { branch: 'main', issuesElsewhere: false },
    );
    expect(pull_refs).toBe(3);
    // today's main mines none of 22, 23, 24 here (prs: [] and no reason)
    expect(prs.map((p) => [p.number, p.merge_style]).sort()).toEqual([
      [22, 'rebase'],
      [23, 'rebase'],
      [24, 'merge'],
    ]);
    expect(skipped.map((s) => [s.reason, s.subject]).sort()).toEqual([
      ['follow_up', 'Follow-up (#23)'],
      ['issue_number_in_subject', 'Fix leak (#30)'],
    ]);
    expect(skipped.find((s) => s.reason === 'issue_number_in_subject')!.detail).toMatch(
      /no refs\/pull\/30\/head/,
    );
  });

  it('runs the stages: the report lists landings, commits not taken and a mirror without refs/pull/*', async () => {
    const state = openState(join(root, 'state'));
    const config: HasSwe5g = {
      swe5g: swe5gConfigSchema.parse({ source: 'git', mining: { mirrors_dir: 'mirrors' } }),
    };
    const result = await runSwe5gMining({
      config,
      dir: root,
      stateDir: join(root, 'state'),
      state,
    });
    expect(result.exitCode).toBe(0);
    const mined = (id: string): MineOutput =>
      state.store.item('swe5g.mine', id)!.output as MineOutput;
    expect(mined('free5gc/amf').pull_refs).toBe(3);
    expect(mined('free5gc/amf').warnings).toEqual([]);
    expect(mined('free5gc/smf').pull_refs).toBe(0);
    expect(mined('free5gc/smf').warnings![0]).toMatch(/no refs\/pull\/\*.*git clone --mirror/);
    const pr22 = mined('free5gc/amf').prs.find((p) => p.pr_number === 22) as MinedPR;
    expect(pr22.landing).toMatch(/refs\/pull\/22\/head/);
    // the (#21) of PR 22's subject reaches the link stage as a reference to issue 21
    const l22 = state.store.item('swe5g.link', 'free5gc__amf-22')!.output as LinkedPR;
    expect(l22.links.find((l) => l.issue.endsWith('#21'))).toMatchObject({
      issue: 'free5gc/free5gc#21',
      candidates: ['free5gc/free5gc#21', 'free5gc/amf#21'],
      note: expect.stringMatching(/read in free5gc\/free5gc \(issues_repo\)/),
    });
    const ctx = {
      config,
      store: storeReader(
        state.store,
        (name) => swe5gMiningStages.find((s) => s.name === name)?.version,
      ),
    } as unknown as StageContext<HasSwe5g>;
    expect(miningNotes(ctx).map((n) => [n.repo, n.skipped])).toEqual([
      ['free5gc/amf', { follow_up: 1 }],
      ['free5gc/smf', {}],
      ['open5gs/open5gs', { follow_up: 1, issue_number_in_subject: 1 }],
    ]);
    const md = miningFunnelMarkdown(ctx);
    expect(md).toContain(
      '| open5gs/open5gs | 3 | rebase 2, merge 1 | follow_up 1, issue_number_in_subject 1 |',
    );
    expect(md).toMatch(/open5gs\/open5gs: issue_number_in_subject: [0-9a-f]{7} "Fix leak \(#30\)"/);
    expect(md).toMatch(/free5gc\/smf: warning: the mirror .* has no refs\/pull\/\*/);
    expect(md).not.toContain('Not mined');
    // repositories the stage skipped or that failed are named, not left out of the report
    const settle = (key: string, result: Parameters<typeof state.store.finishItem>[3]): void => {
      state.store.planItem('swe5g.mine', key, 1, 'h', '{}', false);
      state.store.startItem('swe5g.mine', key, `att-${key}`, 'run-test');
      state.store.finishItem('swe5g.mine', key, `att-${key}`, result);
    };
    settle('magma/magma', { state: 'skipped', reason: 'no_source', detail: 'no mirror' });
    settle('free5gc/udr', { state: 'skipped', reason: 'no_source', detail: 'no mirror' });
    settle('free5gc/nrf', { state: 'failed', error: { code: 'git_failed', message: 'x' } });
    const md2 = miningFunnelMarkdown(ctx);
    expect(md2).toContain('Not mined (3 repositories of the registry, not in the table):');
    expect(md2).toContain('- no_source 2: free5gc/udr, magma/magma');
    expect(md2).toContain('- failed: git_failed 1: free5gc/nrf');
    state.close();
  });
});
