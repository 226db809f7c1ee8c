/**
 * The stored step log (harness/step-log.ts) reads back exactly, whatever the code under test
 * printed (a line that imitates a section opener cannot open one), and the parse of a stored
 * multi-process Go step splits it into its fresh runs, each checked against its own exit code.
 */
import { describe, it, expect } from 'vitest';
import {
  formatStepLog,
  readStepLog,
  type StoredRun,
} from '../../../../stages/swe5g/harness/step-log.js';
import { combineRuns, parseRuns, splitRuns } from '../../../../stages/swe5g/harness/parse.js';
import { stepCommand, testSpec } from '../../../../stages/swe5g/harness/spec.js';

const ev = (o: Record<string, unknown>): string => JSON.stringify(o);
const P = 'example.com/m/ngap';
const goRun = (action: 'pass' | 'fail'): string =>
  [
    ev({ Action: 'run', Package: P, Test: 'TestA' }),
    ev({ Action: action, Package: P, Test: 'TestA' }),
    ev({ Action: action, Package: P }),
  ].join('\n');

const run = (over: Partial<StoredRun> = {}): StoredRun => ({
  step: 'fix_1',
  executor: 'docker',
  exitCode: 0,
  timedOut: false,
  durationMs: 12,
  command: 'go test -json -count=1 ./ngap',
  stdout: '',
  stderr: '',
  collected: {},
  ...over,
});

describe('step log', () => {
  it('reads back exactly, empty sections, absent files and a forged section opener included', () => {
    const r = run({
      stdout: 'line 1\n--telebench-0000 stderr\n# telebench step log v2 boundary=x\n\n',
      stderr: '',
      collected: { '.telebench/junit.xml': '<x/>\n', '.telebench/tests.json': undefined },
    });
    const text = formatStepLog(r, ['model patch applied with git apply --verbose']);
    expect(text.split('\n')[1]).toBe('# step fix_1 executor docker exit 0 timed_out false 12 ms');
    expect(text).toContain('# model patch applied with git apply --verbose');
    expect(readStepLog(text)).toEqual(r);
  });

  it('a text that is not a step log is a clear error, not a stack trace', () => {
    expect(() => readStepLog('# step fix_1 executor docker exit 0\n')).toThrow(
      expect.objectContaining({ code: 'bad_step_log' }),
    );
  });
});

describe('fresh runs of a stored step', () => {
  const spec = testSpec({
    recipe: 'go',
    dirs: ['ngap'],
    moduleDir: '',
    settings: { limits: { timeout_s: 60, memory_mib: 512, cpus: 1, pids: 64 } },
  });

  it('splits a multi-process Go step at its run marks; pass in one run and fail in another is flaky', () => {
    expect(stepCommand(spec, 3)).toContain('while [ $i -lt 3 ]');
    const stdout = [
      goRun('pass'),
      'telebench-run 1 exit 0',
      goRun('fail'),
      'telebench-run 2 exit 1',
      goRun('pass'),
      'telebench-run 3 exit 0',
      '',
    ].join('\n');
    expect(splitRuns(stdout, 1).map((p) => p.exitCode)).toEqual([0, 1, 0]);
    const { parsed, ambiguous, each } = parseRuns(spec, [run({ stdout, exitCode: 1 })], 3);
    expect(ambiguous).toBe('');
    expect(each).toHaveLength(3);
    expect(parsed.tests).toEqual({ [`${P}::TestA`]: 'fail' });
    expect(parsed.flaky).toEqual([`${P}::TestA`]);
  });

  it('a run whose log disagrees with its own exit code is ambiguous; a missing run is too', () => {
    const forged = [goRun('fail'), 'telebench-run 1 exit 0', ''].join('\n');
    expect(parseRuns(spec, [run({ stdout: forged })], 1).ambiguous).toMatch(/exit code 0/);
    const short = [goRun('pass'), 'telebench-run 1 exit 0', ''].join('\n');
    expect(parseRuns(spec, [run({ stdout: short })], 3).ambiguous).toMatch(/1 of 3 fresh runs/);
  });

  it('combines runs: every run passing stays passing, no flaky', () => {
    const a = parseRuns(spec, [run({ stdout: goRun('pass') })]).parsed;
    expect(combineRuns([a, a, a]).tests).toEqual({ [`${P}::TestA`]: 'pass' });
    expect(combineRuns([a, a]).flaky).toEqual([]);
  });
});
