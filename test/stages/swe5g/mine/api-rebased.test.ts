/**
 * Issue 21: API mining keeps GitHub's merge commit for merged PRs and gains the patch-id match
 * for landings GitHub cannot see. A PR the API lists as closed without a merge (PR 163 of the
 * free5GC-shaped corpus of the local GitHub REST server) whose head a maintainer rebased onto
 * main by hand: with a local mirror (a real repository built here) the rebased commit is found by
 * `git patch-id --stable` and becomes the PR's landing.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openState } from '../../../../pipeline/state.js';
import { runSwe5gMining } from '../../../fixtures/swe5g-mining-run.js';
import { swe5gConfigSchema, type HasSwe5g } from '../../../../stages/swe5g/config.js';
import type { MineOutput } from '../../../../stages/swe5g/mine/mine.js';
import { startGithubServer, type GithubServer } from '../../../servers/github-server.js';
import { free5gcCorpus } from '../../../servers/github-fixtures.js';
import { git, commit } from '../../../fixtures/git-repo.js';

let dir: string;
let server: GithubServer;
const c: Record<string, string> = {};
const savedEnv = { ...process.env };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'telebench-api-rebased-'));
  const amf = join(dir, 'amf');
  mkdirSync(amf);
  git(amf, 'init', '-q', '-b', 'main');
  const init = commit(
    amf,
    { 'internal/context/timer.go': 'package context\n\nvar t = 1\n' },
    'initial',
  );
  git(amf, 'checkout', '-q', '-b', 'timer', init);
  c.head = commit(
    amf,
    { 'internal/context/timer.go': 'package context\n\nvar t = 2\n' },
    'attempt: fix timer',
  );
  git(amf, 'update-ref', 'refs/pull/163/head', c.head);
  git(amf, 'checkout', '-q', 'main');
  commit(amf, { 'internal/ngap/handler.go': 'package ngap\n' }, 'an unrelated change on main');
  git(amf, 'cherry-pick', c.head); // the maintainer's rebase: a new hash, the same patch
  c.landing = git(amf, 'rev-parse', 'HEAD');
  mkdirSync(join(dir, 'mirrors', 'free5gc+amf'), { recursive: true });
  git(dir, 'clone', '-q', '--mirror', amf, join(dir, 'mirrors', 'free5gc+amf', 'repo'));
  const corpus = free5gcCorpus();
  corpus['free5gc/amf']!.pulls.find((p) => p.number === 163)!.head.sha = c.head;
  server = await startGithubServer(corpus);
  process.env.GITHUB_TOKEN = 'ghp_testtoken_one';
  delete process.env.GITHUB_TOKENS;
  writeFileSync(
    join(dir, 'repos.yaml'),
    `version: 1
repositories:
  - { id: free5gc/amf, owner: free5gc, name: amf, language: go, default_branch: main, nf: AMF, issues_repo: free5gc/free5gc, license: Apache-2.0, test: { scope: touched }, image: go }
`,
  );
});

afterAll(async () => {
  process.env = { ...savedEnv };
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('API mining with a local mirror', () => {
  it('takes a closed-unmerged PR whose head a maintainer rebased onto main as landed at that commit', async () => {
    const state = openState(join(dir, 'state'));
    const config: HasSwe5g = {
      swe5g: swe5gConfigSchema.parse({
        source: 'api',
        mining: { mirrors_dir: 'mirrors', github: { base_url: server.url, retry_base_ms: 5 } },
      }),
    };
    const result = await runSwe5gMining({ config, dir, stateDir: join(dir, 'state'), state });
    expect(result.exitCode).toBe(0);
    const out = state.store.item('swe5g.mine', 'free5gc/amf')!.output as MineOutput;
    const pr = out.prs.find((p) => p.pr_number === 163);
    expect(pr).toMatchObject({
      source: 'api',
      merge_commit: c.landing,
      base_commit: git(amf(), 'rev-parse', `${c.landing}^`),
      pr_head: c.head,
      landing_evidence: 'patch_id',
      pr_title: 'attempt: fix timer',
      pr_body: 'Fix free5gc/free5gc#720',
    });
    expect(pr!.landing).toMatch(/closed the PR without a merge; git patch-id --stable equal/);
    expect(out.closed_unmerged.map((u) => u.number)).not.toContain(163);
    // merged PRs keep GitHub's merge commit
    expect(out.prs.find((p) => p.pr_number === 161)!.merge_commit).toBe(
      server.corpus['free5gc/amf']!.pulls.find((p) => p.number === 161)!.merge_commit_sha,
    );
    state.close();
  });
});

const amf = (): string => join(dir, 'mirrors', 'free5gc+amf', 'repo');
