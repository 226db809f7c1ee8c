// docs/how-to/add-a-test-log-parser.md, done once: a parser for a toy TAP-like log format with the
// harness's parser signature, checked against the run's exit code and graded like any other log.
import { describe, it, expect } from 'vitest';
import type { ParserInput } from '../../stages/swe5g/harness/parse.js';
import {
  checkAgreement,
  type ParsedRun,
  type TestStatus,
} from '../../stages/swe5g/harness/parsers.js';
import { gradeTests } from '../../stages/swe5g/harness/grading.js';
import { SkipItem } from '../../pipeline/errors.js';

/**
 * Toy format: one line per test, `ok <suite>::<name>`, `not ok <suite>::<name>`, or
 * `ok <suite>::<name> # SKIP`; `Bail out! <why>` is a build failure. A test with two different
 * results is a conflict (the harness makes that `ambiguous_log`).
 */
function parseToyTap(run: ParserInput): ParsedRun {
  const tests: Record<string, TestStatus> = {};
  const conflicts: string[] = [];
  const build_failures: string[] = [];
  for (const line of run.stdout.split('\n')) {
    const bail = /^Bail out!\s*(.*)$/.exec(line);
    if (bail) build_failures.push(bail[1] || 'build');
    const m = /^(not ok|ok) (\S+)( # SKIP)?$/.exec(line.trim());
    if (!m) continue;
    const status: TestStatus = m[3] ? 'skip' : m[1] === 'ok' ? 'pass' : 'fail';
    const id = m[2]!;
    if (tests[id] !== undefined && tests[id] !== status) conflicts.push(id);
    tests[id] = status;
  }
  return {
    tests,
    build_failures,
    package_failures: [],
    timed_out: false,
    ...(conflicts.length > 0 ? { conflicts } : {}),
  };
}

const run = (stdout: string, exitCode: number): ParserInput => ({ exitCode, stdout, files: [] });

describe('how-to: add a test-log parser', () => {
  it('parses per-test statuses that grading reads as FAIL_TO_PASS / PASS_TO_PASS', () => {
    const before = parseToyTap(run('not ok ngap::TestDecode\nok ngap::TestEncode\n', 1));
    const after = parseToyTap(
      run('ok ngap::TestDecode\nok ngap::TestEncode\nok ngap::TestSlow # SKIP\n', 0),
    );
    checkAgreement(after, 0, 'gold');
    expect(after.tests).toEqual({
      'ngap::TestDecode': 'pass',
      'ngap::TestEncode': 'pass',
      'ngap::TestSlow': 'skip',
    });
    expect(before.tests['ngap::TestDecode']).toBe('fail');
    const verdict = gradeTests(after, {
      FAIL_TO_PASS: ['ngap::TestDecode'],
      PASS_TO_PASS: ['ngap::TestEncode'],
    });
    expect(verdict.resolved).toBe(true);
    expect(
      gradeTests(before, { FAIL_TO_PASS: ['ngap::TestDecode'], PASS_TO_PASS: [] }).resolved,
    ).toBe(false);
  });

  it('a log that contradicts its exit code, or itself, is ambiguous, never guessed', () => {
    expect(() => checkAgreement(parseToyTap(run('not ok a::T\n', 0)), 0, 'gold')).toThrow(SkipItem);
    const twice = parseToyTap(run('ok a::T\nnot ok a::T\n', 1));
    expect(twice.conflicts).toEqual(['a::T']);
    expect(() => checkAgreement(twice, 1, 'gold')).toThrow(/contradicting results/);
    expect(parseToyTap(run('Bail out! compile error\n', 2)).build_failures).toEqual([
      'compile error',
    ]);
  });
});
