// Fault tests of the real CLI as a child process: SIGKILL at random instants mid-stage, SIGINT and
// SIGTERM, and the exit codes of configuration errors.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { PROJECT_ROOT } from '../../pipeline/manifest.js';

const BIN = join(PROJECT_ROOT, 'bin', 'telebench.js');
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'telebench-fault-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[], cwd = dir) {
  return spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, CI: 'true' },
  });
}

function lines(file: string): string[] {
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
    : [];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts `telebench run selftest`, waits until the attempts log reaches `atLeast` lines, then
 * sends `signal`. @returns the exit code (null: killed by SIGKILL) and everything it wrote to stderr
 */
async function runAndKill(
  args: string[],
  attemptsLog: string,
  atLeast: number,
  signal: NodeJS.Signals,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, CI: 'true' },
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code, sig) => resolve(sig === 'SIGKILL' ? null : code)),
  );
  // a hang guard only (the loop ends as soon as the log grows or the run exits): sized for load 30
  const deadline = Date.now() + 600_000;
  while (lines(attemptsLog).length < atLeast && Date.now() < deadline && child.exitCode === null)
    await sleep(5);
  child.kill(signal);
  return { code: await exited, stderr };
}

/**
 * Kills `telebench run` with SIGKILL `times` times, each once the attempts log has grown by
 * `min` plus a random part of `spread` lines. @returns the exit code of each run (null: killed)
 */
async function killRepeatedly(
  args: string[],
  attemptsLog: string,
  times: number,
  min: number,
  spread: number,
): Promise<(number | null)[]> {
  const codes: (number | null)[] = [];
  for (let k = 0; k < times; k++) {
    const target = lines(attemptsLog).length + min + Math.floor(Math.random() * spread);
    codes.push((await runAndKill(args, attemptsLog, target, 'SIGKILL')).code);
  }
  return codes;
}

/** Reruns `args` (up to 4 times) until it exits 0; fails the test when it never does. */
function resumeUntilDone(args: string[]): void {
  let last = cli(args);
  for (let i = 0; i < 3 && last.status !== 0; i++) last = cli(args);
  expect(last.status, last.stderr).toBe(0);
}

/** A further run exits 0 and appends nothing to the attempts log: nothing is repeated. */
function expectRerunRepeatsNothing(args: string[], attemptsLog: string): void {
  const before = lines(attemptsLog).length;
  expect(cli(args).status).toBe(0);
  expect(lines(attemptsLog).length).toBe(before);
}

/** The item rows of `stage` in the state database under `state`. */
function itemRows(state: string, stage: string): { key: string; state: string; output: string }[] {
  const db = new Database(join(state, 'state.db'), { readonly: true });
  try {
    return db.prepare(`SELECT key, state, output FROM items WHERE stage = ?`).all(stage) as {
      key: string;
      state: string;
      output: string;
    }[];
  } finally {
    db.close();
  }
}

