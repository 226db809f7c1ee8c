/**
 * testgen's Go direct call when the module proxy refuses a module (go-fallback.ts): the real host
 * `go`, a local proxy that answers 403 to everything (as proxy.golang.org does here for free5GC's
 * main-branch pseudo-versions), and the module's repository in a mirrors folder. Without the
 * fallback Strategy A reads "dependencies unavailable" and B is made; with it the commit's module
 * cache is filled through the mirror and the direct call flips. The test it makes still rejects
 * a no-op guard and accepts a fix written another way; without a mirror the first verdict stands.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import {
  checkFlip,
  generateTestGen,
  hostRunner,
} from '../../../../stages/swe5g/testgen/generate.js';
import { withGoModuleFallback } from '../../../../stages/swe5g/testgen/go-fallback.js';
import { testgenSchema } from '../../../../stages/swe5g/testgen/config.js';
import { buildRepo, resolvedOf, type BuiltRepo } from './repos.js';

const VARS = ['GOMODCACHE', 'GOPROXY', 'GOSUMDB', 'GOFLAGS', 'GONOSUMDB', 'GOPRIVATE'];
const saved: Record<string, string | undefined> = {};
let root: string;
let server: Server;
let mirrors: string;
let pseudo: string;
let repo: BuiltRepo;
const settings = testgenSchema.parse({});

/** git with a fixed author and commit date (the pseudo-version's time). */
function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@l',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@l',
      GIT_AUTHOR_DATE: '2026-02-04T03:06:58Z',
      GIT_COMMITTER_DATE: '2026-02-04T03:06:58Z',
    },
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.trim();
}

const handler = (guard: string): string => `package ngap

import "github.com/tbfall/util/logger"

type GNbID struct{ Value string }

type RanNodeID struct{ GNbId *GNbID }

// Describe returns the gNB id of the target node.
func Describe(id *RanNodeID) string {
${guard}	logger.Log("describe")
	return id.GNbId.Value
}
`;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'telebench-go-fallback-'));
  for (const k of VARS) saved[k] = process.env[k];
  // the module only a mirror has (free5gc/util at a main-branch pseudo-version, in small)
  const work = join(root, 'util-work');
  mkdirSync(join(work, 'logger'), { recursive: true });
  git(work, 'init', '-q');
  writeFileSync(join(work, 'go.mod'), 'module github.com/tbfall/util\n\ngo 1.21\n');
  writeFileSync(
    join(work, 'logger', 'logger.go'),
    'package logger\n\n// Log does nothing.\nfunc Log(string) {}\n',
  );
  git(work, 'add', '-A');
  git(work, 'commit', '-qm', 'util');
  pseudo = `v0.0.0-20260204030658-${git(work, 'rev-parse', 'HEAD').slice(0, 12)}`;
  mirrors = join(root, 'mirrors');
  git(root, 'clone', '-q', '--bare', work, join(mirrors, 'tbfall+util', 'repo'));
  // a proxy that refuses everything
  server = createServer((_req, res) => {
    res.statusCode = 403;
    res.end('Forbidden');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  process.env.GOPROXY = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  process.env.GOMODCACHE = join(root, 'empty-modcache');
  process.env.GOSUMDB = 'off';
  process.env.GOFLAGS = '';
  delete process.env.GONOSUMDB;
  delete process.env.GOPRIVATE;
  repo = buildRepo({
    'go.mod': `module example.org/amfish\n\ngo 1.21\n\nrequire github.com/tbfall/util ${pseudo}\n`,
    'internal/ngap/handler.go': handler(''),
  });
});
afterAll(() => {
  for (const k of VARS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  server?.close();
  repo?.cleanup();
  // the module cache go writes is read-only
  spawnSync('chmod', ['-R', 'u+w', root]);
  rmSync(root, { recursive: true, force: true });
});

const GUARD = '\tif id.GNbId == nil {\n\t\treturn ""\n\t}\n';

describe('Strategy A on Go when the proxy refuses a module', () => {
  it('without the fallback: dependencies unavailable, Strategy B', async () => {
    const fix = repo.commit({ 'internal/ngap/handler.go': handler(GUARD) }, 'fix nil GNbId');
    const gen = await generateTestGen(repo.dir, resolvedOf(repo, fix, 'go'), settings, hostRunner);
    expect(gen.testgen.strategy).toBe('B');
    expect(gen.testgen.strategy_reason).toMatch(/dependencies unavailable at base_commit/);
  });

  it('with the fallback and the mirror: the direct call flips; it rejects a no-op and accepts another correct fix', async () => {
    const fix = repo.commit({ 'internal/ngap/handler.go': handler(GUARD) }, 'fix nil GNbId');
    const r = resolvedOf(repo, fix, 'go');
    const runner = withGoModuleFallback(hostRunner, {
      stateDir: join(root, 'state'),
      mirrorsDir: mirrors,
      moduleDir: '',
    });
    const gen = await generateTestGen(repo.dir, r, settings, runner);
    expect(gen.testgen.strategy).toBe('A');
    expect(gen.strategyA.check?.parent?.log).toMatch(/module cache filled from the host cache/);
    const ids = gen.testgen.FAIL_TO_PASS;
    // the same test against other "fixes" at the parent's place: a no-op guard still panics
    const noop = repo.commit(
      { 'internal/ngap/handler.go': handler('\tif id.GNbId == nil {\n\t}\n') },
      'no-op',
    );
    const noopCheck = await checkFlip(
      repo.dir,
      { ...r, merge_commit: noop },
      gen.testgen.f2p_test_patch,
      ids,
      600_000,
      runner,
    );
    expect(noopCheck.ok).toBe(false);
    expect(noopCheck.reason).toMatch(/does not pass at merge_commit/);
    // a correct fix written another way (the value through a local, the good path in the if)
    const other = repo.commit(
      {
        'internal/ngap/handler.go': handler('').replace(
          '\treturn id.GNbId.Value\n',
          '\tif g := id.GNbId; g != nil {\n\t\treturn g.Value\n\t}\n\treturn ""\n',
        ),
      },
      'fix, another way',
    );
    const otherCheck = await checkFlip(
      repo.dir,
      { ...r, merge_commit: other },
      gen.testgen.f2p_test_patch,
      ids,
      600_000,
      runner,
    );
    expect(otherCheck.ok, otherCheck.reason).toBe(true);
  });

  it('with the fallback but no mirror of the module: the first verdict stands, and says why', async () => {
    const fix = repo.commit({ 'internal/ngap/handler.go': handler(GUARD) }, 'fix nil GNbId');
    const told: string[] = [];
    const runner = withGoModuleFallback(hostRunner, {
      stateDir: join(root, 'state-nomirror'),
      mirrorsDir: join(root, 'no-mirrors'),
      moduleDir: '',
      onUnavailable: (_c, why) => told.push(why),
    });
    const gen = await generateTestGen(repo.dir, resolvedOf(repo, fix, 'go'), settings, runner);
    expect(gen.testgen.strategy).toBe('B');
    expect(gen.testgen.strategy_reason).toMatch(/dependencies unavailable at base_commit/);
    expect(told.join('\n')).toMatch(/github\.com\/tbfall\/util@v0\.0\.0-20260204030658/);
  });
});
