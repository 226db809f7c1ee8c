import { describe, it, expect, afterAll } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checkAgreement,
  parseGoTestJson,
  parseMakeResults,
  parseMesonTestLog,
  parsePytestJUnit,
} from '../../../../stages/swe5g/harness/parsers.js';
import { SkipItem } from '../../../../pipeline/errors.js';

const ev = (o: Record<string, unknown>): string => JSON.stringify(o);
const P = 'example.com/m/ngap';

describe('parseGoTestJson', () => {
  it('uses the Action field: output that imitates a pass does not make a pass', () => {
    const log = [
      ev({ Action: 'run', Package: P, Test: 'TestNil' }),
      ev({ Action: 'output', Package: P, Test: 'TestNil', Output: '--- PASS: TestNil (0.00s)\n' }),
      ev({
        Action: 'output',
        Package: P,
        Test: 'TestNil',
        Output: ev({ Action: 'pass', Package: P, Test: 'TestNil' }) + '\n',
      }),
      ev({ Action: 'output', Package: P, Output: 'ok  \texample.com/m/ngap\t0.01s\n' }),
      '--- PASS: TestNil (0.00s)',
      ev({ Action: 'fail', Package: P, Test: 'TestNil' }),
      ev({ Action: 'fail', Package: P }),
    ].join('\n');
    const r = parseGoTestJson(log);
    expect(r.tests[`${P}::TestNil`]).toBe('fail');
    expect(r.package_failures).toEqual([]);
  });

  it('a package with no test files is a run with no tests, not an ambiguous log', () => {
    const r = parseGoTestJson(
      [
        ev({ Action: 'start', Package: P }),
        ev({ Action: 'output', Package: P, Output: '?   \texample.com/m/ngap\t[no test files]\n' }),
        ev({ Action: 'skip', Package: P }),
      ].join('\n'),
    );
    expect(r.tests).toEqual({});
    expect(() => checkAgreement(r, 0, 'parent_p2p')).not.toThrow();
    expect(() => checkAgreement({ ...r, packages: [] }, 0, 'parent_p2p')).toThrow(/no test result/);
  });

  it('rejects a log where a test both fails and passes (an event injected after the real one)', () => {
    const log = [
      ev({ Action: 'run', Package: P, Test: 'TestNil' }),
      ev({ Action: 'fail', Package: P, Test: 'TestNil' }),
      ev({ Action: 'pass', Package: P, Test: 'TestNil' }),
      ev({ Action: 'pass', Package: P }),
    ].join('\n');
    const r = parseGoTestJson(log);
    expect(r.conflicts).toEqual([`${P}::TestNil`]);
    expect(() => checkAgreement(r, 0, 'fix_1')).toThrow(/contradicting results/);
  });

  it('marks a test that never finished (panic) as failing and keeps subtests', () => {
    const log = [
      ev({ Action: 'run', Package: P, Test: 'TestA' }),
      ev({ Action: 'run', Package: P, Test: 'TestA/sub' }),
      ev({ Action: 'pass', Package: P, Test: 'TestA/sub' }),
      ev({ Action: 'run', Package: P, Test: 'TestB' }),
      ev({
        Action: 'output',
        Package: P,
        Test: 'TestB',
        Output: 'panic: runtime error: invalid memory address\n',
      }),
      ev({ Action: 'fail', Package: P }),
    ].join('\n');
    const r = parseGoTestJson(log);
    expect(r.tests).toEqual({
      [`${P}::TestA/sub`]: 'pass',
      [`${P}::TestA`]: 'fail',
      [`${P}::TestB`]: 'fail',
    });
  });

  it('reports build failures and timeouts', () => {
    const log = [
      ev({ ImportPath: `${P} [${P}.test]`, Action: 'build-fail' }),
      ev({ Action: 'fail', Package: P, FailedBuild: `${P} [${P}.test]` }),
      ev({
        Action: 'output',
        Package: 'x/y',
        Test: 'TestSlow',
        Output: 'panic: test timed out after 20s\n',
      }),
    ].join('\n');
    const r = parseGoTestJson(log);
    expect(r.build_failures).toEqual([P]);
    expect(r.timed_out).toBe(true);
  });
});

describe('parsePytestJUnit', () => {
  it('gives pytest node ids and statuses', () => {
    const xml = `<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="3">
      <testcase classname="tests.test_x" file="tests/test_x.py" name="test_ok"/>
      <testcase classname="tests.test_x" file="tests/test_x.py" name="test_bad"><failure message="boom">x</failure></testcase>
      <testcase classname="tests.test_x.TestK" file="tests/test_x.py" name="test_m"><skipped message="s"/></testcase>
    </testsuite></testsuites>`;
    expect(parsePytestJUnit(xml).tests).toEqual({
      'tests/test_x.py::test_ok': 'pass',
      'tests/test_x.py::test_bad': 'fail',
      'tests/test_x.py::TestK::test_m': 'skip',
    });
  });
});

