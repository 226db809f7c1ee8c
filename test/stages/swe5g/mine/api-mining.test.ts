/**
 * swe5g.mine -> swe5g.link -> swe5g.filter through the real runner against the local GitHub REST
 * server (test/servers/github-server.ts) on a free5GC-shaped corpus.
 */
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPipeline, storeReader } from '../../../../pipeline/runner.js';
import { openState, type OpenState } from '../../../../pipeline/state.js';
import { EventBus, type StampedEvent } from '../../../../pipeline/events.js';
import type { Pipeline } from '../../../../pipeline/stage.js';
import { swe5gMiningStages, miningFunnel } from '../../../../stages/swe5g/mining.js';
import type { StageContext } from '../../../../pipeline/stage.js';
import { swe5gConfigSchema, type HasSwe5g } from '../../../../stages/swe5g/config.js';
import type { Candidate, LinkedPR } from '../../../../stages/swe5g/types.js';
import type { MineOutput } from '../../../../stages/swe5g/mine/mine.js';
import { startGithubServer, type GithubServer } from '../../../servers/github-server.js';
import { free5gcCorpus, EXPECTED, sha } from '../../../servers/github-fixtures.js';

const REGISTRY = `version: 1
repositories:
${['amf', 'smf']
  .map(
    (n) => `  - id: free5gc/${n}
    owner: free5gc
    name: ${n}
    language: go
    default_branch: main
    nf: ${n.toUpperCase()}
    issues_repo: free5gc/free5gc
    license: Apache-2.0
    test: { scope: touched }
    image: go`,
  )
  .join('\n')}
`;

const pipeline: Pipeline<HasSwe5g> = {
  name: 'swe5g',
  description: 'mining only',
  stages: ['swe5g.mine', 'swe5g.link', 'swe5g.filter'],
};
const registry = new Map(swe5gMiningStages.map((s) => [s.name, s]));

