/**
 * The interpreter and pins of a Python environment commit's era (python-era.ts, issue 31): the
 * evidence readers on the forms projects write, the choice of a Debian suite from it (and from
 * the date when a commit names no Python), and the whole reading over a real git repository
 * (the py-era fixture and variants of it). No Docker: the real-Docker test is python-era-docker.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  chooseInterpreter,
  ciPythonVersions,
  debianStablePython,
  dockerfilePython,
  minorOf,
  pythonEraOf,
  requiresPythonOf,
  satisfiesRequires,
  type PythonEvidence,
} from '../../../../stages/swe5g/build/python-era.js';
import { pythonEnvLines } from '../../../../pipeline/providers/docker/python-recipe.js';
import { pythonEnvSpec } from '../../../../stages/swe5g/build/python-env.js';
import { environmentsDefaults } from '../../../../stages/swe5g/environments-config.js';
import { PY_ERA_DATE, PY_ERA_ENTRY, pyEraFixture } from '../../../fixtures/repos/py-era.js';

const SUITES = { bullseye: '3.9', bookworm: '3.11' };
const era = environmentsDefaults.python_era;

describe('evidence readers', () => {
  it('reads CI python-version as a scalar, a flow list and a matrix item, quoted or not', () => {
    expect(ciPythonVersions("        with:\n          python-version: '3.8.10'\n")).toEqual([
      '3.8',
    ]);
    expect(ciPythonVersions('      python-version: [3.7, "3.8", 3.10]\n')).toEqual([
      '3.7',
      '3.8',
      '3.10',
    ]);
    expect(ciPythonVersions('language: python\npython:\n  - "3.6"\n')).toEqual([]);
    expect(ciPythonVersions('python: 3.6  # travis\n')).toEqual(['3.6']);
    // CircleCI: an image, and a command parameter's default (Magma 2021)
    expect(ciPythonVersions('    docker:\n      - image: cimg/python:3.7.4\n')).toEqual(['3.7']);
    const circle =
      '      set_version:\n        parameters:\n          python_version:\n            description: Valid Python version\n            type: string\n            default: "3.7.0"\n';
    expect(ciPythonVersions(circle)).toEqual(['3.7']);
    // an expression or another tool's version is no Python
    expect(ciPythonVersions('python-version: ${{ env.PY }}\ngo-version: 1.18\n')).toEqual([]);
  });

  it('reads a Dockerfile FROM python:, a registry-prefixed one, and an apt python3.X', () => {
    expect(dockerfilePython('FROM python:3.8-slim-buster AS build\n')?.version).toBe('3.8');
    expect(dockerfilePython('FROM docker.io/library/python:3.7.12\n')?.version).toBe('3.7');
    expect(
      dockerfilePython('FROM ubuntu:20.04\nRUN apt-get install -y python3.8-dev git\n')?.version,
    ).toBe('3.8');
    // a python3.8 mentioned without an install is not what the image runs
    expect(dockerfilePython('FROM ubuntu:20.04\n# see python3.8 notes\n')).toBeUndefined();
    expect(dockerfilePython('FROM golang:1.18\n')).toBeUndefined();
  });

  it('reads python_requires of setup.py, setup.cfg and requires-python of pyproject.toml', () => {
    expect(requiresPythonOf("setup(name='x', python_requires='>=3.6, <3.10')")).toBe(
      '>=3.6, <3.10',
    );
    expect(requiresPythonOf('[options]\npython_requires = >=3.7\n')).toBe('>=3.7');
    expect(requiresPythonOf('[project]\nrequires-python = "~=3.8"\n')).toBe('~=3.8');
    expect(requiresPythonOf("setup(name='x')")).toBeUndefined();
  });

  it('compares minors against specifier sets at major.minor', () => {
    expect(satisfiesRequires('3.9', '>=3.6, <3.10')).toBe(true);
    expect(satisfiesRequires('3.11', '>=3.6, <3.10')).toBe(false);
    expect(satisfiesRequires('3.9', '<3.9.5')).toBe(true);
    expect(satisfiesRequires('3.9', '==3.8.*')).toBe(false);
    expect(satisfiesRequires('3.11', '~=3.8')).toBe(true);
    expect(satisfiesRequires('3.9', '!=3.9.*')).toBe(false);
    expect(satisfiesRequires('3.9', '!=3.9.1')).toBe(true); // a patch exclusion, not the minor
    expect(satisfiesRequires('3.9', '!=3.9')).toBe(false);
    expect(minorOf('3.10.12')).toBe('3.10');
    expect(minorOf('2.7')).toBeUndefined();
  });

  it("falls back to Debian stable's Python at the date", () => {
    expect(debianStablePython('2019-01-01T00:00:00Z')).toBe('3.5');
    expect(debianStablePython('2021-06-15T10:00:00Z')).toBe('3.7');
    expect(debianStablePython('2022-07-01T00:00:00Z')).toBe('3.9');
    expect(debianStablePython('2024-01-01T00:00:00Z')).toBe('3.11');
  });
});

describe('chooseInterpreter', () => {
  const ev = (e: Partial<PythonEvidence> & Pick<PythonEvidence, 'source'>): PythonEvidence => ({
    said: 'x',
    ...e,
  });

  it('takes the oldest suite at or above the wanted Python, else the newest', () => {
    const c = chooseInterpreter(SUITES, [ev({ source: 'ci', version: '3.8' })], PY_ERA_DATE);
    expect([c.suite, c.python, c.wanted]).toEqual(['bullseye', '3.9', '3.8']);
    expect(chooseInterpreter(SUITES, [ev({ source: 'ci', version: '3.10' })], '').suite).toBe(
      'bookworm',
    );
    expect(chooseInterpreter(SUITES, [ev({ source: 'ci', version: '3.13' })], '').suite).toBe(
      'bookworm',
    );
  });

  it('ranks the registry over .python-version over a Dockerfile over CI', () => {
    const all = [
      ev({ source: 'ci', version: '3.11' }),
      ev({ source: 'dockerfile', version: '3.10' }),
      ev({ source: 'python-version', version: '3.8' }),
    ];
    expect(chooseInterpreter(SUITES, all, '').evidence[0]!.source).toBe('python-version');
    const reg = chooseInterpreter(
      SUITES,
      [ev({ source: 'registry', version: '3.11' }), ...all],
      '',
    );
    expect([reg.suite, reg.evidence[0]!.source]).toEqual(['bookworm', 'registry']);
  });

  it('narrows by python_requires, but not below what remains, and not over the registry', () => {
    const req = ev({ source: 'python_requires', requires: '>=3.6,<3.10' });
    const c = chooseInterpreter(SUITES, [ev({ source: 'ci', version: '3.10' }), req], '');
    expect(c.suite).toBe('bullseye');
    expect(c.evidence.map((e) => e.source)).toEqual(['ci', 'python_requires']);
    const none = ev({ source: 'python_requires', requires: '<3.6' });
    expect(chooseInterpreter(SUITES, [ev({ source: 'ci', version: '3.10' }), none], '').suite).toBe(
      'bookworm',
    );
    const reg = chooseInterpreter(SUITES, [ev({ source: 'registry', version: '3.11' }), req], '');
    expect(reg.suite).toBe('bookworm');
  });

  it('uses the date when nothing names a Python, and rejects an empty suite table', () => {
    const c = chooseInterpreter(SUITES, [], '2020-03-01T00:00:00Z');
    expect([c.suite, c.wanted, c.evidence[0]!.source]).toEqual(['bullseye', '3.7', 'date']);
    expect(chooseInterpreter(SUITES, [], '2024-03-01T00:00:00Z').suite).toBe('bookworm');
    expect(() => chooseInterpreter({}, [], '')).toThrow(/python_era\.suites is empty/);
  });
});

describe('pythonEraOf over a real repository', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'telebench-pyera-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const py = PY_ERA_ENTRY.environment!.python!;

  it('reads the CI workflow and dates the pins by the setup.py commit', async () => {
    const fx = pyEraFixture(join(root, 'a'));
    const e = await pythonEraOf(fx.dir, fx.candidate.base_commit, '', py, era);
    expect(e.interpreter?.suite).toBe('bullseye');
    expect(e.interpreter?.evidence[0]).toEqual({
      source: 'ci',
      said: '.github/workflows/ci.yml: python-version 3.8 (1 of 1)',
      version: '3.8',
    });
    expect(e.exclude_newer).toBe(PY_ERA_DATE);
  });

  it('a .python-version wins over CI; the registry wins over both', async () => {
    const fx = pyEraFixture(join(root, 'b'), { '.python-version': '3.11.4\n' });
    const e = await pythonEraOf(fx.dir, fx.candidate.base_commit, 'eraapp', py, era);
    expect(e.interpreter?.suite).toBe('bookworm');
    expect(e.interpreter?.evidence[0]?.said).toBe('.python-version: 3.11.4');
    const r = await pythonEraOf(
      fx.dir,
      fx.candidate.base_commit,
      '',
      { ...py, interpreter: '3.9' },
      era,
    );
    expect(r.interpreter?.suite).toBe('bullseye');
    expect(r.interpreter?.evidence[0]?.source).toBe('registry');
  });

  it('without evidence falls back to the date; settings turn either half off', async () => {
    const fx = pyEraFixture(join(root, 'c'), { '.github/workflows/ci.yml': 'name: ci\n' });
    const e = await pythonEraOf(fx.dir, fx.candidate.base_commit, '', py, era);
    expect([e.interpreter?.suite, e.interpreter?.evidence[0]?.source]).toEqual([
      'bullseye',
      'date',
    ]);
    const off = await pythonEraOf(fx.dir, fx.candidate.base_commit, '', py, {
      ...era,
      interpreter: 'base',
      pins: 'latest',
    });
    expect(off).toEqual({});
  });
});

describe('env layer recipe with era pins', () => {
  it('installs uv apart and resolves with --exclude-newer, exempting override pins', () => {
    const spec = pythonEnvSpec(
      {
        requirements: ['setup.py'],
        overrides: [
          { name: 'grpcio', use: 'grpcio==1.49.1', reason: 'wheel' },
          { name: 'aioeventlet', reason: 'git URL' },
        ],
        roots: [],
      },
      '2022-07-01T00:00:00Z',
    );
    const lines = pythonEnvLines(spec, true, {}).join('\n');
    expect(lines).toContain("--target /opt/telebench/uv 'uv==0.13.9'");
    expect(lines).toContain("--exclude-newer '2022-07-01T00:00:00Z'");
    expect(lines).toContain("--exclude-newer-package 'grpcio=false'");
    expect(lines).not.toContain('aioeventlet');
    // without a date: pip, as before
    const plain = pythonEnvLines(
      pythonEnvSpec({ requirements: [], overrides: [], roots: [] }),
      true,
      {},
    );
    expect(plain.join('\n')).toContain(
      'python3 -m pip install --no-cache-dir -r /tmp/requirements.txt',
    );
    expect(plain.join('\n')).not.toContain('uv');
  });
});