describe('parsePytestJUnit against real pytest (issue 14, section 2)', () => {
  // Two outer classes each holding an inner class TestCase with test_decode: one fails, one
  // passes. Before, both became tests/test_dup.py::TestCase::test_decode and the pass overwrote
  // the failure. The ids must be pytest's own node ids (from --collect-only).
  it('gives every nested-class test its pytest node id and its own outcome', () => {
    const dir = mkdtempSync(join(tmpdir(), 'telebench-pytest-ids-'));
    try {
      mkdirSync(join(dir, 'tests', 'v1.2'), { recursive: true });
      writeFileSync(
        join(dir, 'tests', 'test_dup.py'),
        [
          'import pytest',
          'class TestAmf:',
          '    class TestCase:',
          '        def test_decode(self):',
          '            assert False',
          'class TestSmf:',
          '    class TestCase:',
          '        def test_decode(self):',
          '            pass',
          '@pytest.fixture',
          'def broken_teardown():',
          '    yield 1',
          '    raise RuntimeError("teardown")',
          'def test_fails_then_teardown_errors(broken_teardown):',
          '    assert False',
          '@pytest.mark.parametrize("v", ["a.b", "c::d"])',
          'def test_param(v):',
          '    assert v',
          '',
        ].join('\n'),
      );
      writeFileSync(
        join(dir, 'tests', 'v1.2', 'test_dotted.py'),
        'class TestX:\n    def test_y(self):\n        pass\n',
      );
      const run = spawnSync(
        'python3',
        [
          '-m',
          'pytest',
          '-q',
          '-p',
          'no:cacheprovider',
          '--junitxml=out.xml',
          '-o',
          'junit_family=xunit1',
          'tests',
        ],
        { cwd: dir, encoding: 'utf8' },
      );
      expect(run.status).toBe(1);
      const collected = execFileSync(
        'python3',
        ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', '--collect-only', 'tests'],
        { cwd: dir, encoding: 'utf8' },
      )
        .split('\n')
        .filter((l) => l.startsWith('tests/'))
        .sort();
      const r = parsePytestJUnit(readFileSync(join(dir, 'out.xml'), 'utf8'));
      expect(Object.keys(r.tests).sort()).toEqual(collected);
      expect(r.tests).toEqual({
        'tests/test_dup.py::TestAmf::TestCase::test_decode': 'fail',
        'tests/test_dup.py::TestSmf::TestCase::test_decode': 'pass',
        'tests/test_dup.py::test_fails_then_teardown_errors': 'fail',
        'tests/test_dup.py::test_param[a.b]': 'pass',
        'tests/test_dup.py::test_param[c::d]': 'pass',
        'tests/v1.2/test_dotted.py::TestX::test_y': 'pass',
      });
      // the teardown error pytest writes as a second testcase of one id is not a conflict
      expect(r.conflicts).toEqual([]);
      expect(() => checkAgreement(r, 1, 'fix_1')).not.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('two results for one id never merge silently (every log format)', () => {
  it('pytest JUnit: two testcases of one id are a conflict, the failure kept', () => {
    const xml = `<testsuites><testsuite name="pytest">
      <testcase classname="tests.test_x.TestA" file="tests/test_x.py" name="test_y"><failure message="x"/></testcase>
      <testcase classname="tests.test_x.TestA" file="tests/test_x.py" name="test_y"/>
    </testsuite></testsuites>`;
    const r = parsePytestJUnit(xml);
    expect(r.conflicts).toEqual(['tests/test_x.py::TestA::test_y']);
    expect(r.tests['tests/test_x.py::TestA::test_y']).toBe('fail');
    expect(() => checkAgreement(r, 1, 'fix_1')).toThrow(/contradicting results/);
  });

  it('go test -json: a second terminal action of one test, even the same one, is a conflict', () => {
    const log = [
      ev({ Action: 'run', Package: P, Test: 'TestNil' }),
      ev({ Action: 'pass', Package: P, Test: 'TestNil' }),
      ev({ Action: 'pass', Package: P, Test: 'TestNil' }),
      ev({ Action: 'pass', Package: P }),
    ].join('\n');
    expect(parseGoTestJson(log).conflicts).toEqual([`${P}::TestNil`]);
  });

  it('meson testlog: two results of one suite::name are a conflict; the name prefix beats introspect', () => {
    const dup = [
      ev({ name: 'cget:unit / t1', result: 'FAIL' }),
      ev({ name: 'cget:unit / t1', result: 'OK' }),
    ].join('\n');
    const r = parseMesonTestLog(dup);
    expect(r.conflicts).toEqual(['unit::t1']);
    expect(r.tests['unit::t1']).toBe('fail');
    // one name in two suites: introspect (keyed by name) would give both the last suite
    const two = [
      ev({ name: 'cget:unit / t1', result: 'FAIL' }),
      ev({ name: 'cget:f2p / t1', result: 'OK' }),
    ].join('\n');
    const intro = JSON.stringify([
      { name: 't1', suite: ['cget:unit'] },
      { name: 't1', suite: ['cget:f2p'] },
    ]);
    const m = parseMesonTestLog(two, intro);
    expect(m.tests).toEqual({ 'unit::t1': 'fail', 'f2p::t1': 'pass' });
    expect(m.conflicts).toEqual([]);
  });
});

describe('parseMesonTestLog', () => {
  it('maps meson results', () => {
    const log = [
      ev({ name: 'ok_case', result: 'OK', suite: ['proj:unit'] }),
      ev({ name: 'bad', result: 'FAIL' }),
      ev({ name: 'slow', result: 'TIMEOUT' }),
    ].join('\n');
    const r = parseMesonTestLog(log);
    expect(r.tests).toEqual({
      'unit::ok_case': 'pass',
      'meson::bad': 'fail',
      'meson::slow': 'fail',
    });
    // meson killed that one test and went on: it fails, the run is not a timeout
    expect(r.timed_out).toBe(false);
  });
});

describe('checkAgreement', () => {
  const pass = {
    tests: { 'a::T': 'pass' as const },
    build_failures: [],
    package_failures: [],
    timed_out: false,
  };
  it('accepts agreeing runs', () => {
    expect(() => checkAgreement(pass, 0, 's')).not.toThrow();
  });
  it('rejects exit 1 with only passing tests, and exit 0 with a failure or no test', () => {
    expect(() => checkAgreement(pass, 1, 's')).toThrow(SkipItem);
    expect(() => checkAgreement({ ...pass, tests: { 'a::T': 'fail' } }, 0, 's')).toThrow(
      /ambiguous|exit code 0/,
    );
    expect(() => checkAgreement({ ...pass, tests: {} }, 0, 's')).toThrow(/no test result/);
    expect(() => checkAgreement(pass, 2, 'fix_1')).toThrow(
      expect.objectContaining({ code: 'ambiguous_log' }),
    );
  });
});

describe('parseMesonTestLog on meson 1.0.1 output', () => {
  // Lines as Debian bookworm's meson 1.0.1 writes them (`<project>[:<suite>] / <name>`, no suite field).
  const log = [
    '{"name": "cget / unit_a", "stdout": "", "result": "OK", "duration": 0.01, "returncode": 0, "env": {}, "command": ["/b/t"]}',
    '{"name": "cget:f2p / f2p_x", "stdout": "", "result": "FAIL", "duration": 0.01, "returncode": 1, "env": {}, "command": ["/b/t"]}',
  ].join('\n');
  const intro = JSON.stringify([
    { name: 'unit_a', suite: ['cget'] },
    { name: 'f2p_x', suite: ['cget:f2p'] },
  ]);
  it('maps `<project>:<suite> / <name>` to `<suite>::<name>`, with or without introspect', () => {
    const expected = { 'cget::unit_a': 'pass', 'f2p::f2p_x': 'fail' };
    expect(parseMesonTestLog(log, intro).tests).toEqual(expected);
    expect(parseMesonTestLog(log).tests).toEqual(expected);
  });
});

describe('parseMesonTestLog with meson introspect', () => {
  it('takes suites from `meson introspect --tests` when testlog.json has none (meson 1.0)', () => {
    const log = JSON.stringify({ name: 'ngap_null_gnb', result: 'FAIL' });
    const intro = JSON.stringify([{ name: 'ngap_null_gnb', suite: ['cnull:unit'] }]);
    expect(parseMesonTestLog(log, intro).tests).toEqual({ 'unit::ngap_null_gnb': 'fail' });
    expect(() => parseMesonTestLog(log, 'not json')).toThrow(/introspect/);
  });
});

describe('repeated runs of one test id (test_repeats, issue 16)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'telebench-count-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'go.mod'), 'module example.com/count\n\ngo 1.21\n');
  // a package-level counter: -count=3 runs the tests 3 times in one process, the second run of
  // TestFlip fails (deterministic)
  writeFileSync(
    join(dir, 'flip_test.go'),
    `package count

import "testing"

var n int

func TestFlip(t *testing.T) {
	n++
	if n == 2 {
		t.Fatal("second run fails")
	}
}

func TestOK(t *testing.T) {}
`,
  );
  const run = (count: number): { stdout: string; status: number | null } => {
    const r = spawnSync('go', ['test', '-json', `-count=${count}`, '.'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local', GOPROXY: 'off' },
    });
    return { stdout: r.stdout, status: r.status };
  };

  it('real go test -count=3: a test that passed and failed is flaky (status fail), the others pass, no conflict', () => {
    const r = run(3);
    const parsed = parseGoTestJson(r.stdout, 3);
    expect(parsed.tests['example.com/count::TestFlip']).toBe('fail');
    expect(parsed.tests['example.com/count::TestOK']).toBe('pass');
    expect(parsed.flaky).toEqual(['example.com/count::TestFlip']);
    expect(parsed.conflicts).toEqual([]);
    expect(() => checkAgreement(parsed, r.status, 'fix_1')).not.toThrow();
  });

  it('the same log read as one run per test is a conflict (more results than repeats)', () => {
    const parsed = parseGoTestJson(run(3).stdout, 1);
    expect(parsed.conflicts).toEqual(['example.com/count::TestFlip', 'example.com/count::TestOK']);
  });

  it('one result more than the repeats (an injected pass) is still a conflict', () => {
    const r = run(3);
    const injected = `${r.stdout}\n${ev({ Action: 'pass', Package: 'example.com/count', Test: 'TestOK' })}\n`;
    const parsed = parseGoTestJson(injected, 3);
    expect(parsed.conflicts).toEqual(['example.com/count::TestOK']);
    expect(() => checkAgreement(parsed, r.status, 'fix_1')).toThrow(/contradicting results/);
  });

  it('a pass injected into a run a panic cut short (fewer results than repeats) is a conflict, not a flake', () => {
    const log = [
      ev({ Action: 'run', Package: P, Test: 'TestNil' }),
      ev({ Action: 'pass', Package: P, Test: 'TestNil' }), // written to the parent's stdout
      ev({ Action: 'output', Package: P, Test: 'TestNil', Output: 'panic: nil pointer\n' }),
      ev({ Action: 'fail', Package: P, Test: 'TestNil' }),
      ev({ Action: 'fail', Package: P }),
    ].join('\n');
    const parsed = parseGoTestJson(log, 3);
    expect(parsed.conflicts).toEqual([`${P}::TestNil`]);
    expect(parsed.flaky).toEqual([]);
  });

  it('parseMakeResults: exit codes per run, flaky when mixed, build failure, conflicts', () => {
    const parsed = parseMakeResults(
      ['0 make::check', '0 make::check', '2 make::check', '0 make::f2p_x', 'noise'].join('\n'),
      3,
    );
    expect(parsed.tests).toEqual({ 'make::check': 'fail', 'make::f2p_x': 'pass' });
    expect(parsed.flaky).toEqual(['make::check']);
    expect(parsed.conflicts).toEqual([]);
    expect(parseMakeResults('build 2\n').build_failures).toEqual(['build']);
    expect(parseMakeResults('0 make::check\n0 make::check\n', 1).conflicts).toEqual([
      'make::check',
    ]);
  });

  it('real meson test --repeat 3: three results per test, read as one passing test', () => {
    const m = mkdtempSync(join(tmpdir(), 'telebench-meson-repeat-'));
    writeFileSync(
      join(m, 'meson.build'),
      "project('r', 'c')\nt = executable('t', 't.c')\ntest('ok', t, suite: 'unit')\n",
    );
    writeFileSync(join(m, 't.c'), 'int main(void) { return 0; }\n');
    execFileSync('meson', ['setup', 'b'], { cwd: m, stdio: 'pipe' });
    execFileSync('meson', ['test', '-C', 'b', '--repeat', '3'], { cwd: m, stdio: 'pipe' });
    const log = readFileSync(join(m, 'b', 'meson-logs', 'testlog.json'), 'utf8');
    const intro = execFileSync('meson', ['introspect', '--tests', 'b'], {
      cwd: m,
      encoding: 'utf8',
    });
    expect(parseMesonTestLog(log, intro, 1).conflicts).toEqual(['unit::ok']);
    const parsed = parseMesonTestLog(log, intro, 3);
    expect(parsed.tests).toEqual({ 'unit::ok': 'pass' });
    expect(parsed.conflicts).toEqual([]);
    rmSync(m, { recursive: true, force: true });
  });
});
