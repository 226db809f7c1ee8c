/**
 * `telebench config check` validates the registries a configuration names, not only that they
 * exist: a bad value in the SWE-Bench 5G registry or an unknown id in `swe5g.repos` is an error
 * naming the file, the line and the key (exit 2), as a run's first stage would report it.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../pipeline/manifest.js';

const BIN = join(PROJECT_ROOT, 'bin', 'telebench.js');
const dir = mkdtempSync(join(tmpdir(), 'telebench-checkreg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const check = (config: string) =>
  spawnSync(process.execPath, [BIN, 'config', 'check', '--config', config], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, CI: 'true' },
  });

/** A config beside a copy of the project's registry with `edit` applied to its text. */
function setup(name: string, edit: (registry: string) => string, repos?: string[]): string {
  const reg = readFileSync(join(PROJECT_ROOT, 'config', 'repos.yaml'), 'utf8');
  writeFileSync(join(dir, `${name}.repos.yaml`), edit(reg));
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `version: 1\nswe5g:\n  registry: ${name}.repos.yaml\n${repos ? `  repos: [${repos.join(', ')}]\n` : ''}`,
  );
  return file;
}

describe('config check reads the repository registry', () => {
  it('a copy of the project registry is valid', () => {
    const r = check(setup('same', (s) => s));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/same\.yaml: valid/);
  });

  it('names the line and key of a bad environment value (cgo on the C entry)', () => {
    const file = setup('cgo', (s) =>
      s.replace('      compilers: [gcc, g++]\n', '      compilers: [gcc, g++]\n      cgo: true\n'),
    );
    expect(readFileSync(join(dir, 'cgo.repos.yaml'), 'utf8')).toContain('      cgo: true\n');
    const r = check(file);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/cgo\.repos\.yaml:\d+: .*environment\.cgo: cgo is a Go setting/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('names an unknown key and an unknown repository id', () => {
    const typo = check(
      setup('typo', (s) => s.replace('default_branch: main', 'default_brnch: main')),
    );
    expect(typo.status).toBe(2);
    expect(typo.stderr).toMatch(/typo\.repos\.yaml:\d+: .*default_brnch/);
    const ids = check(setup('ids', (s) => s, ['free5gc/amf', 'acme/nope']));
    expect(ids.status).toBe(2);
    expect(ids.stderr).toMatch(/swe5g\.repos: unknown repository id\(s\) "acme\/nope"/);
  });
});
