import { GO_DIRECTIVE_GUARD } from '../../../../pipeline/providers/docker/go-directive.js';
import { describe, it, expect } from 'vitest';
import {
  registryTestIds,
  selectTestDirs,
  stepCommand,
  testCommand,
  usesMakeStep,
} from '../../../../stages/swe5g/harness/spec.js';

const touched = (path: string): string =>
  `diff --git a/${path} b/${path}\n--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-a\n+b\n`;

describe('selectTestDirs', () => {
  it('Go: the fix directories plus the test patches directories, relative to the module, sorted', () => {
    expect(
      selectTestDirs({
        recipe: 'go',
        scope: 'touched',
        moduleDir: '',
        sourceDirs: ['ngap', '.'],
        testPatches: [touched('context/a_test.go'), '', touched('ngap/b_test.go')],
      }),
    ).toEqual(['.', 'context', 'ngap']);
    expect(
      selectTestDirs({
        recipe: 'go',
        scope: 'touched',
        moduleDir: 'lte/gateway/go',
        sourceDirs: ['lte/gateway/go', 'lte/gateway/go/ngap'],
        testPatches: [touched('lte/gateway/go/ngap/x_test.go')],
      }),
    ).toEqual(['.', 'ngap']);
  });

  it('Python: only the test files directories ("all" when the test patches touch none)', () => {
    expect(
      selectTestDirs({
        recipe: 'python',
        scope: 'touched',
        moduleDir: '',
        sourceDirs: ['pkg'],
        testPatches: [touched('tests/unit/test_x.py'), touched('tests/test_y.py')],
      }),
    ).toEqual(['tests', 'tests/unit']);
    expect(
      selectTestDirs({
        recipe: 'python',
        scope: 'touched',
        moduleDir: '',
        sourceDirs: ['pkg'],
        testPatches: [''],
      }),
    ).toBe('all');
  });

  it('a monorepo folder: directories outside it are left out (its steps run inside it)', () => {
    const folder = 'lte/gateway/python/magma/subscriberdb';
    expect(
      selectTestDirs({
        recipe: 'python',
        scope: 'touched',
        moduleDir: folder,
        sourceDirs: [`${folder}/protocols`],
        testPatches: [touched('lte/gateway/python/scripts/test_cli.py')],
      }),
    ).toBe('all');
    expect(
      selectTestDirs({
        recipe: 'python',
        scope: 'touched',
        moduleDir: folder,
        sourceDirs: [],
        testPatches: [touched(`${folder}/tests/x_tests.py`), touched('orc8r/t/test_y.py')],
      }),
    ).toEqual(['tests']);
    expect(
      selectTestDirs({
        recipe: 'go',
        scope: 'touched',
        moduleDir: 'feg/radius/src',
        sourceDirs: ['feg/radius/src/server', 'orc8r/lib/go/service'],
        testPatches: [touched('orc8r/lib/go/x_test.go')],
      }),
    ).toEqual(['server']);
  });

  it('scope repo and the C meson recipe run every test', () => {
    const base = { moduleDir: '', sourceDirs: ['src'], testPatches: [touched('tests/t.c')] };
    expect(selectTestDirs({ ...base, recipe: 'go', scope: 'repo' })).toBe('all');
    expect(selectTestDirs({ ...base, recipe: 'c-meson', scope: 'touched' })).toBe('all');
  });
});

describe('testCommand', () => {
  it("keeps every tool's own output in the step log (nothing sent to /dev/null)", () => {
    for (const recipe of ['go', 'python', 'c-meson'] as const) {
      const { command } = testCommand(recipe, 'all', 60, '');
      expect(command, recipe).not.toContain('/dev/null');
    }
    expect(testCommand('c-meson', 'all', 60, '').command).toContain('exit 97');
  });
});

describe('testCommand for C with registry commands (issue 16)', () => {
  it('a make test command and a build command make the make step; every tool keeps its stderr', () => {
    const { command, collect } = testCommand('c-meson', 'all', 60, '', {
      commands: { test: 'make check unit', build: 'make all' },
    });
    expect(command).toContain("t 'make::check' 'make --no-print-directory check'");
    expect(command).toContain("t 'make::unit' 'make --no-print-directory unit'");
    expect(command).toMatch(/\{ make all\n\}/);
    // one run per container: repeats of a make step are fresh containers (issue 21)
    expect(stepCommand({ command, fresh: 'container' }, 3)).toBe(command);
    expect(command).not.toContain('/dev/null');
    expect(command).not.toContain('meson');
    expect(collect).toEqual(['.telebench/make-results.txt']);
  });

  it('any other command is one test; a meson command keeps the meson step (Open5GS)', () => {
    expect(registryTestIds('./run-tests.sh --fast')).toEqual([
      { id: 'command::./run-tests.sh --fast', run: './run-tests.sh --fast' },
    ]);
    expect(usesMakeStep({ test: 'meson test -C build' })).toBe(false);
    expect(
      testCommand('c-meson', 'all', 60, '', { commands: { test: 'meson test -C build' } }).command,
    ).toContain('meson setup');
    expect(usesMakeStep({ build: 'make' })).toBe(false);
    // Go keeps go test -json; repeats are separate -count=1 processes (issue 21), never -count=3
    const go = testCommand('go', ['ngap'], 60, '', { commands: { test: 'make check' } }).command;
    expect(go).toBe(`${GO_DIRECTIVE_GUARD} && go test -json -count=1 -timeout 60s ./ngap`);
    const three = stepCommand({ command: go, fresh: 'process' }, 3);
    expect(three).toContain('-lt 3');
    expect(three).toContain('telebench-run $i exit $c');
    expect(three).not.toContain('-count=3');
  });
});
