/**
 * The Python environment commit (python-env-commit.ts) on real git repositories built here, dated
 * commit by commit: a Magma-like monorepo with two Python folders (`lte/gateway/python`,
 * `orc8r/gateway/python`, each with its `setup.py`) and a single-project repository without any
 * Python evidence. The instances after one requirements change share its commit; another change,
 * one brought in by a side branch (the merge), or an interpreter that would be chosen otherwise at
 * the base (a `.python-version`, a Dockerfile, Debian stable's Python of another date, a
 * `python_requires`) give other commits; another folder's requirements move nothing. For every
 * shared commit the env layer's reading (python-era.ts `pythonEraOf`, python-env.ts
 * `pythonRequirements`) gives the same interpreter, pins date and requirements at both commits.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensureMirror } from '../../../../pipeline/providers/git/repo.js';
import {
  mirrorPath,
  resolveCandidate,
  type ResolveEntry,
} from '../../../../stages/swe5g/resolve/resolve.js';
import { pythonEnvironmentCommit } from '../../../../stages/swe5g/resolve/python-env-commit.js';
import { pythonEraOf } from '../../../../stages/swe5g/build/python-era.js';
import { pythonRequirements } from '../../../../stages/swe5g/build/python-env.js';
import { environmentsDefaults } from '../../../../stages/swe5g/environments-config.js';
import { pythonEnvironmentSchema } from '../../../../stages/swe5g/registry.js';
import type { Candidate } from '../../../../stages/swe5g/types.js';
import { git, gitAt } from '../../../fixtures/git-repo.js';

const LTE = 'lte/gateway/python';
const ORC = 'orc8r/gateway/python';
const lteEnv = { requirements: [`${LTE}/setup.py`] };
const orcEnv = { requirements: [`${ORC}/setup.py`] };

const setupPy = (name: string, reqs: string[], extra = ''): string =>
  `from setuptools import setup\n\nsetup(\n    name='${name}',${extra}\n    install_requires=[\n${reqs.map((r) => `        '${r}',\n`).join('')}    ],\n)\n`;
const ciYml = (py: string): string =>
  `name: ${LTE}\non: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/setup-python@v4\n        with:\n          python-version: '${py}'\n      - run: make -C ${LTE} test\n`;

let root: string;
/** Commit ids by name (see beforeAll). */
const c: Record<string, string> = {};
let magma: string;
let app: string;

/** Writes (or with null removes) `files` and commits them at `date` in `dir`. */
function commitAt(
  dir: string,
  date: string,
  files: Record<string, string | null>,
  message: string,
): string {
  for (const [p, text] of Object.entries(files)) {
    if (text === null) rmSync(join(dir, p));
    else {
      mkdirSync(dirname(join(dir, p)), { recursive: true });
      writeFileSync(join(dir, p), text);
    }
  }
  gitAt(date, dir, 'add', '-A');
  gitAt(date, dir, 'commit', '-q', '-m', message);
  return git(dir, 'rev-parse', 'HEAD');
}

/** A merged PR `pr` of a one-file fix on main's head (its base); main is at the merge after. */
function mergePr(dir: string, date: string, pr: number, file: string, text: string): string {
  git(dir, 'checkout', '-q', '-b', `pr${pr}`);
  commitAt(dir, date, { [file]: text }, `fix: pr ${pr}`);
  git(dir, 'checkout', '-q', 'main');
  gitAt(date, dir, 'merge', '-q', '--no-ff', '-m', `Merge pull request #${pr}`, `pr${pr}`);
  return git(dir, 'rev-parse', 'HEAD');
}

function candidate(pr: number, merge: string, folder: string): Candidate {
  const base = git(magmaSrc, 'rev-parse', `${merge}^1`);
  return {
    instance_id: `magma__magma-${pr}`,
    alias: `magma_pr${pr}`,
    repo: 'magma/magma',
    registry_id: `magma/magma:${folder}`,
    language: 'python',
    nf: 'AGW',
    license: 'BSD-3-Clause',
    pr_number: pr,
    merge_commit: merge,
    base_commit: base,
    pr_head: merge,
    issues: [],
    pr_title: 'fix',
    pr_body: '',
    changed_files: [],
    created_at: '2022-01-01T10:00:00Z',
    merged_at: '2022-01-01T10:00:00Z',
    problem_statement: '',
    hints_text: '',
    source: 'git',
    incomplete: true,
    links: [],
  };
}

