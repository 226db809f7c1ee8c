// What a person meets around a run, through the real CLI (child processes): a state folder that
// cannot be created or is read-only, the printed resume command run exactly as printed, a dry run
// that exits 0 over earlier failures, and `status` explaining `running` items after kill -9 and
// `orphaned` items.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../pipeline/manifest.js';
import { selfCommand } from '../../pipeline/cli/main.js';
import { mirrorHint } from '../../stages/swe5g/mine/source.js';

const BIN = join(PROJECT_ROOT, 'bin', 'telebench.js');
let dir: string;
const mounts: string[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'telebench-exits-'));
});
afterAll(() => {
  for (const m of mounts) spawnSync('umount', [m]);
  rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[], cwd = dir) {
  return spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, CI: 'true' },
    // a hang guard only (a spinning mkdir once never returned), sized for a machine at load 30
    timeout: 300_000,
  });
}

/** Makes `folder` read-only for this process: a read-only bind mount as root, else chmod 555. */
function makeReadOnly(folder: string): void {
  if (process.getuid?.() === 0) {
    const ro = spawnSync('mount', ['--bind', '-o', 'ro', folder, folder], { encoding: 'utf8' });
    expect(ro.status, ro.stderr).toBe(0);
    mounts.push(folder);
    const remount = spawnSync('mount', ['-o', 'remount,ro,bind', folder], { encoding: 'utf8' });
    expect(remount.status, remount.stderr).toBe(0);
  } else {
    chmodSync(folder, 0o555);
  }
}

describe('state folder problems: exit 2 naming the folder and the cause', () => {
  it('a --state that cannot be created', () => {
    writeFileSync(join(dir, 'a-file'), 'x');
    const under = join(dir, 'a-file', 'state');
    const r = cli(['--state', under, 'status']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`cannot create the state folder ${under}`);
    expect(r.stderr).toMatch(/not a folder \(ENOTDIR\)/);
    expect(r.stderr).not.toContain('internal error');
    // Node 20's recursive mkdir never returns here (ENOENT from a parent under /proc): a clear error instead
    const proc = cli(['--state', '/proc/telebench-nope/state', 'status']);
    expect(proc.status).toBe(2);
    expect(proc.stderr).toContain('cannot create the state folder /proc/telebench-nope/state');
    expect(proc.stderr).toMatch(/ENOENT/);
    const file = cli(['--state', join(dir, 'a-file'), 'run', 'selftest']);
    expect(file.status).toBe(2);
    expect(file.stderr).toMatch(/it exists and is not a folder/);
  });

  it('a read-only state folder: run says so; status, items and report still read it', () => {
    const state = join(dir, 'ro-state');
    writeFileSync(join(dir, 'ro.yaml'), 'version: 1\nselftest: { items: 5 }\n');
    expect(cli(['--state', state, 'run', 'selftest', '--config', 'ro.yaml']).status).toBe(0);
    makeReadOnly(state);
    const run = cli(['--state', state, 'run', 'selftest', '--config', 'ro.yaml']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`the state folder ${state} is read-only`);
    expect(run.stderr).toMatch(/read-only file system \(EROFS\)|permission denied \(EACCES\)/);
    expect(run.stderr).not.toContain('unable to open database file');
    const status = cli(['--state', state, 'status', '--json']);
    expect(status.status, status.stderr).toBe(0);
    const parsed = JSON.parse(status.stdout) as {
      stages: { stage: string; byState: Record<string, number> }[];
    };
    expect(parsed.stages.find((s) => s.stage === 'selftest.items')?.byState).toEqual({ done: 5 });
    const items = cli(['--state', state, 'items', 'selftest.items']);
    expect(items.status, items.stderr).toBe(0);
    expect(items.stdout).toContain('item-4');
    expect(cli(['--state', state, 'report']).status).toBe(0);
  });
});

