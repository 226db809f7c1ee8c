/**
 * bench/mine: GitHub requests of SWE-Bench 5G mining (swe5g.mine -> link -> filter) on the
 * free5GC-shaped fixture corpus served by the local GitHub REST server, against the minimum the
 * REST API allows for the same data, and the request count of a second, unchanged run.
 *
 * Minimum per repository (REST, 100 items per page): ceil(closed PRs / 100) list pages +
 * ceil(default-branch commits in the window / 100) pages for merge parents + per merged PR one
 * page of commits (their messages are linking evidence) and, only for PRs that turn out linked to
 * an issue, one page of files; per distinct linked issue one GET, plus one page of comments when
 * it has any; one GraphQL query per 50 merged PRs for GitHub's closing references. (Ours fetches
 * files for every merged PR, since mining runs before linking.)
 * Times are printed for information only: the throttling plugin spaces GraphQL queries 1 s apart
 * (GitHub's advice against secondary limits), which dominates the first run here.
 * Printed: requests per kept candidate (ours and the minimum), their ratio, and the second run's
 * requests split into 304 (not counted by GitHub) and counted (goal: 0 counted).
 *
 *   npx tsx bench/mine.bench.ts [--scale 10]   (scale: copies of the NF repository corpus)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openState } from '../pipeline/state.js';
import { swe5gConfigSchema, type HasSwe5g } from '../stages/swe5g/config.js';
import type { LinkedPR } from '../stages/swe5g/types.js';
import { startGithubServer } from '../test/servers/github-server.js';
import { free5gcCorpus } from '../test/servers/github-fixtures.js';
import { runSwe5gMining } from '../test/fixtures/swe5g-mining-run.js';

const scaleArg = process.argv.indexOf('--scale');
const SCALE = scaleArg > 0 ? Number(process.argv[scaleArg + 1]) : 10;

// SCALE copies of the NF repositories (amf, smf), all linking into the one issues repository.
const base = free5gcCorpus();
const corpus: typeof base = { 'free5gc/free5gc': base['free5gc/free5gc']! };
const ids: string[] = [];
for (let i = 0; i < SCALE; i++)
  for (const nf of ['amf', 'smf']) {
    const name = i === 0 ? nf : `${nf}${i}`;
    corpus[`free5gc/${name}`] = structuredClone(base[`free5gc/${nf}`]!);
    ids.push(name);
  }

const server = await startGithubServer(corpus);
const dir = mkdtempSync(join(tmpdir(), 'bench-mine-'));
writeFileSync(
  join(dir, 'repos.yaml'),
  `version: 1\nrepositories:\n${ids
    .map(
      (n) =>
        `  - { id: free5gc/${n}, owner: free5gc, name: ${n}, language: go, default_branch: main, nf: AMF, issues_repo: free5gc/free5gc, license: Apache-2.0, test: { scope: touched }, image: go }`,
    )
    .join('\n')}\n`,
);
process.env.GITHUB_TOKEN = 'ghp_bench_token';
const state = openState(join(dir, 'state'));

async function run(generation: number): Promise<void> {
  const config: HasSwe5g = {
    swe5g: swe5gConfigSchema.parse({
      source: 'api',
      mining: { generation, concurrency: 4, github: { base_url: server.url } },
    }),
  };
  const r = await runSwe5gMining({ config, dir, stateDir: join(dir, 'state'), state });
  if (r.exitCode !== 0) throw new Error(`mining run failed with exit ${r.exitCode}`);
}

const counted = () => server.requests.filter((q) => q.path !== '/rate_limit');
const t0 = performance.now();
await run(1);
const ms1 = performance.now() - t0;
const first = counted();
const kept = [...state.store.items('swe5g.filter')].filter((r) => r.state === 'done').length;

// API minimum for the same data.
let minimum = 0;
const issues = new Set<string>();
for (const [name, data] of Object.entries(corpus)) {
  if (name === 'free5gc/free5gc') continue;
  const closed = data.pulls.filter((p) => p.state === 'closed');
  const merged = closed.filter((p) => p.merged_at);
  minimum +=
    Math.ceil(closed.length / 100) +
    Math.ceil(data.branch.length / 100) +
    Math.ceil(merged.length / 50) + // GraphQL closingIssuesReferences, 50 PRs per query
    merged.length;
}
for (const r of state.store.items('swe5g.link'))
  if (r.state === 'done') {
    const pr = r.output as LinkedPR;
    if (pr.issues.length > 0) minimum += 1; // its files
    for (const i of pr.issues) issues.add(`${i.repo}#${i.number}`);
  }
for (const key of issues) {
  const n = Number(key.split('#')[1]);
  const issue = corpus['free5gc/free5gc']!.issues.find((i) => i.number === n)!;
  minimum += 1 + (issue.comments > 0 ? 1 : 0);
}

const before = server.requests.length;
const t1 = performance.now();
await run(2);
const ms2 = performance.now() - t1;
const second = server.requests.slice(before).filter((q) => q.path !== '/rate_limit');
const notModified = second.filter((q) => q.status === 304).length;

console.log(`bench/mine: ${ids.length} NF repositories, ${kept} kept candidates`);
console.log(
  `  first run:  ${first.length} requests (${(first.length / kept).toFixed(2)} per kept candidate); API minimum ${minimum} (${(minimum / kept).toFixed(2)} per kept); ratio ours/minimum = ${(first.length / minimum).toFixed(3)}; ${ms1.toFixed(0)} ms`,
);
console.log(
  `  second run (unchanged, new generation): ${second.length} requests, ${notModified} answered 304 (not counted), ${second.length - notModified} counted; ${ms2.toFixed(0)} ms`,
);
state.close();
await server.close();
rmSync(dir, { recursive: true, force: true });
