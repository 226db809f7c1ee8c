/**
 * The env layer's era install script (`py_era_install.py`, issue 31), on the host: how it reads
 * uv's failures (real outputs captured on Debian bullseye's Python 3.9 for Magma's 2019-2020
 * requirements, `test/fixtures/uv-output/`, and one of the real-uv test's index on 3.11,
 * py-era-install-real-uv.test.ts), and the decisions of its rounds against a fake uv
 * that answers from those outputs: which pin it lifts, to which release, what it records, and
 * when it gives up naming the package.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PY_ERA_SCRIPT_FILE } from '../../../../pipeline/providers/docker/python-recipe.js';
import { readLiftsReport } from '../../../../stages/swe5g/build/python-lifts.js';

const SAMPLES = join(dirname(PY_ERA_SCRIPT_FILE), '../../../test/fixtures/uv-output');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'telebench-py-era-install-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `expr` (Python, over the script's module `m` and `sample(name)`) and parses its JSON. */
function py(expr: string): unknown {
  const code = [
    'import json, sys',
    `sys.path.insert(0, ${JSON.stringify(dirname(PY_ERA_SCRIPT_FILE))})`,
    'import py_era_install as m',
    `sample = lambda n: open(${JSON.stringify(SAMPLES)} + '/' + n).read()`,
    `print(json.dumps(${expr}))`,
  ].join('\n');
  const r = spawnSync('python3', ['-c', code], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
}

describe("reading uv's failures", () => {
  it('names the package, the version the date gave and why', () => {
    const read = (n: string): unknown =>
      py(
        `[m.failing_package(sample('${n}')), m.error_line(sample('${n}')), m.failing_build_dependency(sample('${n}'))]`,
      );
    expect(read('pystemd-ast-str.txt')).toEqual([
      ['pystemd', '0.5.0', 'build'],
      "AttributeError: module '_ast' has no attribute 'Str'",
      null,
    ]);
    // a C extension: the compiler's error, not distutils' "command gcc failed"
    expect(read('greenlet-gcc.txt')).toEqual([
      ['greenlet', '0.4.15', 'build'],
      expect.stringMatching(/^greenlet\.c:1046:4: error: .*_Py_DEC_REFTOTAL.* undeclared/),
      null,
    ]);
    expect(read('cffi-ffi-h.txt')).toEqual([
      ['cffi', '1.13.2', 'build'],
      'c/_cffi_backend.c:15:10: fatal error: ffi.h: No such file or directory',
      null,
    ]);
    // a setuptools of mid-2022 on runs setup.py as `<string>` (its last frame): the package's own
    // failure, not setuptools' (captured with the real uv 0.13.9, setuptools 75.3.0, on 3.11)
    expect(read('setup-py-exec-string.txt')).toEqual([
      ['eraflaky', '1.0', 'build'],
      "AttributeError: module '_ast' has no attribute 'Str'",
      null,
    ]);
    // the 2019 setuptools of the build environment does not import on 3.9: a build dependency's
    expect(read('ryu-setuptools.txt')).toEqual([
      ['ryu', '4.13', 'build'],
      "AttributeError: 'HTMLParser' object has no attribute 'unescape'",
      'setuptools',
    ]);
    expect(read('tensorflow-no-wheel.txt')).toEqual([
      ['tensorflow', '1.13.1', 'no_wheel'],
      expect.stringMatching(
        /^Because tensorflow==1\.13\.1 has no wheels with a matching Python ABI/,
      ),
      null,
    ]);
    // a conflict of the requirements themselves names no pin to lift
    const conflict = py(`m.failing_package(sample('resolution-conflict.txt'))`);
    expect(conflict).toBeNull();
    expect(py(`m.error_line('')`)).toBe('');
  });
});

/** Runs the script against the fake uv with `scenario`; returns its exit, stderr, report, calls. */
function run(name: string, scenario: Record<string, unknown>, maxLifts = 10) {
  const log = join(dir, `${name}.calls`);
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ ...scenario, log }));
  const req = join(dir, `${name}.txt`);
  writeFileSync(req, `${(scenario['order'] as string[]).map((n) => `${n}>=0`).join('\n')}\n`);
  const uv = join(dir, 'uv');
  writeFileSync(uv, `#!/bin/sh\nexec python3 ${join(SAMPLES, 'fake_uv.py')} "$@"\n`, {
    mode: 0o755,
  });
  const report = join(dir, `${name}.report.json`);
  const r = spawnSync(
    'python3',
    [
      PY_ERA_SCRIPT_FILE,
      '--uv',
      uv,
      '--requirements',
      req,
      '--exclude-newer',
      '2019-03-26T20:24:26Z',
      '--exempt',
      'grpcio',
      '--report',
      report,
      '--max-lifts',
      String(maxLifts),
    ],
    { encoding: 'utf8', env: { ...process.env, FAKE_UV: file } },
  );
  const calls = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map(
      (l) =>
        JSON.parse(l) as {
          sub: string;
          args: string[];
          overrides: Record<string, string>;
          build_constraints: Record<string, string>;
        },
    );
  return {
    status: r.status,
    last: r.stderr.trim().split('\n').pop(),
    lifts: existsSync(report) ? readLiftsReport(readFileSync(report, 'utf8')) : undefined,
    calls,
  };
}

