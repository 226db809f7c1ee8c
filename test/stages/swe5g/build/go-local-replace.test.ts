/**
 * A Go module inside a monorepo whose go.mod replaces a sibling folder (Magma's
 * `feg/radius/src`: `magma/orc8r/lib/go => ../../../orc8r/lib/go`): `go mod download` of its
 * go.mod alone stopped with "reading ../../../orc8r/lib/go/go.mod: no such file or directory"
 * (go_mod_download_failed on every Magma Go candidate tried). The env layer's dependency files now
 * carry the replaced folders' go.mod files, and the host's Go downloads the modules they require.
 * A real repository built here and the host's Go, with a module cache the test writes; no network.
 */
import { describe, it, expect, beforeAll, afterAll, afterEach } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  downloadFiles,
  goDepFiles,
  hostModCache,
} from '../../../../stages/swe5g/build/go-modules.js';
import { depModuleCache, DEP } from '../../../fixtures/repos/go-depbump.js';
import { commit, git } from '../../../fixtures/git-repo.js';

const VARS = ['GOMODCACHE', 'GOPROXY', 'GOSUMDB', 'GOFLAGS', 'GONOSUMDB'];
const saved: Record<string, string | undefined> = {};
let root: string;
let repo: string;
let env: string;

const RADIUS = `module fbc/cwf/radius

go 1.21

replace (
\tmagma/orc8r/lib/go => ../../../orc8r/lib/go
\texample.com/other => example.com/other v1.0.0
)

require (
\tmagma/orc8r/lib/go v0.0.0
\t${DEP} v1.0.0 // indirect
)
`;

beforeAll(() => {
  for (const k of VARS) saved[k] = process.env[k];
  root = mkdtempSync(join(tmpdir(), 'telebench-localreplace-'));
  repo = join(root, 'magma');
  git(root, 'init', '-q', '--initial-branch=master', repo);
  env = commit(
    repo,
    {
      'feg/radius/src/go.mod': RADIUS,
      'feg/radius/src/main.go': 'package main\n\nfunc main() {}\n',
      'orc8r/lib/go/go.mod': `module magma/orc8r/lib/go\n\ngo 1.21\n\nrequire ${DEP} v1.0.0\n`,
      'orc8r/lib/go/lib.go': `package lib\n`,
    },
    'monorepo',
  );
});
afterEach(() => {
  for (const k of VARS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a monorepo module with local replace folders', () => {
  it('carries the replaced folders go.mod and points the download go.mod at them', async () => {
    const files = await goDepFiles(repo, { environment_setup_commit: env }, 'feg/radius/src');
    expect(Object.keys(files).sort()).toEqual(['_local/orc8r/lib/go/go.mod', 'go.mod']);
    const work = downloadFiles(files, false, 'feg/radius/src');
    expect(work['go.mod']).toContain('magma/orc8r/lib/go => ./_local/orc8r/lib/go');
    // a module-path replacement is not a folder
    expect(work['go.mod']).toContain('example.com/other => example.com/other v1.0.0');
    expect(work['_local/orc8r/lib/go/go.mod']).toContain(`require ${DEP} v1.0.0`);
  });

  it("the host's Go downloads what the replaced folder requires (go_modules: host)", async () => {
    process.env.GOMODCACHE = depModuleCache(join(root, 'hostcache'), ['v1.0.0'], true);
    process.env.GOPROXY = 'off';
    process.env.GOSUMDB = 'off';
    process.env.GOFLAGS = '';
    const files = await goDepFiles(repo, { environment_setup_commit: env }, 'feg/radius/src');
    const mod = await hostModCache(join(root, 'state'), files, 'feg/radius/src');
    expect(existsSync(join(mod, `${DEP}@v1.0.0`, 'dep.go'))).toBe(true);
  });
});