let dir: string;
let state: OpenState;
let server: GithubServer;
const savedEnv = { ...process.env };

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'telebench-mine-'));
  writeFileSync(join(dir, 'repos.yaml'), REGISTRY);
  state = openState(dir);
  server = await startGithubServer(free5gcCorpus());
  process.env.GITHUB_TOKEN = 'ghp_testtoken_one';
  delete process.env.GITHUB_TOKENS;
});
afterEach(async () => {
  process.env = { ...savedEnv };
  state.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function config(extra: Record<string, unknown> = {}, filter: Record<string, unknown> = {}) {
  return {
    swe5g: swe5gConfigSchema.parse({
      source: 'api',
      mining: { github: { base_url: server.url, retry_base_ms: 5 }, ...extra },
      filter,
    }),
  };
}

async function run(cfg: HasSwe5g) {
  const bus = new EventBus();
  const events: StampedEvent[] = [];
  bus.on((e) => events.push(e));
  const result = await runPipeline<HasSwe5g>({
    pipeline,
    registry,
    config: cfg,
    configFile: join(dir, 'config.yaml'),
    stateDir: dir,
    store: state.store,
    blobs: state.blobs,
    bus,
    signal: new AbortController().signal,
  });
  return { result, events };
}

function outcomes(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of state.store.items('swe5g.filter'))
    out[r.key] = r.state === 'done' ? 'kept' : (r.skipReason ?? r.state);
  return out;
}

describe('swe5g mining on the GitHub API', () => {
  it('mines, links and filters the free5GC-shaped corpus with the expected reasons', async () => {
    const { result } = await run(config());
    expect(result.exitCode).toBe(0);
    expect(outcomes()).toEqual(EXPECTED);

    const c161 = state.store.item('swe5g.filter', 'free5gc__amf-161')!.output as Candidate;
    expect(c161.alias).toBe('amf_pr161');
    expect(c161.merge_commit).toBe(sha('free5gc/amf merge 161'));
    const head161 = server.corpus['free5gc/amf']!.pulls.find((p) => p.number === 161)!.head.sha;
    expect(c161.pr_head).toBe(head161);
    const branch = server.corpus['free5gc/amf']!.branch;
    expect(c161.base_commit).toBe(branch.find((b) => b.sha === c161.merge_commit)!.parents[0]);
    expect(c161.issues.map((i) => `${i.repo}#${i.number}`)).toEqual(['free5gc/free5gc#641']);
    expect(c161.problem_statement).toMatch(/^AMF panics on NGSetupRequest/);
    expect(c161.hints_text).toContain('Can you share the pcap?');
    expect(c161.hints_text).not.toContain('after the fix');
    expect(c161.incomplete).toBe(false);
    expect(c161.links[1]).toMatchObject({ kind: 'closing_keyword', issue: 'free5gc/free5gc#641' });

    // squash merge fixing two issues, one linked by full URL (mention) and one by keyword
    const c162 = state.store.item('swe5g.filter', 'free5gc__amf-162')!.output as Candidate;
    expect(c162.issues.map((i) => i.number).sort()).toEqual([700, 701]);
    expect(branch.find((b) => b.sha === c162.merge_commit)!.parents).toEqual([c162.base_commit]);

    // one issue, two PRs: the merged one is kept, the closed one noted
    const l164 = state.store.item('swe5g.link', 'free5gc__amf-164')!.output as LinkedPR;
    expect(l164.other_prs).toEqual([163]);
    expect(state.store.item('swe5g.link', 'free5gc__amf-163')).toBeUndefined();

    // link only in a commit message, in another repository
    const c50 = state.store.item('swe5g.filter', 'free5gc__smf-50')!.output as Candidate;
    expect(c50.links[0]).toMatchObject({ where: 'commit[0]', issue: 'free5gc/free5gc#800' });

    // weak branch-name evidence
    const l170 = state.store.item('swe5g.link', 'free5gc__amf-170')!.output as LinkedPR;
    expect(l170.links).toEqual([
      expect.objectContaining({
        kind: 'branch_name',
        issue: 'free5gc/free5gc#740',
        confidence: 0.3,
      }),
    ]);
    // linked only by GitHub's closing reference (GraphQL), the strongest evidence
    const c171 = state.store.item('swe5g.filter', 'free5gc__amf-171')!.output as Candidate;
    expect(c171.links).toEqual([
      expect.objectContaining({
        kind: 'closing_reference',
        issue: 'free5gc/free5gc#750',
        confidence: 1,
      }),
    ]);
    expect(c161.links.map((l) => l.kind)).toEqual(['closing_reference', 'closing_keyword']);
    // one GraphQL query per repository (batches of 50 PRs)
    expect(server.requests.filter((r) => r.path === '/graphql').length).toBe(2);
    // the funnel counts linked PRs by the state of their issues (168's issue stayed open)
    const ctx = {
      config: config(),
      store: storeReader(
        state.store,
        (name) => swe5gMiningStages.find((s) => s.name === name)?.version,
      ),
    } as unknown as StageContext<HasSwe5g>;
    const amf = miningFunnel(ctx).find((r) => r.repo === 'free5gc/amf')!;
    expect(amf).toMatchObject({
      mined: 10,
      linked: 9,
      issue_closed: 8,
      issue_open_only: 1,
      kept: 4,
    });
    expect(amf.rejected).toEqual({
      bot_author: 1,
      docs_or_ci_only: 1,
      too_many_files: 1,
      issue_open: 1,
      no_linked_issue: 1,
      unclear_issue: 1,
    });
    // every request was authenticated with the token
    expect(server.requests.every((r) => r.auth === 'token ghp_testtoken_one')).toBe(true);
  });

  it('keeps the PR whose issue stayed open when require_closed_issue is off', async () => {
    await run(config());
    expect(outcomes()['free5gc__amf-168']).toBe('issue_open');
    await run(config({}, { require_closed_issue: false }));
    expect(outcomes()['free5gc__amf-168']).toBe('kept');
  });

  it('a second run over unchanged data makes only requests answered 304', async () => {
    await run(config());
    const first = server.requests.length;
    expect(first).toBeGreaterThan(10);
    expect(server.requests.filter((r) => r.status !== 200)).toEqual([]);
    const { result } = await run(config({ generation: 2 }));
    expect(result.exitCode).toBe(0);
    // GET /rate_limit (the preflight probe) is free: GitHub never counts it.
    const second = server.requests.slice(first).filter((r) => r.path !== '/rate_limit');
    expect(second.length).toBeGreaterThan(0);
    expect(second.filter((r) => r.status !== 304)).toEqual([]);
    // GraphQL (no 304 possible) is not asked again: its answers are cached by PR updated_at
    expect(second.some((r) => r.path === '/graphql')).toBe(false);
    // the new generation re-checked the linked issues too (state may change), all 304
    expect(second.some((r) => r.path === '/repos/free5gc/free5gc/issues/641')).toBe(true);
    expect(outcomes()).toEqual(EXPECTED);
  });

  it('a changed PR list is fetched again, the rest stays 304', async () => {
    await run(config());
    const first = server.requests.length;
    const pr = server.corpus['free5gc/smf']!.pulls[0]!;
    pr.title = 'nil check in PFCP handler (edited)';
    await run(config({ generation: 2 }));
    const fresh = server.requests
      .slice(first)
      .filter((r) => r.status !== 304 && r.path !== '/rate_limit');
    expect(fresh.map((r) => r.path)).toEqual([
      expect.stringMatching(/^\/repos\/free5gc\/smf\/pulls\?/),
    ]);
    const c50 = state.store.item('swe5g.filter', 'free5gc__smf-50')!.output as Candidate;
    expect(c50.pr_title).toBe('nil check in PFCP handler (edited)');
  });

  it('goes on with REST evidence when GraphQL fails, recording why', async () => {
    server.faults.push({ match: /^\/graphql$/, kind: '502', times: 1000 });
    // one retry only: the throttling plugin spaces GraphQL requests 1 s apart
    const { result } = await run(
      config({ github: { base_url: server.url, retry_base_ms: 5, max_retries: 1 } }),
    );
    expect(result.exitCode).toBe(0);
    expect(outcomes()['free5gc__amf-171']).toBe('no_linked_issue');
    expect(outcomes()['free5gc__amf-161']).toBe('kept');
    const mined = state.store.item('swe5g.mine', 'free5gc/amf')!.output as MineOutput;
    expect(mined.closing_references_error).toMatch(/GraphQL query failed/);
  });

  it('uses the tokens of GITHUB_TOKENS in turn', async () => {
    delete process.env.GITHUB_TOKEN;
    process.env.GITHUB_TOKENS = 'ghp_pool_token_a, ghp_pool_token_b';
    await run(config());
    const auths = new Set(server.requests.map((r) => r.auth));
    expect(auths).toEqual(new Set(['token ghp_pool_token_a', 'token ghp_pool_token_b']));
  });

  it('stops at preflight with what to set when source is api and no token is set', async () => {
    delete process.env.GITHUB_TOKEN;
    const { result, events } = await run(config());
    expect(result.exitCode).toBe(3);
    const pf = events.find((e) => e.kind === 'stage-preflight-failed');
    expect(pf).toMatchObject({ stage: 'swe5g.mine', service: 'github' });
    expect(JSON.stringify(pf)).toMatch(/GITHUB_TOKEN/);
    expect(server.requests).toEqual([]);
  });

  it('stops at preflight when the API is unreachable and source is auto without mirrors', async () => {
    const cfg = config();
    cfg.swe5g.source = 'auto';
    cfg.swe5g.mining.github.base_url = 'http://127.0.0.1:9'; // discard port: connection refused
    // No mirrors folder configured: the preflight tries to clone into <state>/mirrors from here.
    cfg.swe5g.environments.git_url_base = 'http://127.0.0.1:9';
    const saved = process.env.TELEBENCH_MIRRORS_DIR;
    delete process.env.TELEBENCH_MIRRORS_DIR;
    const { result, events } = await run(cfg).finally(() => {
      if (saved !== undefined) process.env.TELEBENCH_MIRRORS_DIR = saved;
    });
    expect(result.exitCode).toBe(3);
    const pf = events.find((e) => e.kind === 'stage-preflight-failed');
    expect(JSON.stringify(pf)).toMatch(
      /API http:\/\/127\.0\.0\.1:9 unreachable.*\d+ repositories unreachable \(http:\/\/127\.0\.0\.1:9\/[^)]*\.git[^)]*\): .*mirrors_dir/,
    );
  });
});
