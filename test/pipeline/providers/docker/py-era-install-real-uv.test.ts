/**
 * The env layer's era install script (`py_era_install.py`, issue 31) with the real uv: the uv
 * the recipe pins (`python_era.uv`), installed from PyPI, against a local package index (PEP 691
 * JSON with PEP 700 upload times, served on loopback) of made-up packages that fail on this
 * Python the ways the era's pins failed on bullseye's 3.9 (`test/fixtures/py-era-index/`). The
 * script installs into a virtual environment of its own (`--python`), which the test then
 * imports from: the release that got installed, not only what the report says. No Docker.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PY_ERA_SCRIPT_FILE } from '../../../../pipeline/providers/docker/python-recipe.js';
import { environmentsSchema } from '../../../../stages/swe5g/environments-config.js';
import { readLiftsReport } from '../../../../stages/swe5g/build/python-lifts.js';

const MAKE_DISTS = join(
  dirname(PY_ERA_SCRIPT_FILE),
  '../../../test/fixtures/py-era-index/make_dists.py',
);
/** The uv the env recipe installs (`uv==0.13.9`). */
const UV_REQUIREMENT = environmentsSchema.parse({}).python_era.uv;
/** The era date: between each package's 1.0 and 1.1 uploads. */
const ERA = '2019-03-26T20:24:26Z';
/**
 * The setuptools every sdist build here gets (setup.py sdists, and the build backend below),
 * a current one from PyPI: dated before the era so that the date leaves it in.
 */
const SETUPTOOLS = 'setuptools==75.3.0';
const SETUPTOOLS_UPLOADED = '2018-01-01T00:00:00Z';

interface Dist {
  name: string;
  version: string;
  /** make_dists.py's kind */
  kind: string;
  uploaded: string;
}
const BEFORE = '2019-01-10T00:00:00Z';
const AFTER = '2019-06-10T00:00:00Z';
const LATER = '2019-09-10T00:00:00Z';
const DISTS: Dist[] = [
  // pystemd 0.5.0's failure: its setup.py reads _ast.Str, gone in 3.8; 1.1 and 1.2 build
  { name: 'eraflaky', version: '1.0', kind: 'setup_ast_str', uploaded: BEFORE },
  { name: 'eraflaky', version: '1.1', kind: 'setup', uploaded: AFTER },
  { name: 'eraflaky', version: '1.2', kind: 'setup', uploaded: LATER },
  // no release installs
  { name: 'eradead', version: '1.0', kind: 'setup_ast_str', uploaded: BEFORE },
  { name: 'eradead', version: '1.1', kind: 'setup_ast_str', uploaded: AFTER },
  // tensorflow 1.13.1's: no wheel for this Python, no sdist
  { name: 'erawheel', version: '1.0', kind: 'wheel_cp27', uploaded: BEFORE },
  { name: 'erawheel', version: '1.1', kind: 'wheel', uploaded: AFTER },
  // the 2019 setuptools' on 3.9: the build backend of erabuilt does not import at the date
  {
    name: 'erabackend',
    version: '1.0',
    kind: 'backend_html_unescape',
    uploaded: '2018-06-10T00:00:00Z',
  },
  { name: 'erabackend', version: '1.1', kind: 'backend', uploaded: AFTER },
  { name: 'erabuilt', version: '1.0', kind: 'setup_with_backend:erabackend', uploaded: BEFORE },
  // installs as it is
  { name: 'erasteady', version: '1.0', kind: 'wheel', uploaded: BEFORE },
];

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `cmd` without blocking the event loop (the index is served from this process). */
function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

let dir: string;
let server: Server;
let uv: string;
/** The environment of every uv run: the local index only, no other configuration. */
let uvEnv: NodeJS.ProcessEnv;
/**
 * Why the setup failed (PyPI unreachable, ...): each test throws it, so that they fail, not
 * skip as after a failed beforeAll.
 */
let setupError: unknown;

beforeAll(async () => {
  try {
    await setUp();
  } catch (err) {
    setupError = err;
  }
});

