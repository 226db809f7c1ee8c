// The command as users get it: the compiled bundle (dist/telebench.js, scripts/build.mjs) runs from
// a packed tarball through `npx telebench` without the TypeScript sources, and in a checkout a
// bundle older than its sources is rebuilt before it runs (a stale bundle never runs silently).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../pipeline/manifest.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'telebench-pack-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function sh(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  return spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env } });
}

describe('the packed package', () => {
  it('`npm pack` ships the bundle, not the sources, and `npx telebench` runs from it', async () => {
    const pack = sh('npm', ['pack', '--json', '--pack-destination', dir], PROJECT_ROOT);
    expect(pack.status, pack.stderr).toBe(0);
    const [info] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
    const files = info!.files.map((f) => f.path);
    expect(files).toContain('dist/telebench.js');
    expect(files).toContain('bin/telebench.js');
    expect(files).toContain('config/default.yaml');
    expect(files.filter((f) => f.endsWith('.ts'))).toEqual([]);

    // what npm install does with the tarball: the package under node_modules, its bin linked;
    // its dependencies (as package.json lists them) taken from this checkout's node_modules
    const app = join(dir, 'app');
    const pkgDir = join(app, 'node_modules', 'telebench');
    mkdirSync(pkgDir, { recursive: true });
    const untar = sh(
      'tar',
      ['xzf', join(dir, info!.filename), '-C', pkgDir, '--strip-components=1'],
      dir,
    );
    expect(untar.status, untar.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    for (const dep of Object.keys(manifest.dependencies)) {
      const target = join(app, 'node_modules', dep);
      mkdirSync(join(target, '..'), { recursive: true });
      symlinkSync(join(PROJECT_ROOT, 'node_modules', dep), target);
    }
    mkdirSync(join(app, 'node_modules', '.bin'));
    symlinkSync('../telebench/bin/telebench.js', join(app, 'node_modules', '.bin', 'telebench'));
    chmodSync(join(pkgDir, 'bin', 'telebench.js'), 0o755);

    const env = { npm_config_offline: 'true', TELEBENCH_HOME: join(dir, 'state') };
    const help = sh('npx', ['--no-install', 'telebench', '--help'], app, env);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain('Usage: telebench');
    // the packaged default configuration is found and valid
    const check = sh('npx', ['--no-install', 'telebench', 'config', 'check'], app, env);
    expect(check.status, check.stderr).toBe(0);
    // the native SQLite module loads: a run and its status
    const run = sh('npx', ['--no-install', 'telebench', 'run', 'selftest', '--limit', '3'], app, {
      ...env,
      CI: 'true',
    });
    expect(run.status, run.stderr).toBe(0);
    const status = sh('npx', ['--no-install', 'telebench', 'status', '--json'], app, env);
    expect(status.status, status.stderr).toBe(0);
    expect(status.stdout).toContain('selftest');
    // nothing was compiled in the installed package: it has no sources to compare
    expect(existsSync(join(pkgDir, 'pipeline'))).toBe(false);

    // Ctrl-C at a terminal: SIGINT to the foreground process group (npm, its sh -c, telebench)
    // reaches the pipeline, which stops cleanly: resume hint, no item left running, exit 130
    writeFileSync(
      join(app, 'int.yaml'),
      'version: 1\nselftest: { items: 400, delay_ms: 20, concurrency: 2, attempts_log: attempts.log }\n',
    );
    const intState = join(dir, 'state-int');
    const child = spawn(
      'npx',
      ['--no-install', 'telebench', '--state', intState, 'run', 'selftest', '--config', 'int.yaml'],
      { cwd: app, detached: true, env: { ...process.env, ...env, CI: 'true' } },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.resume();
    const exited = new Promise<{ code: number | null; signal: string | null }>((ok) =>
      child.on('close', (code, signal) => ok({ code, signal })),
    );
    const attempts = () =>
      existsSync(join(app, 'attempts.log'))
        ? readFileSync(join(app, 'attempts.log'), 'utf8').split('\n').length
        : 0;
    while (attempts() < 20 && child.exitCode === null) await sleep(20);
    process.kill(-child.pid!, 'SIGINT');
    const end = await exited;
    // npm ends by the signal itself (a shell reports 128 + 2 = 130) or with telebench's 130
    expect(end.code === 130 || end.signal === 'SIGINT', JSON.stringify(end)).toBe(true);
    // telebench may still be finishing after npm is gone: wait until it releases the state
    const deadline = Date.now() + 120_000;
    while (existsSync(join(intState, 'run.lock')) && Date.now() < deadline) await sleep(100);
    expect(stderr).toContain('to resume: npx telebench run selftest');
    expect(stderr).toMatch(/selftest\.items: interrupted/);
    const st = sh(
      'npx',
      ['--no-install', 'telebench', '--state', intState, 'status', '--json'],
      app,
      env,
    );
    const parsed = JSON.parse(st.stdout) as {
      stages: { stage: string; byState: Record<string, number> }[];
    };
    const items = parsed.stages.find((x) => x.stage === 'selftest.items')!.byState;
    expect(items.running ?? 0).toBe(0);
    expect(items.pending ?? 0).toBeGreaterThan(0);
  });
});

describe('the bundle in a checkout', () => {
  it('a bundle older than its sources is rebuilt before it runs', () => {
    const bundle = join(PROJECT_ROOT, 'dist', 'telebench.js');
    const first = sh(process.execPath, [join(PROJECT_ROOT, 'bin', 'telebench.js'), '--help'], dir);
    expect(first.status, first.stderr).toBe(0);
    const old = new Date('2001-01-01T00:00:00Z');
    utimesSync(bundle, old, old);
    const again = sh(process.execPath, [join(PROJECT_ROOT, 'bin', 'telebench.js'), '--help'], dir);
    expect(again.status, again.stderr).toBe(0);
    expect(statSync(bundle).mtimeMs).toBeGreaterThan(old.getTime());
    const inputs = JSON.parse(
      readFileSync(join(PROJECT_ROOT, 'dist', 'telebench.inputs.json'), 'utf8'),
    ) as string[];
    expect(inputs).toContain('pipeline/cli/main.ts');
    expect(inputs).toContain('stages/index.ts');
  });
});

describe('what a start loads (issue 15: CLI start, bench/cli-start.bench.ts)', () => {
  it('`--help` loads commander and the command declarations, no stage, schema or store', async () => {
    const { buildCli } = (await import(join(PROJECT_ROOT, 'scripts', 'build.mjs'))) as {
      buildCli(): Promise<{ inputs: number; startup: string[] }>;
    };
    const { startup } = await buildCli();
    expect(startup).toContain('pipeline/cli/main.ts');
    expect(startup).toContain('stages/commands.ts');
    const heavy = startup.filter(
      (f) =>
        f === 'stages/index.ts' ||
        f === 'stages/config.ts' ||
        f === 'pipeline/cli/commands.ts' ||
        f.startsWith('pipeline/store/') ||
        f.startsWith('pipeline/providers/') ||
        f.startsWith('node_modules/zod/') ||
        f.startsWith('node_modules/yaml/'),
    );
    expect(heavy).toEqual([]);
  });

  it('the light list of pipeline names is exactly the pipelines of stages/index.ts', async () => {
    const { PIPELINE_NAMES } = await import('../../stages/commands.js');
    const { pipelines } = await import('../../stages/index.js');
    expect([...PIPELINE_NAMES]).toEqual([...pipelines.keys()]);
  });
});

describe('the Makefile (the README names make run and make test)', () => {
  // the command make would run, also when this test itself runs under make (MAKELEVEL set, which
  // makes a nested make print "Entering/Leaving directory" lines)
  const planned = (...vars: string[]): string => {
    const r = spawnSync('make', ['--no-print-directory', '-n', 'run', ...vars], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      env: { ...process.env, MAKEFLAGS: '', MAKELEVEL: '' },
    });
    expect(r.status, r.stderr).toBe(0);
    return r.stdout.trim().split('\n').at(-1)!;
  };
  it('make run passes PIPELINE, CONFIG, LIMIT and RETRY_FAILED through to telebench run', () => {
    expect(planned('PIPELINE=selftest', 'CONFIG=my.yaml', 'LIMIT=3', 'RETRY_FAILED=1')).toMatch(
      /^node bin\/telebench\.js run selftest --config my\.yaml --limit 3 --retry-failed$/,
    );
    expect(planned()).toMatch(
      /^node bin\/telebench\.js run all --config config\/default\.yaml\s*$/,
    );
  });
});