describe('the resume hint runs as printed', () => {
  it('prints the command that started it (node bin/telebench.js from the checkout) and that command resumes', () => {
    const marker = join(dir, 'failing');
    writeFileSync(marker, 'x');
    const config = join(dir, 'resume.yaml');
    writeFileSync(
      config,
      'version: 1\nselftest: { items: 6, fail_while_file: failing, fail_every: 2, skip_every: 5 }\n',
    );
    const state = join(dir, 'resume-state');
    /** `node bin/telebench.js run selftest` from the checkout, as `make run` starts it. */
    const selftestFromCheckout = (stateDir: string, ...extra: string[]) =>
      spawnSync(
        process.execPath,
        ['bin/telebench.js', 'run', 'selftest', '--config', config, '--state', stateDir, ...extra],
        { cwd: PROJECT_ROOT, encoding: 'utf8', env: { ...process.env, CI: 'true' } },
      );
    // a dry run on an empty state: selftest.echo plans from selftest.items' outputs, so its 0 is
    // not the last word, and the summary says so
    const fresh = selftestFromCheckout(join(dir, 'dry-state'), '--dry-run');
    expect(fresh.status, fresh.stderr).toBe(0);
    expect(fresh.stderr).not.toContain('does not check services'); // selftest has none
    expect(fresh.stderr).toMatch(/selftest\.items: completed \(dry run: 6 would run\)/);
    expect(fresh.stderr).toMatch(
      /selftest\.echo: completed \(dry run: 0 would run; more once selftest\.items has run: its items come from their outputs\)/,
    );
    const first = selftestFromCheckout(state);
    expect(first.status).toBe(1);
    // why items were skipped, by reason
    expect(first.stderr).toMatch(/^ {6}skipped: selftest_skip 1$/m);
    // the latest failure's message in the summary itself, not only behind `show`
    expect(first.stderr).toMatch(/^ {6}selftest_fail, e\.g\. item-\d: \S/m);
    expect(first.stderr).not.toContain('failed again');
    // the failed items' error codes, and where their messages are
    expect(first.stderr).toMatch(
      /^ {6}failed: [a-z_]+ 3 \(messages and hints: node bin\/telebench\.js --state \S+ items selftest\.items --state-filter failed, then node bin\/telebench\.js --state \S+ show selftest\.items <key>\)$/m,
    );
    const hint = /^to resume: (.*)$/m.exec(first.stderr)?.[1];
    expect(hint).toBe(
      `node bin/telebench.js run selftest --config ${config} --state ${state} --retry-failed`,
    );

    // a dry run over the failed items: nothing changes, exit 0, says what would run
    const dry = selftestFromCheckout(state, '--dry-run', '--retry-failed');
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.stderr).toMatch(/selftest\.items: completed \(dry run: 3 would run\)/);
    const dryNoRetry = selftestFromCheckout(state, '--dry-run');
    expect(dryNoRetry.status, dryNoRetry.stderr).toBe(0);
    expect(dryNoRetry.stderr).not.toContain('to resume');
    // a dry run's counts are what would happen: 'to run', and the failed ones 'would not run'
    expect(dryNoRetry.stderr).toMatch(
      /selftest\.items: completed \(dry run: 0 would run\) — 6 planned, 0 to run, .*3 failed \(3 had failed in an earlier run and would not run again: add --retry-failed/,
    );

    // without --retry-failed, a run says that failed items were left as they were, and that they
    // count towards --limit (items 2, 4, 6 failed; --limit 2 plans items 1 and 2)
    const limited = selftestFromCheckout(state, '--limit', '2');
    expect(limited.stderr).toMatch(
      /selftest\.items: completed — .*; 0 ran in this run \(1 had failed in an earlier run and did not run again: add --retry-failed, or RETRY_FAILED=1 to make run; they count towards --limit\)/,
    );

    // retried while the cause is still there: it says so, instead of the same hint as if new
    const again = selftestFromCheckout(state, '--retry-failed');
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(
      /^items failed again although this run retried them \(--retry-failed, which a refresh sets itself\): fix the cause their messages above name before running again; to resume: node bin\/telebench\.js run selftest /m,
    );

    // the hint, run by a shell exactly as printed, in the folder where it was printed
    unlinkSync(marker);
    // a sample that retries only item-0: exit 0, and the failures left outside it are called old
    const sample = selftestFromCheckout(state, '--limit', '1', '--retry-failed');
    expect(sample.status, sample.stderr).toBe(0);
    expect(sample.stderr).toMatch(
      /^ {6}failed in earlier runs, not in this run's plan: selftest_fail 2 \(/m,
    );
    const resumed = spawnSync('sh', ['-c', hint!], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      env: { ...process.env, CI: 'true' },
    });
    expect(resumed.status, resumed.stderr).toBe(0);
    const status = cli(['--state', state, 'status', '--json']);
    const parsed = JSON.parse(status.stdout) as {
      stages: { stage: string; byState: Record<string, number> }[];
    };
    expect(parsed.stages.find((s) => s.stage === 'selftest.items')?.byState).toEqual({
      done: 4,
      skipped: 2, // items 0 and 5 (item 0 failed first, then was skipped once retried)
    });
  });

  it('selfCommand: npx, a PATH link, or node with the script path', () => {
    expect(selfCommand('/app/node_modules/.bin/telebench', '/app')).toEqual(['npx', 'telebench']);
    expect(selfCommand('/usr/local/bin/telebench', '/home/u')).toEqual(['telebench']);
    expect(selfCommand('/x/bin/telebench.js', '/x')).toEqual(['node', 'bin/telebench.js']);
    expect(selfCommand('/x/bin/telebench.js', '/elsewhere')).toEqual([
      'node',
      '/x/bin/telebench.js',
    ]);
  });
});