/** Installs the real uv, builds the index's distributions and serves them on loopback. */
async function setUp(): Promise<void> {
  dir = mkdtempSync(join(tmpdir(), 'telebench-py-era-real-uv-'));
  // the real uv, as the env recipe installs it (pip --target); PyPI is needed: no skip
  const pip = await run('python3', [
    '-m',
    'pip',
    'install',
    '--no-deps',
    '--retries',
    '1',
    '--target',
    join(dir, 'uv'),
    UV_REQUIREMENT,
  ]);
  if (pip.status !== 0)
    throw new Error(
      `pip could not install ${UV_REQUIREMENT} from PyPI (this test runs the real uv; is PyPI reachable?): ${pip.stderr.trim().split('\n').slice(-5).join(' | ')}`,
    );
  uv = join(dir, 'uv', 'bin', 'uv');
  const index = join(dir, 'index');
  const st = await run('python3', [
    '-m',
    'pip',
    'download',
    '--no-deps',
    '--only-binary',
    ':all:',
    '--retries',
    '1',
    '-d',
    index,
    SETUPTOOLS,
  ]);
  if (st.status !== 0)
    throw new Error(
      `pip could not download ${SETUPTOOLS} from PyPI (the build environment of the index's sdists): ${st.stderr.trim().split('\n').slice(-5).join(' | ')}`,
    );
  const made = await run('python3', [
    MAKE_DISTS,
    index,
    JSON.stringify(DISTS.map(({ name, version, kind }) => ({ name, version, kind }))),
  ]);
  if (made.status !== 0) throw new Error(`make_dists.py failed: ${made.stderr}`);
  // the index: project name -> files with their version and upload time
  const files = new Map<string, { filename: string; version: string; uploaded: string }[]>();
  const add = (name: string, filename: string, version: string, uploaded: string) =>
    files.set(name, [...(files.get(name) ?? []), { filename, version, uploaded }]);
  made.stdout
    .trim()
    .split('\n')
    .forEach((filename, i) => add(DISTS[i]!.name, filename, DISTS[i]!.version, DISTS[i]!.uploaded));
  const [, stVersion] = SETUPTOOLS.split('==') as [string, string];
  add('setuptools', `setuptools-${stVersion}-py3-none-any.whl`, stVersion, SETUPTOOLS_UPLOADED);
  server = createServer((req, res) => {
    const url = req.url ?? '';
    const project = /^\/simple\/([a-z0-9-]+)\/?$/.exec(url)?.[1];
    const file = /^\/files\/([^/]+)$/.exec(url)?.[1];
    if (project && files.has(project)) {
      const body = {
        meta: { 'api-version': '1.1' },
        name: project,
        versions: [...new Set(files.get(project)!.map((f) => f.version))],
        files: files.get(project)!.map((f) => ({
          filename: f.filename,
          url: `/files/${f.filename}`,
          hashes: {
            sha256: createHash('sha256')
              .update(readFileSync(join(index, f.filename)))
              .digest('hex'),
          },
          'upload-time': f.uploaded,
        })),
      };
      res.writeHead(200, { 'content-type': 'application/vnd.pypi.simple.v1+json' });
      res.end(JSON.stringify(body));
    } else if (file && existsSync(join(index, file))) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(readFileSync(join(index, file)));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  uvEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('UV_')));
  Object.assign(uvEnv, {
    UV_DEFAULT_INDEX: `http://127.0.0.1:${port}/simple`,
    UV_NO_CONFIG: '1',
    UV_PYTHON_DOWNLOADS: 'never',
  });
}

/** Throws the setup's failure, if any. */
function ready(): void {
  if (setupError) throw setupError;
}

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A new virtual environment (no pip) named `name`; returns its interpreter. */
async function venv(name: string): Promise<string> {
  ready();
  const at = join(dir, name, 'venv');
  mkdirSync(dirname(at), { recursive: true });
  const r = await run('python3', ['-m', 'venv', '--without-pip', at]);
  if (r.status !== 0) throw new Error(`python3 -m venv failed: ${r.stderr}`);
  return join(at, 'bin', 'python');
}

/** The `__version__` of `module` as `python` imports it; null when it does not import. */
async function imported(python: string, module: string): Promise<string | null> {
  const r = await run(python, ['-c', `import ${module}; print(${module}.__version__)`]);
  return r.status === 0 ? r.stdout.trim() : null;
}

/** Runs the script for `requirements` into a new environment `name`. */
async function install(name: string, requirements: string[], extra: string[] = []) {
  const python = await venv(name);
  const req = join(dir, name, 'requirements.txt');
  writeFileSync(req, `${requirements.join('\n')}\n`);
  const report = join(dir, name, 'python-lifts.json');
  const args = ['--uv', uv, '--requirements', req, '--exclude-newer', ERA, '--report', report];
  const r = await run(
    'python3',
    [PY_ERA_SCRIPT_FILE, ...args, '--python', python, ...extra],
    uvEnv,
  );
  const pyVersion = (await run(python, ['--version'])).stdout.trim();
  return {
    ...r,
    python,
    pyVersion,
    last: r.stderr.trim().split('\n').pop() ?? '',
    report: existsSync(report)
      ? (JSON.parse(readFileSync(report, 'utf8')) as { python: string })
      : undefined,
    lifts: existsSync(report) ? readLiftsReport(readFileSync(report, 'utf8')) : undefined,
  };
}

