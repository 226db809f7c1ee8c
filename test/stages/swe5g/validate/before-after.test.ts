/**
 * SWE-bench's before/after split of validation (issue 30), pure over parsed runs: the before runs
 * are the parent WITH the test patches, so a renamed test exists only under its new name and a
 * rewritten test is judged on its new body. Real parses of real logs are checked in
 * rewritten-tests.test.ts; here each rule on its own, with the wrong answers it must not give.
 */
import { describe, it, expect } from 'vitest';
import type { ParsedRun, TestStatus } from '../../../../stages/swe5g/harness/parsers.js';
import {
  fixRuns,
  parentNeedsRerunAfterFix,
  splitBeforeAfter,
} from '../../../../stages/swe5g/validate/verdicts.js';

const run = (tests: Record<string, TestStatus>, flaky: string[] = []): ParsedRun => ({
  tests,
  build_failures: [],
  package_failures: [],
  timed_out: false,
  ...(flaky.length ? { flaky } : {}),
});

describe('splitBeforeAfter', () => {
  it('a renamed test is PASS_TO_PASS under its new name, a rewritten failing body FAIL_TO_PASS', () => {
    // before: the parent with the test patch (new name `Len/sixteen`, new body of `Errors`)
    const before = [run({ 'p::Len': 'pass', 'p::Len/sixteen': 'pass', 'p::Errors': 'fail' })];
    const after = fixRuns([
      run({ 'p::Len': 'pass', 'p::Len/sixteen': 'pass', 'p::Errors': 'pass' }),
      run({ 'p::Len': 'pass', 'p::Len/sixteen': 'pass', 'p::Errors': 'pass' }),
    ]);
    const s = splitBeforeAfter(before, after, []);
    expect(s.FAIL_TO_PASS).toEqual(['p::Errors']);
    expect(s.p2pCandidates.sort()).toEqual(['p::Len', 'p::Len/sixteen']);
    // the wrong answers of a parent run without the test patch: the old name, the old body
    expect(s.p2pCandidates).not.toContain('p::Len/key');
    expect(s.p2pCandidates).not.toContain('p::Errors');
    expect(s.failingBoth).toEqual([]);
  });

  it('missing before counts as failing (SWE-bench test_failed); mixed after it is dropped as flaky', () => {
    const before = [run({ 'p::New': 'fail' })]; // New panicked: Later and Sometimes are missing
    const after = fixRuns([
      run({ 'p::New': 'pass', 'p::Later': 'pass', 'p::Sometimes': 'pass' }),
      run({ 'p::New': 'pass', 'p::Later': 'pass', 'p::Sometimes': 'fail' }),
    ]);
    const s = splitBeforeAfter(before, after, []);
    expect(s.FAIL_TO_PASS).toEqual(['p::Later', 'p::New']);
    expect(s.missingFlaky).toEqual(['p::Sometimes']);
  });

  it('given tests come first in their order; a test failing before and after is failing both', () => {
    const before = [run({ 'p::Z': 'fail', 'p::A': 'fail', 'p::Db': 'fail', 'p::Ok': 'pass' })];
    const after = fixRuns([
      run({ 'p::Z': 'pass', 'p::A': 'pass', 'p::Db': 'fail', 'p::Ok': 'pass' }),
    ]);
    const s = splitBeforeAfter(before, after, ['p::Z']);
    expect(s.FAIL_TO_PASS).toEqual(['p::Z', 'p::A']);
    expect(s.failingBoth).toEqual(['p::Db']);
    expect(s.p2pCandidates).toEqual(['p::Ok']);
  });

  it('a test flaky before is in neither list; a failing-before test mixed after stays for the flaky check', () => {
    const before = [run({ 'p::F': 'fail', 'p::M': 'fail' }, ['p::F'])];
    const after = fixRuns([
      run({ 'p::F': 'pass', 'p::M': 'pass' }),
      run({ 'p::F': 'pass', 'p::M': 'fail' }),
    ]);
    const s = splitBeforeAfter(before, after, []);
    expect(s.FAIL_TO_PASS).toEqual(['p::M']);
    expect(s.parent.flaky).toEqual(['p::F']);
    expect(after.consistent('p::M')).toBe(false);
  });
});

describe('parentNeedsRerunAfterFix', () => {
  it('re-runs for a test failing before and not steadily passing after, never for a true FAIL_TO_PASS or a given test', () => {
    const before = [run({ 'p::Fix': 'fail', 'p::Db': 'fail' })];
    const steady = fixRuns([run({ 'p::Fix': 'pass', 'p::Db': 'pass' })]);
    expect(parentNeedsRerunAfterFix(before, steady, [])).toBe(false);
    const dbFails = fixRuns([run({ 'p::Fix': 'pass', 'p::Db': 'fail' })]);
    expect(parentNeedsRerunAfterFix(before, dbFails, [])).toBe(true);
    expect(parentNeedsRerunAfterFix(before, dbFails, ['p::Db'])).toBe(false);
  });
});