let magmaSrc: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'telebench-pyenvcommit-'));
  // the monorepo: CI tests lte on 3.8 (orc8r's folder named by no CI file: all files count)
  magmaSrc = join(root, 'src', 'magma');
  git(root, 'init', '-q', '--initial-branch=main', magmaSrc);
  const ue = (v: number): string => `def attach(imsi):\n    return ${v}\n`;
  c.init = commitAt(
    magmaSrc,
    '2022-01-10T10:00:00Z',
    {
      [`${LTE}/setup.py`]: setupPy('lte', ['grpcio>=1.46', 'redis']),
      [`${LTE}/magma/ue.py`]: ue(0),
      [`${ORC}/setup.py`]: setupPy('orc8r', ['protobuf>=3.20']),
      [`${ORC}/magma/common.py`]: 'X = 1\n',
      '.github/workflows/lte.yml': ciYml('3.8'),
    },
    'initial import',
  );
  c.req1 = commitAt(
    magmaSrc,
    '2022-02-01T10:00:00Z',
    { [`${LTE}/setup.py`]: setupPy('lte', ['grpcio>=1.46', 'redis', 'jsonpickle']) },
    'lte: jsonpickle',
  );
  commitAt(magmaSrc, '2022-02-05T10:00:00Z', { [`${LTE}/magma/ue.py`]: ue(1) }, 'lte: ue 1');
  c.merge101 = mergePr(magmaSrc, '2022-02-06T10:00:00Z', 101, `${LTE}/magma/ue.py`, ue(2));
  c.orc = commitAt(
    magmaSrc,
    '2022-02-10T10:00:00Z',
    { [`${ORC}/setup.py`]: setupPy('orc8r', ['protobuf>=3.20', 'sentry-sdk']) },
    'orc8r: sentry',
  );
  c.merge102 = mergePr(magmaSrc, '2022-02-11T10:00:00Z', 102, `${LTE}/magma/ue.py`, ue(3));
  // a requirements change on a side branch, merged: the merge is the first-parent change
  git(magmaSrc, 'checkout', '-q', '-b', 'deps');
  c.side = commitAt(
    magmaSrc,
    '2022-02-15T10:00:00Z',
    { [`${LTE}/setup.py`]: setupPy('lte', ['grpcio>=1.46', 'redis', 'jsonpickle', 'aioh2']) },
    'lte: aioh2',
  );
  git(magmaSrc, 'checkout', '-q', 'main');
  commitAt(magmaSrc, '2022-02-16T10:00:00Z', { [`${ORC}/magma/common.py`]: 'X = 2\n' }, 'orc8r');
  gitAt('2022-02-20T10:00:00Z', magmaSrc, 'merge', '-q', '--no-ff', '-m', 'Merge deps', 'deps');
  c.mergeSide = git(magmaSrc, 'rev-parse', 'HEAD');
  c.merge103 = mergePr(magmaSrc, '2022-02-21T10:00:00Z', 103, `${LTE}/magma/ue.py`, ue(4));
  // lte now names its Python: 3.9, over CI's 3.8
  c.pv = commitAt(magmaSrc, '2022-03-01T10:00:00Z', { [`${LTE}/.python-version`]: '3.9\n' }, 'pv');
  c.merge104 = mergePr(magmaSrc, '2022-03-02T10:00:00Z', 104, `${LTE}/magma/ue.py`, ue(5));
  // orc8r gets a Dockerfile on 3.7, over CI's 3.8
  c.docker = commitAt(
    magmaSrc,
    '2022-03-10T10:00:00Z',
    { [`${ORC}/Dockerfile`]: 'FROM python:3.7-slim-buster\nCOPY . /app\n' },
    'orc8r: Dockerfile',
  );
  c.req2 = commitAt(
    magmaSrc,
    '2022-04-01T10:00:00Z',
    {
      [`${LTE}/setup.py`]: setupPy('lte', [
        'grpcio>=1.46',
        'redis',
        'jsonpickle',
        'aioh2',
        'prometheus-client',
      ]),
    },
    'lte: prometheus-client',
  );
  // the same interpreter said otherwise: 3.9.16 is 3.9, and CI (weaker) moves to 3.10
  c.samePy = commitAt(
    magmaSrc,
    '2022-04-05T10:00:00Z',
    { [`${LTE}/.python-version`]: '3.9.16\n', '.github/workflows/lte.yml': ciYml('3.10') },
    'pv 3.9.16, CI 3.10',
  );
  c.merge105 = mergePr(magmaSrc, '2022-04-06T10:00:00Z', 105, `${LTE}/magma/ue.py`, ue(6));
  magma = await ensureMirror(magmaSrc, mirrorPath(join(root, 'state'), 'magma/magma'), [
    c.merge105!,
  ]);

  // a project that names no Python: the era is Debian stable's at each commit's date
  // (buster's 3.7 until 2021-08-14, bullseye's 3.9 after)
  const appSrc = join(root, 'src', 'app');
  git(root, 'init', '-q', '--initial-branch=main', appSrc);
  const app1 = { 'setup.py': setupPy('app', ['requests']), 'app/core.py': 'V = 0\n' };
  c.appReq = commitAt(appSrc, '2021-07-01T10:00:00Z', app1, 'app');
  c.appSameEra = commitAt(appSrc, '2021-07-20T10:00:00Z', { 'app/core.py': 'V = 1\n' }, 'v1');
  c.appNextEra = commitAt(appSrc, '2021-09-01T10:00:00Z', { 'app/core.py': 'V = 2\n' }, 'v2');
  c.appReq2 = commitAt(
    appSrc,
    '2021-09-02T10:00:00Z',
    { 'setup.py': setupPy('app', ['requests', 'attrs']) },
    'attrs',
  );
  c.appRequires = commitAt(
    appSrc,
    '2021-09-03T10:00:00Z',
    { 'pyproject.toml': '[project]\nname = "app"\nrequires-python = ">=3.10"\n' },
    'requires-python',
  );
  c.appAfterReq2 = commitAt(appSrc, '2021-09-04T10:00:00Z', { 'app/core.py': 'V = 3\n' }, 'v3');
  app = await ensureMirror(appSrc, mirrorPath(join(root, 'state'), 'acme/app'), [c.appAfterReq2!]);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const base = (merge: string): string => git(magmaSrc, 'rev-parse', `${merge}^1`);