describe('py_era_install.py with the real uv', () => {
  it('the index gives 1.0 at the era date, and uv alone fails on it as on the era pins', async () => {
    // the control: what the script is for fails without it, for the reason it is to lift
    const python = await venv('control');
    const plain = await run(
      uv,
      [
        'pip',
        'install',
        '--system',
        '--break-system-packages',
        '--python',
        python,
        '--exclude-newer',
        ERA,
        'eraflaky',
      ],
      { ...uvEnv, UV_CACHE_DIR: join(dir, 'control', 'cache') },
    );
    expect(plain.status).not.toBe(0);
    expect(plain.stderr).toContain('Failed to build `eraflaky==1.0`');
    expect(plain.stderr).toContain("AttributeError: module '_ast' has no attribute 'Str'");
    expect(await imported(python, 'eraflaky')).toBeNull();
  });

  it('lifts each pin that does not install to its oldest later release that does', async () => {
    const r = await install('lifts', ['eraflaky', 'erawheel', 'erabuilt', 'erasteady']);
    expect(r.status, r.stderr).toBe(0);
    // the venv was installed into, not the interpreter that runs the script
    expect(r.stderr).toContain(`environment at: ${dirname(dirname(r.python))}`);
    expect(r.report?.python).toBe(r.pyVersion);
    expect(r.lifts).toEqual([
      {
        package: 'eraflaky',
        date_version: '1.0',
        version: '1.1',
        tried: [],
        kind: 'build',
        error: "AttributeError: module '_ast' has no attribute 'Str'",
      },
      {
        package: 'erawheel',
        date_version: '1.0',
        version: '1.1',
        tried: [],
        kind: 'no_wheel',
        error: expect.stringMatching(
          /^Because erawheel==1\.0 has no wheels with a matching Python implementation tag/,
        ),
      },
      {
        package: 'erabackend',
        date_version: '1.0',
        version: '1.1',
        tried: [],
        kind: 'build_dependency',
        for: ['erabuilt==1.0'],
        error: "AttributeError: 'HTMLParser' object has no attribute 'unescape'",
      },
    ]);
    // what the environment holds: the lifted releases (the oldest that builds, not the newest),
    // the era's own pins of the rest (erabuilt built with the lifted backend)
    expect(await imported(r.python, 'eraflaky')).toBe('1.1');
    expect(await imported(r.python, 'erawheel')).toBe('1.1');
    expect(await imported(r.python, 'erabuilt')).toBe('1.0');
    expect(await imported(r.python, 'erasteady')).toBe('1.0');
    // eraflaky's setup.py ran as `<string>` under this setuptools: its own failure, so no
    // later setuptools was looked for (uv pip compile resolves build dependencies only)
    const compiles = r.stderr.split('\n').filter((l) => / pip compile /.test(l));
    expect(compiles).toHaveLength(2); // erabackend: its date's release, then the next one
    expect(r.last).toBe(
      "telebench: not the era's pin: erabackend 1.0 -> 1.1 (AttributeError: 'HTMLParser' object has no attribute 'unescape')",
    );
  });

  it('a package none of whose later releases installs ends the script non-zero naming it', async () => {
    const r = await install('dead', ['erasteady', 'eradead']);
    expect(r.status).toBe(1);
    expect(r.last).toBe(
      `telebench: python package eradead: 1.0 (the era's) does not install on ${r.pyVersion}, nor any later release (tried 1.1): AttributeError: module '_ast' has no attribute 'Str'`,
    );
    expect(r.report).toBeUndefined();
    expect(await imported(r.python, 'eradead')).toBeNull();
  });

  it('--max-lifts 0 lifts nothing and fails as the one uv install did', async () => {
    const r = await install('off', ['eraflaky'], ['--max-lifts', '0']);
    expect(r.status).toBe(1);
    expect(r.last).toBe(
      "telebench: python package eraflaky: 1.0 does not install (AttributeError: module '_ast' has no attribute 'Str'), and lifting is off (--max-lifts 0)",
    );
    // one install, no probe of a later release
    expect(r.stderr.split('\n').filter((l) => l.startsWith('telebench: '))).toHaveLength(2);
    expect(r.stderr).not.toContain('--target');
    expect(r.stderr).toContain('Failed to build `eraflaky==1.0`');
    expect(r.report).toBeUndefined();
    expect(await imported(r.python, 'eraflaky')).toBeNull();
  });
});