describe('telebench run under faults', () => {
  it('resumes after repeated SIGKILL: one done row per item, re-attempts bounded by the concurrency', async () => {
    const N = 300;
    const CONCURRENCY = 4;
    const attemptsLog = join(dir, 'attempts.log');
    const state = join(dir, 'state-kill');
    writeFileSync(
      join(dir, 'kill.yaml'),
      `version: 1\nselftest: { items: ${N}, delay_ms: 8, concurrency: ${CONCURRENCY}, attempts_log: attempts.log }\n`,
    );
    const args = ['--state', state, 'run', 'selftest', '--config', 'kill.yaml'];
    // Kill at random points of the stage, several times.
    const codes = await killRepeatedly(args, attemptsLog, 4, 20, 40);
    for (const code of codes) expect(code).toBeNull(); // really killed, not finished
    const kills = codes.length;
    resumeUntilDone(args);

    const attempts = lines(attemptsLog).map((l) => {
      const [key, attempt] = l.split(' ');
      return { key: key!, attempt: attempt! };
    });
    const attemptIds = new Set(attempts.map((a) => a.attempt));
    const rows = itemRows(state, 'selftest.items');
    expect(rows).toHaveLength(N);
    expect(rows.every((r) => r.state === 'done')).toBe(true);
    for (const r of rows) {
      const out = JSON.parse(r.output) as { attempt: string };
      expect(attemptIds.has(out.attempt), `done row of ${r.key} cites an attempt in the log`).toBe(
        true,
      );
    }
    const perKey = new Map<string, number>();
    for (const a of attempts) perKey.set(a.key, (perKey.get(a.key) ?? 0) + 1);
    expect(perKey.size).toBe(N);
    const extra = attempts.length - N;
    // Only items in flight at a kill are attempted again: at most `concurrency` per kill.
    expect(extra).toBeLessThanOrEqual(kills * CONCURRENCY);
    for (const [, n] of perKey) expect(n).toBeLessThanOrEqual(1 + kills);
    // A further run repeats nothing.
    expectRerunRepeatsNothing(args, attemptsLog);
  });

  it('streaming stages under repeated SIGKILL: each downstream item reads the final upstream output, nothing repeated beyond the in-flight items', async () => {
    const N = 200;
    const CONCURRENCY = 4;
    const attemptsLog = join(dir, 'attempts-stream.log');
    const state = join(dir, 'state-stream');
    writeFileSync(
      join(dir, 'stream.yaml'),
      `version: 1\nselftest: { items: ${N}, delay_ms: 8, concurrency: ${CONCURRENCY}, echo: true, attempts_log: attempts-stream.log }\n`,
    );
    const args = ['--state', state, 'run', 'selftest', '--config', 'stream.yaml'];
    const kills = (await killRepeatedly(args, attemptsLog, 4, 30, 60)).filter(
      (c) => c === null,
    ).length;
    expect(kills).toBeGreaterThan(0);
    resumeUntilDone(args);

    const log = lines(attemptsLog).map((l) => l.split(' '));
    const itemLines = log.filter((l) => !l[0]!.startsWith('echo:'));
    const echoLines = log.filter((l) => l[0]!.startsWith('echo:'));
    // streaming: echo items started while selftest.items still had items to start
    const firstEcho = log.findIndex((l) => l[0]!.startsWith('echo:'));
    const lastItem = log.findLastIndex((l) => !l[0]!.startsWith('echo:'));
    expect(firstEcho).toBeGreaterThan(-1);
    expect(firstEcho).toBeLessThan(lastItem);

    const items = itemRows(state, 'selftest.items');
    const echoes = itemRows(state, 'selftest.echo');
    expect(items).toHaveLength(N);
    expect(echoes).toHaveLength(N);
    expect([...items, ...echoes].every((r) => r.state === 'done')).toBe(true);
    const itemAttempt = new Map(
      items.map((r) => [r.key, (JSON.parse(r.output) as { attempt: string }).attempt]),
    );
    for (const r of echoes) {
      // the echo read the upstream output that stands: no stale input survived a kill
      expect((JSON.parse(r.output) as { read: string }).read, r.key).toBe(itemAttempt.get(r.key));
    }
    for (const [stageLines, prefix] of [
      [itemLines, ''],
      [echoLines, 'echo:'],
    ] as const) {
      const perKey = new Map<string, number>();
      for (const l of stageLines) perKey.set(l[0]!, (perKey.get(l[0]!) ?? 0) + 1);
      expect(perKey.size, prefix).toBe(N);
      // only items in flight at a kill are attempted again: at most `concurrency` per kill
      expect(stageLines.length - N, prefix).toBeLessThanOrEqual(kills * CONCURRENCY);
    }
    // every echo attempt that ran read an attempt of its item that had finished
    const startedItemAttempts = new Set(itemLines.map((l) => l[1]));
    for (const l of echoLines) expect(startedItemAttempts.has(l[2])).toBe(true);
    expectRerunRepeatsNothing(args, attemptsLog);
  });

  it('SIGINT finishes or abandons in-flight items, persists state and exits 130; SIGTERM exits 143', async () => {
    const attemptsLog = join(dir, 'attempts-int.log');
    const state = join(dir, 'state-int');
    writeFileSync(
      join(dir, 'int.yaml'),
      `version: 1\nselftest: { items: 200, delay_ms: 10, concurrency: 2, attempts_log: attempts-int.log }\n`,
    );
    const args = ['--state', state, 'run', 'selftest', '--config', 'int.yaml'];
    const int = await runAndKill(args, attemptsLog, 30, 'SIGINT');
    expect(int.code).toBe(130);
    // a person reading stderr of a piped run is told what the wait is and how to cut it short
    expect(int.stderr).toMatch(
      /received SIGINT: starting no new items; each in-flight item finishes, or stops and runs again on resume.*send it again to exit now/,
    );
    const db = new Database(join(state, 'state.db'), { readonly: true });
    const running = db
      .prepare(`SELECT COUNT(*) FROM items WHERE state = 'running'`)
      .pluck()
      .get() as number;
    const done = db
      .prepare(`SELECT COUNT(*) FROM items WHERE state = 'done'`)
      .pluck()
      .get() as number;
    db.close();
    expect(running).toBe(0);
    expect(done).toBeGreaterThan(0);
    expect(
      (await runAndKill(args, attemptsLog, lines(attemptsLog).length + 30, 'SIGTERM')).code,
    ).toBe(143);
    const resumed = cli(args);
    expect(resumed.status).toBe(0);
    const status = cli(['--state', state, 'status', '--json']);
    const parsed = JSON.parse(status.stdout) as {
      stages: { stage: string; byState: Record<string, number> }[];
    };
    expect(parsed.stages.find((s) => s.stage === 'selftest.items')?.byState).toEqual({ done: 200 });
  });
});