/**
 * Asserts that the env layer reads the same environment at `env` as at `baseCommit`: interpreter
 * (suite, Python, wanted), pins date and requirements text, with the default python_era settings.
 */
async function sameEnvironment(
  mirror: string,
  env: string,
  baseCommit: string,
  folder: string,
  py: { requirements: string[]; interpreter?: string },
): Promise<void> {
  const spec = pythonEnvironmentSchema.parse(py);
  const read = async (commit: string): Promise<unknown> => {
    const era = await pythonEraOf(mirror, commit, folder, spec, environmentsDefaults.python_era);
    const { suite, python, wanted } = era.interpreter!;
    const reqs = await pythonRequirements(mirror, commit, spec);
    return { suite, python, wanted, exclude_newer: era.exclude_newer, reqs: reqs.text };
  };
  expect(await read(env)).toEqual(await read(baseCommit));
}

describe('pythonEnvironmentCommit', () => {
  it('two bases after one requirements change share it; another change gives another commit', async () => {
    const b101 = base(c.merge101!);
    const b102 = base(c.merge102!);
    expect(await pythonEnvironmentCommit(magma, b101, LTE, lteEnv)).toBe(c.req1);
    // orc8r's requirements changed in between: not lte's, so the same commit
    expect(b102).not.toBe(b101);
    expect(await pythonEnvironmentCommit(magma, b102, LTE, lteEnv)).toBe(c.req1);
    await sameEnvironment(magma, c.req1!, b102, LTE, lteEnv);
    // the change commit itself is its own environment commit
    expect(await pythonEnvironmentCommit(magma, c.req1!, LTE, lteEnv)).toBe(c.req1);
    // after the side branch's change: the merge that brought it, not the side commit
    const b103 = base(c.merge103!);
    expect(await pythonEnvironmentCommit(magma, b103, LTE, lteEnv)).toBe(c.mergeSide);
    await sameEnvironment(magma, c.mergeSide!, b103, LTE, lteEnv);
    // orc8r's folder: its own change, whatever lte's did after it
    expect(await pythonEnvironmentCommit(magma, b103, ORC, orcEnv)).toBe(c.orc);
    await sameEnvironment(magma, c.orc!, b103, ORC, orcEnv);
  });

  it('the base when the interpreter evidence would choose otherwise there', async () => {
    // lte: a .python-version (3.9) after the requirements change (CI said 3.8 there)
    const b104 = base(c.merge104!);
    expect(await pythonEnvironmentCommit(magma, b104, LTE, lteEnv)).toBe(b104);
    // the registry's interpreter wins over the evidence: the change commit again
    const pinned = { ...lteEnv, interpreter: '3.9' };
    expect(await pythonEnvironmentCommit(magma, b104, LTE, pinned)).toBe(c.mergeSide);
    await sameEnvironment(magma, c.mergeSide!, b104, LTE, pinned);
    // orc8r: a Dockerfile FROM python:3.7 after its requirements change
    expect(await pythonEnvironmentCommit(magma, c.docker!, ORC, orcEnv)).toBe(c.docker);
    expect(await pythonEnvironmentCommit(magma, c.req2!, ORC, orcEnv)).toBe(c.req2);
  });

  it('the same interpreter written otherwise keeps the change commit', async () => {
    // .python-version 3.9 -> 3.9.16 and a CI file on 3.10 (weaker than .python-version)
    const b105 = base(c.merge105!);
    expect(b105).not.toBe(c.req2);
    expect(await pythonEnvironmentCommit(magma, b105, LTE, lteEnv)).toBe(c.req2);
    await sameEnvironment(magma, c.req2!, b105, LTE, lteEnv);
  });

  it('no evidence: Debian stable of both dates, and a python_requires, must agree', async () => {
    const py = { requirements: ['setup.py'] };
    // 2021-07-01 and 2021-07-20: both buster's 3.7
    expect(await pythonEnvironmentCommit(app, c.appSameEra!, '', py)).toBe(c.appReq);
    await sameEnvironment(app, c.appReq!, c.appSameEra!, '', py);
    // 2021-09-01: bullseye's 3.9
    expect(await pythonEnvironmentCommit(app, c.appNextEra!, '', py)).toBe(c.appNextEra);
    // requires-python added after the requirements change (2021-09-02, same era)
    expect(await pythonEnvironmentCommit(app, c.appRequires!, '', py)).toBe(c.appRequires);
    expect(await pythonEnvironmentCommit(app, c.appAfterReq2!, '', py)).toBe(c.appAfterReq2);
  });

  it('no requirement files named: the base', async () => {
    const b103 = base(c.merge103!);
    expect(await pythonEnvironmentCommit(magma, b103, LTE, { requirements: [] })).toBe(b103);
  });
});

