/**
 * The harness's steps of tests chosen by id (testgen's host checks): one `go test` step per
 * import path in the folder of its module, ids quoted as shell words (a test named with `$` or a
 * quote runs as itself), and the specs run by the one step
 * runner on a real shell: a make target's exit code is its result.
 */
import { GO_DIRECTIVE_GUARD } from '../../../../pipeline/providers/docker/go-directive.js';
import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { idSteps, ID_BUILD_FAILED } from '../../../../stages/swe5g/harness/id-spec.js';
import { runStep } from '../../../../stages/swe5g/harness/run-step.js';
import { LocalExecutor } from '../../../../pipeline/providers/docker/executor.js';

const dir = mkdtempSync(join(tmpdir(), 'telebench-id-spec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('idSteps', () => {
  it('groups Go ids by import path and runs each in its module folder', () => {
    const steps = idSteps(
      'go',
      ['example.org/root/a::TestA', 'example.org/sub/b::TestB', 'example.org/root/a::TestC'],
      {
        timeoutMs: 60_000,
        modules: [
          { dir: '', path: 'example.org/root' },
          { dir: 'sub', path: 'example.org/sub' },
        ],
      },
    );
    expect(steps.map((s) => [s.name, s.ids])).toEqual([
      ['go test example.org/root/a', ['example.org/root/a::TestA', 'example.org/root/a::TestC']],
      ['go test example.org/sub/b', ['example.org/sub/b::TestB']],
    ]);
    expect(steps[0]!.spec.command).toBe(
      `${GO_DIRECTIVE_GUARD} && go test -json -count=1 -timeout 55s -run '^(TestA|TestC)$' 'example.org/root/a'`,
    );
    expect(steps[1]!.spec.command.startsWith(`cd 'sub' && ${GO_DIRECTIVE_GUARD} && go test`)).toBe(
      true,
    );
    expect(steps.every((s) => s.spec.parser === 'go-test-json')).toBe(true);
  });

  it('quotes pytest node ids and reads its XML report back', () => {
    const [step] = idSteps('python', ["tests/test_x.py::test_it[a'$b]"], {
      timeoutMs: 60_000,
    });
    expect(step!.spec.command).toContain(`'tests/test_x.py::test_it[a'\\''$b]'`);
    expect(step!.spec.collect).toEqual(['.telebench-ids/junit.xml']);
    expect(step!.spec.parser).toBe('junit-xml');
  });

  it("one meson step for every f2p id (the images' step script: no download, only the f2p executables), the build failure as its own exit code", () => {
    const steps = idSteps('c', ['f2p::f2p_a', 'f2p::f2p_b'], { timeoutMs: 60_000 });
    expect(steps).toHaveLength(1);
    const cmd = steps[0]!.spec.command;
    expect(cmd).toContain(`sys.exit(${ID_BUILD_FAILED})`);
    expect(cmd).toContain("--suite f2p --test 'f2p_a' --test 'f2p_b'");
    expect(cmd).toContain('"--wrap-mode=nodownload"');
    expect(cmd).not.toMatch(/meson compile -C/);
    expect(steps[0]!.spec.collect).toEqual([
      '.telebench-ids/f2p_build/meson-logs/testlog.json',
      '.telebench-ids/tests.json',
    ]);
  });

  it('make targets through the one step runner: exit code per target, one results file', async () => {
    const src = mkdtempSync(join(dir, 'src-'));
    writeFileSync(join(src, 'Makefile'), 'f2p_ok:\n\t@true\nf2p_bad:\n\t@false\n');
    const steps = idSteps('c', ['make::f2p_ok', 'make::f2p_bad'], {
      timeoutMs: 60_000,
    });
    const got: Record<string, string | undefined> = {};
    for (const s of steps) {
      const out = await runStep(
        s.spec,
        { name: s.name, files: {} },
        {
          executor: new LocalExecutor(),
          instance: { image: '', sourceDir: src },
          saveLog: (n) => n,
        },
      );
      for (const id of s.ids) got[id] = out.parsed.tests[id];
      expect(out.ambiguous).toBe('');
    }
    expect(got).toEqual({ 'make::f2p_ok': 'pass', 'make::f2p_bad': 'fail' });
  });
});
