/**
 * Issue 16, "False links", through swe5g.mine -> swe5g.link -> swe5g.filter on a real repository
 * built here (an NF repository whose issues are filed in free5gc/free5gc), with an issues file
 * standing for the issues repository: branch-name numbers count only in an issue-like position and
 * only when the issue exists; a bare `#N` above the NF repository's numbers is read in the issues
 * repository.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openState } from '../../../../pipeline/state.js';
import { runSwe5gMining } from '../../../fixtures/swe5g-mining-run.js';
import { swe5gConfigSchema, type HasSwe5g } from '../../../../stages/swe5g/config.js';
import type { Candidate, LinkedPR } from '../../../../stages/swe5g/types.js';
import { git, commit } from '../../../fixtures/git-repo.js';

let root: string;

/** A GitHub merge of branch `branch` as PR `n`, with one commit `message` changing a Go file. */
function pr(dir: string, n: number, branch: string, message: string): void {
  git(dir, 'checkout', '-q', '-b', branch);
  commit(dir, { [`internal/sbi/pr${n}.go`]: `package sbi\n// ${n}\n` }, message);
  const head = git(dir, 'rev-parse', 'HEAD');
  git(dir, 'checkout', '-q', 'main');
  git(
    dir,
    'merge',
    '-q',
    '--no-ff',
    '-m',
    `Merge pull request #${n} from dev/${branch}\n\nx`,
    branch,
  );
  git(dir, 'update-ref', `refs/pull/${n}/head`, head);
}

const issue = (number: number) => ({
  number,
  title: `issue ${number}`,
  body: 'The AMF crashes with a nil pointer dereference when the peer omits an optional field of the request.',
  state: 'closed',
  created_at: '2024-01-01T00:00:00Z',
  repository_url: 'https://api.github.com/repos/free5gc/free5gc',
});

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-falselinks-'));
  const amf = join(root, 'amf');
  mkdirSync(amf);
  git(amf, 'init', '-q', '-b', 'main');
  commit(amf, { 'internal/sbi/a.go': 'package sbi\n' }, 'initial');
  pr(amf, 1, 'fix/correct-http-204-response', 'reply 204 with no body');
  pr(amf, 2, 'patch-2', 'guard nil SmContext');
  pr(amf, 3, 'fix/1079-reject-nia0', 'reject NIA0');
  pr(amf, 4, 'fix/1080-no-such-issue', 'guard nil UE');
  pr(amf, 5, 'cleanup', 'guard nil PDU session\n\nFixes #1122');
  const mirrors = join(root, 'mirrors');
  mkdirSync(join(mirrors, 'free5gc+amf'), { recursive: true });
  git(root, 'clone', '-q', '--mirror', amf, join(mirrors, 'free5gc+amf', 'repo'));
  writeFileSync(
    join(root, 'repos.yaml'),
    `version: 1
repositories:
  - { id: free5gc/amf, owner: free5gc, name: amf, language: go, default_branch: main, nf: AMF, issues_repo: free5gc/free5gc, license: Apache-2.0, test: { scope: touched }, image: go }
`,
  );
  // The issues repository holds #2, #204, #1079 and #1122 (not #1080).
  writeFileSync(
    join(root, 'issues.jsonl'),
    [2, 204, 1079, 1122].map((n) => JSON.stringify(issue(n))).join('\n') + '\n',
  );
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('false links', () => {
  it('keeps only issue-like branch numbers whose issue exists, and reads a bare #N in the issues repository', async () => {
    const state = openState(join(root, 'state'));
    const config: HasSwe5g = {
      swe5g: swe5gConfigSchema.parse({
        source: 'git',
        mining: { mirrors_dir: 'mirrors', issues_from: 'issues.jsonl' },
        filter: { keep_git_without_issue: false },
      }),
    };
    const result = await runSwe5gMining({
      config,
      dir: root,
      stateDir: join(root, 'state'),
      state,
    });
    expect(result.exitCode).toBe(0);
    const outcomes: Record<string, string> = {};
    for (const r of state.store.items('swe5g.filter'))
      outcomes[r.key] = r.state === 'done' ? 'kept' : (r.skipReason ?? r.state);
    // Today's main keeps 1 (#204 from "http-204"), 2 (#2 from "patch-2") and 4 (#1080, which does
    // not exist), and links 5 to free5gc/amf#1122 with no issue text.
    expect(outcomes).toEqual({
      'free5gc__amf-1': 'no_linked_issue',
      'free5gc__amf-2': 'no_linked_issue',
      'free5gc__amf-3': 'kept',
      'free5gc__amf-4': 'no_linked_issue',
      'free5gc__amf-5': 'kept',
    });
    const l4 = state.store.item('swe5g.link', 'free5gc__amf-4')!.output as LinkedPR;
    expect(l4.links).toEqual([]);
    expect(l4.unconfirmed_links).toEqual([
      expect.objectContaining({
        issue: 'free5gc/free5gc#1080',
        kind: 'branch_name',
        note: expect.stringMatching(/not kept: not in the issues file/),
      }),
    ]);
    const c3 = state.store.item('swe5g.filter', 'free5gc__amf-3')!.output as Candidate;
    expect(c3.issues.map((i) => i.number)).toEqual([1079]);
    const c5 = state.store.item('swe5g.filter', 'free5gc__amf-5')!.output as Candidate;
    expect(c5.issues.map((i) => `${i.repo}#${i.number}`)).toEqual(['free5gc/free5gc#1122']);
    expect(c5.links[0]).toMatchObject({
      kind: 'closing_keyword',
      issue: 'free5gc/free5gc#1122',
      note: expect.stringMatching(
        /read in free5gc\/free5gc \(issues_repo\): free5gc\/amf has no #1122/,
      ),
    });
    expect(c5.incomplete).toBe(false);
    state.close();
  });
});