describe('interrupting CPU-bound stages', () => {
  it('SIGINT is handled while a stage computes without awaiting I/O, and resumes', async () => {
    const attemptsLog = join(dir, 'attempts-busy.log');
    const state = join(dir, 'state-busy');
    writeFileSync(
      join(dir, 'busy.yaml'),
      `version: 1\nselftest: { items: 400, busy_ms: 10, concurrency: 4, attempts_log: attempts-busy.log }\n`,
    );
    const args = ['--state', state, 'run', 'selftest', '--config', 'busy.yaml'];
    expect((await runAndKill(args, attemptsLog, 40, 'SIGINT')).code).toBe(130);
    const started = lines(attemptsLog).length;
    expect(started).toBeLessThan(400);
    expect(cli(args).status).toBe(0);
    // nothing done before the interrupt ran again
    expect(lines(attemptsLog).length).toBe(400);
  });
});

describe('configuration errors exit 2 and name the path', () => {
  const cases: [string, string, RegExp][] = [
    [
      'unknown key',
      'version: 1\nselftest: { items: 3, colour: red }\n',
      /selftest\.colour: unknown key "colour"; allowed here: .*\bitems\b/,
    ],
    [
      'a misspelt key',
      'version: 1\nselftest: { itemz: 3 }\n',
      /selftest\.itemz: unknown key "itemz" \(did you mean "items"\?\)/,
    ],
    ['wrong type', 'version: 1\nselftest:\n  items: lots\n', /:3: selftest\.items: .*number/],
    ['bad YAML syntax', 'version: 1\nselftest: { items: 3\n', /bad\.yaml:\d+:\d+: invalid YAML/],
    ['wrong version', 'version: 2\n', /version: /],
  ];
  for (const [name, text, pattern] of cases) {
    it(name, () => {
      writeFileSync(join(dir, 'bad.yaml'), text);
      const r = cli(['--state', join(dir, 'state-cfg'), 'run', 'selftest', '--config', 'bad.yaml']);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/bad\.yaml/);
      expect(r.stderr).toMatch(pattern);
    });
  }
  it('a copied default config: the registry it names relative to itself is missing', () => {
    const copied = join(dir, 'copied');
    mkdirSync(copied, { recursive: true });
    copyFileSync(join(PROJECT_ROOT, 'config', 'default.yaml'), join(copied, 'default.yaml'));
    const r = cli([
      '--state',
      join(dir, 'state-copied'),
      'run',
      'swe5g',
      '--config',
      join(copied, 'default.yaml'),
    ]);
    expect(r.status, r.stderr).toBe(2);
    // every missing path of the branch at once, with key, line and the project's copy
    expect(r.stderr).toMatch(/paths in it resolve relative to its folder/);
    expect(r.stderr).toMatch(
      /copied\/default\.yaml:\d+: swe5g\.registry: "repos\.yaml" names .*copied\/repos\.yaml, which does not exist; the project's own is .*config\/repos\.yaml/,
    );
    expect(r.stderr).not.toContain('resilience.subsets_file'); // not a branch of this run
    const check = cli(['config', 'check', '--config', join(copied, 'default.yaml')]);
    expect(check.status).toBe(2);
    expect(check.stderr).toMatch(
      /swe5g\.registry: .*\n.*resilience\.subsets_file: .*\n.*resilience\.prompts_dir: /,
    );
    // with the paths pointed back at the project, it is valid
    writeFileSync(
      join(copied, 'default.yaml'),
      readFileSync(join(copied, 'default.yaml'), 'utf8')
        .replace('registry: repos.yaml', `registry: ${join(PROJECT_ROOT, 'config', 'repos.yaml')}`)
        .replace(
          /subsets_file: .*/,
          `subsets_file: ${join(PROJECT_ROOT, 'config', 'subsets.yaml')}`,
        )
        .replace(
          /prompts_dir: .*/,
          `prompts_dir: ${join(PROJECT_ROOT, 'config', 'prompts', 'resilience')}`,
        ),
    );
    const fixed = cli(['config', 'check', '--config', join(copied, 'default.yaml')]);
    expect(fixed.stdout + fixed.stderr).toMatch(/default\.yaml: valid/);
    // its editor schema line still names a file beside the copy: a warning, not an error
    expect(fixed.stderr).toMatch(
      /warning: .*\$schema=\.\/telebench\.schema\.json names .*copied\/telebench\.schema\.json, which does not exist/,
    );
    const own = cli(['config', 'check', '--config', join(PROJECT_ROOT, 'config', 'default.yaml')]);
    expect(own.status).toBe(0);
    expect(own.stderr).not.toContain('warning');
  });
  it('a copied example: every model path of every LLM block is checked against its folder', () => {
    const copied = join(dir, 'copied-examples');
    mkdirSync(copied, { recursive: true });
    const examples = join(PROJECT_ROOT, 'config', 'examples');
    for (const f of ['free5gc-swe5g-eval-smollm2.yaml', 'smollm2-resilience.yaml'])
      writeFileSync(
        join(copied, f),
        readFileSync(join(examples, f), 'utf8')
          // the registries and prompts pointed back at the project: only the model paths are off
          .replace(/registry: .*/, `registry: ${join(PROJECT_ROOT, 'config', 'repos.yaml')}`)
          .replace(
            /subsets_file: .*/,
            `subsets_file: ${join(PROJECT_ROOT, 'config', 'subsets.yaml')}`,
          )
          .replace(
            /prompts_dir: .*/,
            `prompts_dir: ${join(PROJECT_ROOT, 'config', 'prompts', 'resilience')}`,
          )
          .replace(/issues_from: (.*)/, (_m, f: string) => `issues_from: ${join(examples, f)}`),
      );
    const model = '"../../cache/models/SmolLM2-135M-Instruct.Q4_1.gguf" names ';
    const evalCheck = cli([
      'config',
      'check',
      '--config',
      join(copied, 'free5gc-swe5g-eval-smollm2.yaml'),
    ]);
    expect(evalCheck.status, evalCheck.stderr).toBe(2);
    expect(evalCheck.stderr).toMatch(
      new RegExp(
        `smollm2\\.yaml:\\d+: swe5g\\.evaluation\\.models\\[0\\]\\.llm\\.endpoints\\[0\\]\\.source\\[0\\]\\.path: ${model.replaceAll('.', '\\.')}`,
      ),
    );
    const res = cli(['config', 'check', '--config', join(copied, 'smollm2-resilience.yaml')]);
    expect(res.status, res.stderr).toBe(2);
    expect(res.stderr).toContain(`resilience.generator.llm.endpoints[0].source[0].path: ${model}`);
    expect(res.stderr).toContain(
      `resilience_eval.targets[0].llm.endpoints[0].source[0].path: ${model}`,
    );
    // a path with another source to fall back to is a first choice, not a requirement
    writeFileSync(
      join(copied, 'smollm2-resilience.yaml'),
      readFileSync(join(copied, 'smollm2-resilience.yaml'), 'utf8').replaceAll(
        /( +)- path: (.*)\n +sha256: .*\n/g,
        (_m, sp: string, p: string) =>
          `${sp}- path: ${p}\n${sp}- ollama: { model: smollm2:135m }\n`,
      ),
    );
    const fallback = cli(['config', 'check', '--config', join(copied, 'smollm2-resilience.yaml')]);
    expect(fallback.stdout + fallback.stderr).toMatch(/smollm2-resilience\.yaml: valid/);
  });
  it('an unknown stage under stages: names the nearest one', () => {
    writeFileSync(
      join(dir, 'stages.yaml'),
      'version: 1\nstages:\n  selftest.itemz: { concurrency: 2 }\n',
    );
    const r = cli(['config', 'check', '--config', 'stages.yaml']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /stages\.yaml:3: stages\.selftest\.itemz: no stage "selftest\.itemz" \(did you mean "selftest\.items"\?\)/,
    );
  });
  it('missing file', () => {
    const r = cli([
      'run',
      'selftest',
      '--config',
      'nowhere.yaml',
      '--state',
      join(dir, 'state-cfg'),
    ]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/configuration file not found: .*nowhere\.yaml/);
  });
  it('unknown pipeline and bad flag values', () => {
    writeFileSync(join(dir, 'ok.yaml'), 'version: 1\n');
    expect(cli(['run', 'nope', '--config', 'ok.yaml', '--state', join(dir, 's2')]).status).toBe(2);
    expect(
      cli(['run', 'selftest', '--config', 'ok.yaml', '--limit', 'x', '--state', join(dir, 's2')])
        .status,
    ).toBe(2);
    expect(cli(['frobnicate']).status).toBe(2);
  });
});

