/**
 * A go.mod without a `go` directive is built as Go assumes it (1.16), not at the toolchain's
 * version (pipeline/providers/docker/go-directive.ts), through testgen's real host runner and the
 * harness's id steps with the host `go`: a 2019-style module whose code a newer vet rejects
 * (a non-constant format string, real magma__magma-141) builds and passes; a test that depends on
 * the pre-1.22 loop variable semantics passes (at the toolchain's version it fails); a go.mod
 * that has its `go` line keeps it, and is built at that version.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTests } from '../../../../stages/swe5g/testgen/executor.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A one-package module in a temporary folder. */
function module(goMod: string, files: Record<string, string>): string {
  const d = mkdtempSync(join(tmpdir(), 'telebench-godirective-'));
  dirs.push(d);
  writeFileSync(join(d, 'go.mod'), goMod);
  for (const [n, t] of Object.entries(files)) writeFileSync(join(d, n), t);
  return d;
}

const VET = {
  'x.go':
    'package x\n\nimport "fmt"\n\n// F formats s.\nfunc F(s string) string { return fmt.Sprintf(s) }\n',
  'x_test.go':
    'package x\n\nimport "testing"\n\nfunc TestF(t *testing.T) {\n\tif F("a") != "a" {\n\t\tt.Fatal("F")\n\t}\n}\n',
};
// before Go 1.22 the closures share one i: all see its last value
const LOOP = {
  'x.go':
    'package x\n\n// Fns returns three closures over the loop variable.\nfunc Fns() []func() int {\n\tvar out []func() int\n\tfor i := 0; i < 3; i++ {\n\t\tout = append(out, func() int { return i })\n\t}\n\treturn out\n}\n',
  'x_test.go':
    'package x\n\nimport "testing"\n\nfunc TestShared(t *testing.T) {\n\tfor _, f := range Fns() {\n\t\tif f() != 3 {\n\t\t\tt.Fatal("per-iteration loop variable: not the module\'s Go version")\n\t\t}\n\t}\n}\n',
};

describe('a go.mod without a go directive', () => {
  it('builds as Go 1.16: a newer vet check does not fail the build, and go.mod says 1.16', async () => {
    const d = module('module example.com/x\n', VET);
    const run = await runTests(d, 'go', ['example.com/x::TestF'], 300_000);
    expect(run.buildFailed, run.log).toBe(false);
    expect(run.statuses['example.com/x::TestF']).toBe('passed');
    expect(readFileSync(join(d, 'go.mod'), 'utf8')).toMatch(/^go 1\.16$/m);
  });

  it('keeps the pre-1.22 loop variable the module was written for', async () => {
    const d = module('module example.com/x\n', LOOP);
    const run = await runTests(d, 'go', ['example.com/x::TestShared'], 300_000);
    expect(run.statuses['example.com/x::TestShared'], run.log).toBe('passed');
  });

  it('a go.mod with its go line keeps it: the same test at go 1.22 sees per-iteration variables', async () => {
    const d = module('module example.com/x\n\ngo 1.22\n', LOOP);
    const run = await runTests(d, 'go', ['example.com/x::TestShared'], 300_000);
    expect(run.statuses['example.com/x::TestShared']).toBe('failed');
    expect(readFileSync(join(d, 'go.mod'), 'utf8')).not.toMatch(/go 1\.16/);
  });
});