describe('status explains running and orphaned items', () => {
  it('after kill -9: running items with no process alive are explained; orphaned items too', async () => {
    const state = join(dir, 'kill-state');
    const log = join(dir, 'kill-attempts.log');
    writeFileSync(
      join(dir, 'kill.yaml'),
      'version: 1\nselftest: { items: 40, delay_ms: 60000, concurrency: 3, attempts_log: kill-attempts.log }\n',
    );
    const child = spawn(
      process.execPath,
      [BIN, '--state', state, 'run', 'selftest', '--config', 'kill.yaml'],
      { cwd: dir, stdio: 'ignore', env: { ...process.env, CI: 'true' } },
    );
    // three items in flight (each waits a minute): then kill -9
    while (!existsSync(log) || readFileSync(log, 'utf8').trim().split('\n').length < 3) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const live = cli(['--state', state, 'status']);
    expect(live.stdout).toContain(`being worked on now by the run with pid ${child.pid}`);
    // report run tells a live run from a killed one
    expect(cli(['--state', state, 'report', 'run']).stdout).toContain(
      `finished: not finished: still running (pid ${child.pid})`,
    );
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(cli(['--state', state, 'report', 'run']).stdout).toMatch(
      /finished: not finished: killed \(no process holds the state lock/,
    );
    const status = cli(['--state', state, 'status']);
    expect(status.status).toBe(0);
    expect(status.stdout).toMatch(/running: 3 items were in flight when their run ended/);
    expect(status.stdout).toContain('no telebench process holds this state folder');
    const json = JSON.parse(cli(['--state', state, 'status', '--json']).stdout) as {
      run_in_progress: boolean;
      notes: string[];
    };
    expect(json.run_in_progress).toBe(false);
    expect(json.notes.length).toBe(1);

    // a smaller plan leaves the items it no longer lists orphaned, and status says what that means
    mkdirSync(join(dir, 'orph'), { recursive: true });
    writeFileSync(join(dir, 'orph', 'a.yaml'), 'version: 1\nselftest: { items: 6 }\n');
    writeFileSync(join(dir, 'orph', 'b.yaml'), 'version: 1\nselftest: { items: 4 }\n');
    const ostate = join(dir, 'orph', 'state');
    expect(cli(['--state', ostate, 'run', 'selftest', '--config', 'orph/a.yaml']).status).toBe(0);
    expect(cli(['--state', ostate, 'run', 'selftest', '--config', 'orph/b.yaml']).status).toBe(0);
    const o = cli(['--state', ostate, 'status']);
    expect(o.stdout).toMatch(
      /orphaned: 2 items that an earlier run planned but the latest full plan no longer lists/,
    );
  });
});

describe('a stage that waits says so as it happens', () => {
  it('items in flight longer than the interval give `waiting` events on stdout and in events.jsonl', () => {
    const state = join(dir, 'wait-state');
    writeFileSync(
      join(dir, 'wait.yaml'),
      'version: 1\nselftest: { items: 2, delay_ms: 2500, concurrency: 2 }\n',
    );
    const r = spawnSync(
      process.execPath,
      [BIN, '--state', state, 'run', 'selftest', '--config', 'wait.yaml'],
      {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, CI: 'true', TELEBENCH_WAITING_EVERY_MS: '500' },
      },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /"kind":"log","stage":"selftest\.items","message":"waiting: 2 items in flight, the longest for \d+ s"/,
    );
    const runs = readdirSync(join(state, 'runs'));
    const events = readFileSync(join(state, 'runs', runs[0]!, 'events.jsonl'), 'utf8');
    expect(events).toContain('"waiting":true');
  });
});