describe('run records', () => {
  it('writes the event log and the manifest of every run, and report/show read them', () => {
    writeFileSync(join(dir, 'small.yaml'), 'version: 1\nselftest: { items: 5, skip_every: 2 }\n');
    const state = join(dir, 'state-rec');
    const r = cli(['--state', state, 'run', 'selftest', '--config', 'small.yaml']);
    expect(r.status).toBe(0);
    const runs = readdirSync(join(state, 'runs'));
    expect(runs).toHaveLength(1);
    const manifest = JSON.parse(
      readFileSync(join(state, 'runs', runs[0]!, 'manifest.json'), 'utf8'),
    );
    expect(manifest).toMatchObject({
      pipeline: 'selftest',
      stageVersions: { 'selftest.items': 1, 'selftest.summary': 1 },
    });
    expect(manifest.configHash).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.packages['better-sqlite3']).toMatch(/^12\./);
    const kinds = lines(join(state, 'runs', runs[0]!, 'events.jsonl')).map(
      (l) => JSON.parse(l).kind,
    );
    expect(kinds[0]).toBe('run-start');
    expect(kinds.at(-1)).toBe('run-end');
    expect(kinds.filter((k) => k === 'item-end')).toHaveLength(6);
    const report = cli(['--state', state, 'report']);
    expect(report.stdout).toMatch(/\| selftest\.items \| 5 \| 2 \| 3 \|/);
    expect(report.stdout).toMatch(/selftest_skip 3/);
    const show = cli(['--state', state, 'show', 'selftest.items', 'item-2']);
    expect(JSON.parse(show.stdout)).toMatchObject({
      state: 'skipped',
      skipReason: 'selftest_skip',
    });
    // why it was skipped comes right after the state, before the (long) input
    expect(Object.keys(JSON.parse(show.stdout)).slice(0, 4)).toEqual([
      'stage',
      'key',
      'state',
      'skipReason',
    ]);
    expect(cli(['--state', state, 'show', 'selftest.items', 'nope']).status).toBe(2);
    const unknown = cli(['--state', state, 'show', 'no.such', 'x']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(
      /no stage "no\.such" .*stages with items: selftest\.items, selftest\.summary/,
    );
    const skipped = cli(['--state', state, 'items', 'selftest.items', '--state-filter', 'skipped']);
    expect(skipped.stdout.trim().split('\n')).toEqual([
      'item-0\tskipped\tselftest_skip',
      'item-2\tskipped\tselftest_skip',
      'item-4\tskipped\tselftest_skip',
    ]);
    expect(
      cli(['--state', state, 'items', 'selftest.items', '--limit', '2']).stdout.trim().split('\n'),
    ).toHaveLength(2);
  });
});
