/**
 * bench/mine-git: the git source of SWE-Bench 5G mining on a repository built here, shaped like
 * Magma (one repository, several registry folders, squash landings `(#N)` with `refs/pull/N/head`).
 * Printed, side by side on the same repository:
 * 1. diffs read in one `git diff-tree --stdin | git patch-id --stable` stream (patch-ids.ts)
 *    against one `git diff --numstat` + `git show | git patch-id` per commit (what per-commit
 *    reading costs): ratio per-commit / batch;
 * 2. one walk serving every folder (what the stages do) against one walk per folder (each folder
 *    mining the repository on its own, as before issue 21): ratio; and the stages' time;
 * 3. a second run of the stages (new generation) reading patch-ids from the store's cache.
 *
 *   npx tsx bench/mine-git.bench.ts [--commits 400] [--folders 6]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { openState } from '../pipeline/state.js';
import { swe5gConfigSchema, type HasSwe5g } from '../stages/swe5g/config.js';
import { runSwe5gMining } from '../test/fixtures/swe5g-mining-run.js';
import { diffFacts } from '../pipeline/providers/git/patch-ids.js';
import { mineMirror } from '../pipeline/providers/git/mirror-source.js';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const COMMITS = arg('commits', 400);
const FOLDERS = arg('folders', 6);

const root = mkdtempSync(join(tmpdir(), 'bench-mine-git-'));
const work = join(root, 'work');
mkdirSync(work);
const env = {
  PATH: process.env.PATH,
  HOME: root,
  GIT_AUTHOR_NAME: 'Dev',
  GIT_AUTHOR_EMAIL: 'dev@example.org',
  GIT_COMMITTER_NAME: 'Dev',
  GIT_COMMITTER_EMAIL: 'dev@example.org',
  GIT_CONFIG_NOSYSTEM: '1',
};
const git = (dir: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd: dir, env, encoding: 'utf8' }).trim();
const write = (p: string, text: string): void => {
  mkdirSync(dirname(join(work, p)), { recursive: true });
  writeFileSync(join(work, p), text);
};

git(work, 'init', '-q', '-b', 'master');
for (let f = 0; f < FOLDERS; f++) write(`comp${f}/main.go`, 'package main\n');
git(work, 'add', '-A');
git(work, 'commit', '-q', '-m', 'initial');
// each landing: a PR head off master, squashed onto master with "(#N)" (same patch-id)
for (let n = 1; n <= COMMITS; n++) {
  const f = n % FOLDERS;
  const file = `comp${f}/f${n % 7}.go`;
  const text = `package main\n// change ${n}\nvar v${n} = ${n}\n`;
  git(work, 'checkout', '-q', '-b', `pr${n}`);
  write(file, text);
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', `wip ${n}`);
  git(work, 'update-ref', `refs/pull/${n}/head`, 'HEAD');
  git(work, 'checkout', '-q', 'master');
  git(work, 'merge', '-q', '--squash', `pr${n}`);
  git(work, 'commit', '-q', '-m', `comp${f}: change ${n} (#${n})`);
  git(work, 'branch', '-q', '-D', `pr${n}`);
}
const mirrors = join(root, 'mirrors');
mkdirSync(join(mirrors, 'magma+magma'), { recursive: true });
const mirror = join(mirrors, 'magma+magma', 'repo');
git(root, 'clone', '-q', '--mirror', work, mirror);
writeFileSync(
  join(root, 'repos.yaml'),
  `version: 1\nrepositories:\n${Array.from(
    { length: FOLDERS },
    (_, f) =>
      `  - { id: "magma/magma:comp${f}", owner: magma, name: magma, path: comp${f}, language: go, default_branch: master, nf: AGW, issues_repo: magma/magma, license: BSD-3-Clause, test: { scope: touched }, image: go }`,
  ).join('\n')}\n`,
);

// 1. batch against per-commit reading of the same diffs
const shas = git(mirror, 'rev-list', 'master').split('\n');
const reqs = shas.map((to) => ({ from: null, to }));
let t = performance.now();
const batch = await diffFacts(mirror, reqs);
const msBatch = performance.now() - t;
t = performance.now();
for (const sha of shas) {
  execFileSync('git', ['diff-tree', '--root', '-r', '--numstat', '--no-renames', sha], {
    cwd: mirror,
  });
  const show = execFileSync('git', ['show', '--no-renames', sha], { cwd: mirror });
  execFileSync('git', ['patch-id', '--stable'], { cwd: mirror, input: show });
}
const msPer = performance.now() - t;

// 2. the stages with one shared walk, against one walk per folder
const config = (generation: number): HasSwe5g => ({
  swe5g: swe5gConfigSchema.parse({
    source: 'git',
    mining: { mirrors_dir: 'mirrors', generation },
    filter: { keep_git_without_issue: true },
  }),
});
const state = openState(join(root, 'state'));
t = performance.now();
const r1 = await runSwe5gMining({
  config: config(1),
  dir: root,
  stateDir: join(root, 'state'),
  state,
});
const msShared = performance.now() - t;
if (r1.exitCode !== 0) throw new Error(`mining run failed with exit ${r1.exitCode}`);
t = performance.now();
await mineMirror(mirror, { branch: 'master', issuesElsewhere: false });
const msOneWalk = performance.now() - t;
t = performance.now();
for (let f = 0; f < FOLDERS; f++)
  await mineMirror(mirror, { branch: 'master', issuesElsewhere: false });
const msPerFolder = performance.now() - t;

// 3. a second run: patch-ids from the store's cache
t = performance.now();
const r2 = await runSwe5gMining({
  config: config(2),
  dir: root,
  stateDir: join(root, 'state'),
  state,
});
const msWarm = performance.now() - t;
if (r2.exitCode !== 0) throw new Error(`second mining run failed with exit ${r2.exitCode}`);
const mined = [...state.store.items('swe5g.mine')].reduce(
  (n, r) => n + ((r.output as { prs?: unknown[] } | null)?.prs?.length ?? 0),
  0,
);

console.log(`bench/mine-git: ${shas.length} commits, ${FOLDERS} folders, ${mined} PRs mined`);
console.log(
  `  diffs: batch ${msBatch.toFixed(0)} ms (${batch.facts.size} read) vs one process pair per commit ${msPer.toFixed(0)} ms: ratio per-commit/batch = ${(msPer / msBatch).toFixed(1)}`,
);
console.log(
  `  walks for ${FOLDERS} folders: one shared walk ${msOneWalk.toFixed(0)} ms vs a walk per folder ${msPerFolder.toFixed(0)} ms: ratio = ${(msPerFolder / msOneWalk).toFixed(2)}; the stages (mine, link, filter) with the shared walk: ${msShared.toFixed(0)} ms`,
);
console.log(
  `  second run (new generation, patch-ids cached): ${msWarm.toFixed(0)} ms; ratio first/second = ${(msShared / msWarm).toFixed(2)}`,
);
state.close();
rmSync(root, { recursive: true, force: true });