describe('swe5g.resolve: a Python instance environment commit', () => {
  const entry = (folder: string, python?: { requirements: string[] }): ResolveEntry => ({
    path: folder,
    language: 'python',
    reads: [],
    ...(python ? { environment: { python } } : {}),
  });

  it('follows the entry requirement files; the base without environment.python or an entry', async () => {
    const r101 = await resolveCandidate(
      magma,
      candidate(101, c.merge101!, LTE),
      entry(LTE, lteEnv),
    );
    const r102 = await resolveCandidate(
      magma,
      candidate(102, c.merge102!, LTE),
      entry(LTE, lteEnv),
    );
    expect(r101.environment_setup_commit).toBe(c.req1);
    expect(r102.environment_setup_commit).toBe(c.req1);
    const r104 = await resolveCandidate(
      magma,
      candidate(104, c.merge104!, LTE),
      entry(LTE, lteEnv),
    );
    expect(r104.environment_setup_commit).toBe(base(c.merge104!));
    const bare = await resolveCandidate(magma, candidate(101, c.merge101!, LTE), entry(LTE));
    expect(bare.environment_setup_commit).toBe(base(c.merge101!));
    const none = await resolveCandidate(magma, candidate(101, c.merge101!, LTE));
    expect(none.environment_setup_commit).toBe(base(c.merge101!));
  });
});
