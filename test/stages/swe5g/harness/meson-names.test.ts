/**
 * meson test names (issue 22): `open5gs:unit / ngap encode / decode` in a real testlog.json is the
 * test `ngap encode / decode` of suite `unit` (meson's `get_pretty_suite` in mesonbuild/mtest.py:
 * `<project>:<suites> / <name>` before meson 1.10, `<suites> - <project>:<name>` since), so its id
 * is `unit::ngap encode / decode`; a test with more suites takes the first; an excluded suite's
 * results are dropped, never counted failing.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mesonTestName, parseMesonTestLog } from '../../../../stages/swe5g/harness/parsers.js';
import { parseRuns } from '../../../../stages/swe5g/harness/parse.js';
import { testSpec } from '../../../../stages/swe5g/harness/spec.js';

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

describe('meson test names', () => {
  it('splits the name at the FIRST " / " after a prefix without spaces (meson < 1.10)', () => {
    expect(mesonTestName('open5gs:unit / ngap encode / decode')).toEqual({
      name: 'ngap encode / decode',
      suites: ['open5gs:unit'],
    });
    expect(mesonTestName('open5gs:unit+crypt / crypt')).toEqual({
      name: 'crypt',
      suites: ['open5gs:unit', 'open5gs:crypt'],
    });
    expect(mesonTestName('open5gs / lonely')).toEqual({ name: 'lonely', suites: ['open5gs'] });
  });

  it('reads the meson 1.10 form `<suites> - <project>:<name>`', () => {
    expect(mesonTestName('unit - open5gs:ngap encode / decode')).toEqual({
      name: 'ngap encode / decode',
      suites: ['open5gs:unit'],
    });
  });

  it('a bare name that is one of the build tests (introspect) is not split', () => {
    const known = new Map([['ngap encode / decode', ['open5gs:unit']]]);
    expect(mesonTestName('ngap encode / decode', known)).toEqual({
      name: 'ngap encode / decode',
      suites: [],
    });
  });

  it('a real meson run: ids are `<first suite>::<name>`; excluded suites are dropped', () => {
    const m = mkdtempSync(join(tmpdir(), 'telebench-meson-names-'));
    roots.push(m);
    writeFileSync(
      join(m, 'meson.build'),
      [
        "project('open5gs', 'c')",
        "t = executable('t', 't.c')",
        "test('ngap encode / decode', t, suite: 'unit')",
        "test('crypt', t, suite: ['unit', 'crypt'])",
        "test('sbi', t, args: ['fail'], suite: 'app')",
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(m, 't.c'),
      '#include <string.h>\nint main(int c, char **v) { return c > 1 && !strcmp(v[1], "fail"); }\n',
    );
    execFileSync('meson', ['setup', 'b'], { cwd: m, stdio: 'pipe' });
    const run = spawnSync('meson', ['test', '-C', 'b'], { cwd: m, encoding: 'utf8' });
    expect(run.status).toBe(1); // `sbi` fails
    const log = readFileSync(join(m, 'b', 'meson-logs', 'testlog.json'), 'utf8');
    expect(log).toContain('"name": "open5gs:unit / ngap encode / decode"');
    const intro = execFileSync('meson', ['introspect', '--tests', 'b'], {
      cwd: m,
      encoding: 'utf8',
    });
    const expected = {
      'unit::ngap encode / decode': 'pass',
      'unit::crypt': 'pass',
      'app::sbi': 'fail',
    };
    expect(parseMesonTestLog(log, intro).tests).toEqual(expected);
    expect(parseMesonTestLog(log).tests).toEqual(expected);

    // suite `app` excluded (it needs a service): listed in the spec, its failure not counted
    const spec = testSpec({
      recipe: 'c-meson',
      dirs: 'all',
      moduleDir: '',
      settings: { limits: { timeout_s: 60, memory_mib: 512, cpus: 1, pids: 64 } },
      selection: { exclude: [{ suite: 'app', reason: 'needs MongoDB' }] },
    });
    expect(spec.command).toContain("--no-suite 'app'");
    expect(spec.excluded).toEqual([{ suite: 'app', reason: 'needs MongoDB' }]);
    const stored = {
      step: 'parent_p2p',
      executor: 'local',
      exitCode: 0,
      timedOut: false,
      durationMs: 1,
      command: spec.command,
      stdout: '',
      stderr: '',
      collected: { [spec.collect[0]!]: log, [spec.collect[1]!]: intro },
    };
    const { parsed } = parseRuns(spec, [stored]);
    expect(parsed.tests).toEqual({ 'unit::ngap encode / decode': 'pass', 'unit::crypt': 'pass' });
  });
});