const pystemd = {
  date: '0.5.0',
  releases: ['0.5.0', '0.6.0', '0.7.0', '0.8.0'],
  fail: { '0.5.0': 'pystemd-ast-str.txt', '0.6.0': 'pystemd-ast-str.txt' },
};

describe('the install rounds', () => {
  it('lifts each pin to its oldest later release that installs, a build dependency too', () => {
    const r = run('lifts', {
      order: ['pystemd', 'greenlet', 'ryu', 'six'],
      packages: {
        pystemd,
        greenlet: {
          date: '0.4.15',
          releases: ['0.4.15', '0.4.16', '0.4.17'],
          fail: { '0.4.15': 'greenlet-gcc.txt' },
        },
        ryu: {
          date: '4.13',
          releases: ['4.13', '4.14'],
          needs: { setuptools: '41.1.0' },
          dep_fail: 'ryu-setuptools.txt',
        },
        six: { date: '1.12.0', releases: ['1.12.0'] },
      },
      deps: {
        setuptools: {
          date: '40.8.0',
          releases: ['40.8.0', '40.9.0', '41.0.0', '41.1.0', '42.0.0'],
        },
      },
    });
    expect(r.status).toBe(0);
    expect(r.lifts).toEqual([
      {
        package: 'pystemd',
        date_version: '0.5.0',
        version: '0.7.0',
        tried: ['0.6.0'],
        kind: 'build',
        error: "AttributeError: module '_ast' has no attribute 'Str'",
      },
      {
        package: 'greenlet',
        date_version: '0.4.15',
        version: '0.4.16',
        tried: [],
        kind: 'build',
        error: expect.stringMatching(/^greenlet\.c:1046:4: error:/),
      },
      {
        package: 'setuptools',
        date_version: '40.8.0',
        version: '41.1.0',
        tried: ['40.9.0', '41.0.0'],
        kind: 'build_dependency',
        for: ['ryu==4.13'],
        error: "AttributeError: 'HTMLParser' object has no attribute 'unescape'",
      },
    ]);
    // the last full install: the packages overridden, the build dependency constrained, the
    // date lifted for those three (and the registry's exempt pin) only
    const last = r.calls.filter((c) => c.sub === 'install' && c.args.includes('-r')).pop()!;
    expect(last.overrides).toEqual({ pystemd: '0.7.0', greenlet: '0.4.16' });
    expect(last.build_constraints).toEqual({ setuptools: '41.1.0' });
    const lifted = last.args.filter((a, i) => last.args[i - 1] === '--exclude-newer-package');
    expect(lifted).toEqual(['greenlet=false', 'grpcio=false', 'pystemd=false', 'setuptools=false']);
    expect(last.args).toContain('2019-03-26T20:24:26Z');
    // four full installs: one a lift, and the last
    expect(r.calls.filter((c) => c.sub === 'install' && c.args.includes('-r'))).toHaveLength(4);
  });

  it('a package no later release of which installs fails the build naming it', () => {
    const r = run('none', {
      order: ['pystemd'],
      packages: {
        pystemd: {
          ...pystemd,
          fail: {
            '0.5.0': 'pystemd-ast-str.txt',
            '0.6.0': 'pystemd-ast-str.txt',
            '0.7.0': 'pystemd-ast-str.txt',
            '0.8.0': 'pystemd-ast-str.txt',
          },
        },
      },
      deps: {},
    });
    expect(r.status).toBe(1);
    expect(r.lifts).toBeUndefined();
    expect(r.last).toMatch(
      /^telebench: python package pystemd: 0\.5\.0 \(the era's\) does not install on Python 3\.\d+\.\d+, nor any later release \(tried 0\.6\.0, 0\.7\.0, 0\.8\.0\): AttributeError: module '_ast' has no attribute 'Str'$/,
    );
  });

  it('stops at max-lifts, and on a failure that names no package', () => {
    const two = run(
      'max',
      {
        order: ['pystemd', 'greenlet'],
        packages: {
          pystemd,
          greenlet: {
            date: '0.4.15',
            releases: ['0.4.15', '0.4.16'],
            fail: { '0.4.15': 'greenlet-gcc.txt' },
          },
        },
        deps: {},
      },
      1,
    );
    expect(two.status).toBe(1);
    expect(two.last).toMatch(
      /^telebench: python package greenlet: 0\.4\.15 does not install \(.*\), and 1 pins were lifted already, the most allowed \(pystemd 0\.5\.0 -> 0\.7\.0\)$/,
    );
    const conflict = run('conflict', {
      order: ['six'],
      packages: { six: { date: '1.12.0', releases: ['1.12.0'] } },
      deps: {},
      conflict: 'resolution-conflict.txt',
    });
    expect(conflict.status).toBe(1);
    expect(conflict.last).toMatch(
      /^telebench: the era's requirements do not install, and no package is to blame: /,
    );
  });
});
