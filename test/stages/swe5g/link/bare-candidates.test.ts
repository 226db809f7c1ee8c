/**
 * Issue 21, "Linking": a bare `#N` that could be an issue of the NF repository or of the issues
 * repository (free5GC) takes the candidate the issues file holds, and the link says which. Real
 * repository built here, through swe5g.mine -> swe5g.link -> swe5g.filter.
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

const issue = (repo: string, number: number) => ({
  number,
  title: `${repo} issue ${number}`,
  body: 'The AMF crashes with a nil pointer dereference when the peer omits an optional field of the request.',
  state: 'closed',
  created_at: '2024-01-01T00:00:00Z',
  repository_url: `https://api.github.com/repos/${repo}`,
});

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-bare-'));
  const amf = join(root, 'amf');
  mkdirSync(amf);
  git(amf, 'init', '-q', '-b', 'main');
  commit(amf, { 'internal/sbi/a.go': 'package sbi\n' }, 'initial');
  // PR 40 makes #7 and #8 possible numbers of free5gc/amf too (the mirror's highest number is 40)
  pr(amf, 40, 'feature', 'add a handler');
  pr(amf, 6, 'cleanup', 'guard nil PDU session\n\nFixes #7');
  pr(amf, 9, 'other', 'guard nil UE context\n\nFixes #8');
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
  // #7 is an issue of the NF repository only; #8 of both (issues_repo comes first)
  writeFileSync(
    join(root, 'issues.jsonl'),
    [issue('free5gc/amf', 7), issue('free5gc/amf', 8), issue('free5gc/free5gc', 8)]
      .map((o) => JSON.stringify(o))
      .join('\n') + '\n',
  );
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a bare #N with two candidate repositories', () => {
  it('takes the candidate the issues file holds and says which', async () => {
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
    // today's main reads #7 in free5gc/free5gc only: no issue text, rejected no_linked_issue
    const c6 = state.store.item('swe5g.filter', 'free5gc__amf-6')!.output as Candidate;
    expect(c6.issues.map((i) => `${i.repo}#${i.number}`)).toEqual(['free5gc/amf#7']);
    expect(c6.problem_statement).toContain('free5gc/amf issue 7');
    expect(c6.links[0]).toMatchObject({
      kind: 'closing_keyword',
      issue: 'free5gc/amf#7',
      candidates: ['free5gc/free5gc#7', 'free5gc/amf#7'],
      note: expect.stringMatching(
        /free5gc\/amf#7 taken: the issues file holds it and not free5gc\/free5gc#7/,
      ),
    });
    const l9 = state.store.item('swe5g.link', 'free5gc__amf-9')!.output as LinkedPR;
    expect(l9.links[0]).toMatchObject({
      issue: 'free5gc/free5gc#8',
      note: expect.stringMatching(/taken \(issues_repo first\): the issues file holds both/),
    });
    expect(l9.issues.map((i) => `${i.repo}#${i.number}`)).toEqual(['free5gc/free5gc#8']);
    state.close();
  });
});