describe('items: a closed pipe and a bad filter (new-user trial)', () => {
  it('`items X | head -1` stops quietly; an unknown --state-filter is a usage error naming the choices', () => {
    const state = join(dir, 'items-state');
    expect(cli(['--state', state, 'run', 'selftest']).status).toBe(0);
    const piped = spawnSync(
      'bash',
      ['-c', `"${process.execPath}" "${BIN}" --state "${state}" items selftest.items | head -1`],
      { cwd: dir, encoding: 'utf8', env: { ...process.env, CI: 'true' }, timeout: 300_000 },
    );
    expect(piped.stdout).toMatch(/^item-\d+\tdone\n$/);
    expect(piped.stderr).not.toMatch(/EPIPE|Error/);
    const bad = cli(['--state', state, 'items', 'selftest.items', '--state-filter', 'bogus']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/'bogus' is invalid\. Allowed choices are pending, running, done/);
  });
});

describe('status names the stages that stopped at preflight (new-user trial)', () => {
  it('a run stopped at preflight has no items; status says which stages did not run and why', () => {
    const config = join(dir, 'preflight.yaml');
    writeFileSync(
      config,
      `version: 1\nswe5g:\n  registry: ${join(PROJECT_ROOT, 'config', 'repos.yaml')}\n  source: git\n  mining:\n    mirrors_dir: nowhere\n`,
    );
    const state = join(dir, 'preflight-state');
    // a dry run does not check services, and says which stages a real run checks them at
    const dry = cli(['--state', state, 'run', 'swe5g', '--config', config, '--dry-run']);
    expect(dry.status, dry.stderr).toBe(0);
    expect(dry.stderr).toMatch(
      /a dry run does not check services; a real run checks them at the start of swe5g\.mine, .*swe5g\.validate/,
    );
    const run = cli(['--state', state, 'run', 'swe5g', '--config', config]);
    expect(run.status, run.stderr).toBe(3);
    // the stages behind the stop fold into one line under it, not a 'stopped — needs X' line each
    expect(run.stderr).toMatch(
      /^ {2}swe5g\.mine: stopped — .*\n {6}-> .*\n {6}not started behind it: swe5g\.link, swe5g\.filter, .*swe5g\.validate/m,
    );
    expect(run.stderr).not.toMatch(/swe5g\.link: stopped/);
    // Magma's components are entries of one repository: the count says both
    expect(run.stderr).toMatch(
      /no mirror of the 33 selected registry entries \((2[0-9]) git repositories\) is available/,
    );
    const status = cli(['--state', state, 'status']);
    expect(status.status, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/\*\*Stages of the last run \(\S+\) that did not run\*\*/);
    expect(status.stdout).toMatch(
      /^- swe5g\.mine: stopped at preflight: swe5g\.source is "git" but no mirror .*\n {2}-> \S/m,
    );
    expect(status.stdout).toMatch(
      /^- swe5g\.mine: stopped at preflight: .*\n {2}-> .*\n {2}- not started behind it: swe5g\.link, swe5g\.filter, /m,
    );
    expect(status.stdout).not.toMatch(/^- swe5g\.link:/m);
    // JSON stays the items' status only
    expect(cli(['--state', state, 'status', '--json']).stdout).not.toContain('did not run');
  });

  it('the no-mirror hint clones the selected repositories, not a fixed example (new-user trial)', () => {
    const config = join(dir, 'preflight-udm.yaml');
    const base = join(dir, 'no-remotes'); // a real folder holding no repository: every clone fails
    mkdirSync(base, { recursive: true });
    writeFileSync(
      config,
      `version: 1\nswe5g:\n  registry: ${join(PROJECT_ROOT, 'config', 'repos.yaml')}\n  repos: [free5gc/udm]\n  source: git\n  environments:\n    git_url_base: ${base}\n`,
    );
    const run = cli([
      '--state',
      join(dir, 'preflight-udm-state'),
      'run',
      'swe5g',
      '--config',
      config,
    ]);
    expect(run.status, run.stderr).toBe(3);
    expect(run.stderr).toContain(`git clone --mirror ${base}/free5gc/udm.git free5gc/udm.git`);
    expect(run.stderr).not.toContain('free5gc/amf');
  });

  it('the hint names the first two repositories without a mirror, once each, and counts the rest', () => {
    const hint = mirrorHint(['a/x', 'a/x', 'b/y', 'c/z', 'd/w'], 'https://example.org');
    expect(hint).toContain(
      '(git clone --mirror https://example.org/a/x.git a/x.git; git clone --mirror https://example.org/b/y.git b/y.git; and the same for 2 more)',
    );
    expect(hint).not.toContain('c/z');
    expect(mirrorHint(['a/x'], 'https://example.org')).toMatch(/a\/x\.git\)$/);
  });
});
