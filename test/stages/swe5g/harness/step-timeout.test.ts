/**
 * A step whose run times out stops repeating (issue 31: go-upf-101's `internal/forwarder` tests
 * block until `go test -timeout`, and with `test_repeats: 3` one validation took 35 min to end
 * as `timeout`). The generated step script run by /bin/sh on the host: it stops after a run that
 * timed out (the tool's marker, or the run's share of the limit) and keeps repeating after an
 * ordinary failing run; the parse reads a stopped step as a timeout, not as missing runs; a
 * `fresh: 'container'` step starts no container after one killed at its limit. Then real
 * `go test` runs of a tiny module on the host (LocalExecutor, the same script a container runs).
 */
import { describe, it, expect, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  RUN_MARK,
  RUN_STOP_MARK,
  stepCommand,
  testSpec,
  type TestSpec,
} from '../../../../stages/swe5g/harness/spec.js';
import { parseRuns, splitRuns } from '../../../../stages/swe5g/harness/parse.js';
import { runStep } from '../../../../stages/swe5g/harness/run-step.js';
import { gradeStoredLogs } from '../../../../stages/swe5g/harness/grading.js';
import { formatStepLog } from '../../../../stages/swe5g/harness/step-log.js';
import {
  LocalExecutor,
  type Executor,
  type StepResult,
  type StepSpec,
} from '../../../../pipeline/providers/docker/executor.js';

const root = mkdtempSync(join(tmpdir(), 'telebench-step-timeout-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Runs a step script with /bin/sh in a fresh folder: its stdout, exit code and seconds. */
function sh(script: string): { stdout: string; code: number | null; seconds: number } {
  const cwd = mkdtempSync(join(root, 'sh-'));
  const t0 = Date.now();
  const r = spawnSync('/bin/sh', ['-c', script], { cwd, encoding: 'utf8' });
  return { stdout: r.stdout, code: r.status, seconds: (Date.now() - t0) / 1000 };
}

const marks = (stdout: string) => stdout.split('\n').filter((l) => RUN_MARK.test(l));
const stops = (stdout: string) => stdout.split('\n').filter((l) => RUN_STOP_MARK.test(l));

/** A Go-like process step of `command` (share of the limit: `shareS` seconds). */
const goLike = (command: string, shareS = 60): Parameters<typeof stepCommand>[0] => ({
  command,
  fresh: 'process',
  parser: 'go-test-json',
  limits: { timeoutMs: shareS * 1000 },
});

/** One `go test -json` output event. */
const ev = (o: Record<string, string>) => JSON.stringify({ Package: 'example.org/m', ...o });

describe('the step script of a multi-process step', () => {
  it('keeps repeating after an ordinary failing run', () => {
    const r = sh(stepCommand(goLike(`echo ${ev({ Action: 'fail' })}; exit 1`), 3));
    expect(marks(r.stdout)).toEqual([
      'telebench-run 1 exit 1',
      'telebench-run 2 exit 1',
      'telebench-run 3 exit 1',
    ]);
    expect(stops(r.stdout)).toEqual([]);
    expect(r.code).toBe(1);
  });

  it("stops after a run that ends with the tool's own timeout marker (Go's panic)", () => {
    const panic = ev({
      Action: 'output',
      Test: 'TestHang',
      Output: 'panic: test timed out after 2s\n',
    });
    const r = sh(stepCommand(goLike(`printf '%s\\n' '${panic}'; exit 1`), 3));
    expect(marks(r.stdout)).toEqual(['telebench-run 1 exit 1']);
    expect(stops(r.stdout)).toEqual(['telebench-run 1 timed-out tool']);
    expect(r.stdout).toContain(panic); // the run's output is in the log, as before
    expect(r.code).toBe(1);
    // a test that prints the words elsewhere in a line is no marker (parsers.ts reads the same)
    const quoted = ev({ Action: 'output', Output: 'log: panic: test timed out after 2s\n' });
    expect(marks(sh(stepCommand(goLike(`echo '${quoted}'; exit 1`), 3)).stdout)).toHaveLength(3);
  });

  it('kills a run at its share of the limit and stops (exit 124)', () => {
    const r = sh(stepCommand(goLike('echo started; sleep 30', 1), 3));
    expect(marks(r.stdout)).toEqual(['telebench-run 1 exit 124']);
    expect(stops(r.stdout)).toEqual(['telebench-run 1 timed-out limit']);
    expect(r.stdout).toContain('started');
    expect(r.code).toBe(124);
    expect(r.seconds).toBeLessThan(15);
  });

  it('gives exactly the stdout and exit code of the script before issue 31 when no run times out', () => {
    // the step script as it was (spec.ts before issue 31), for the comparison
    const before = (command: string, n: number) =>
      `rc=0; i=0; while [ $i -lt ${n} ]; do i=$((i+1)); ( ${command}\n); c=$?; echo "telebench-run $i exit $c"; [ $c -eq 0 ] || rc=$c; done; exit $rc`;
    // runs that pass, fail (exit 2) and pass again, with stderr and an unterminated last line
    const cmd = `n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; echo "run $n"; echo "err $n" >&2; printf 'tail'; [ $n -ne 2 ]`;
    const now = sh(stepCommand(goLike(cmd), 3));
    const then = sh(before(cmd, 3));
    expect(now.stdout).toBe(then.stdout);
    expect(now.code).toBe(then.code);
    expect(now.code).toBe(1);
    expect(now.stdout.match(/telebench-run \d exit \d/g)).toHaveLength(3);
    // one run, and a container step: the spec's own command, untouched
    expect(stepCommand(goLike(cmd), 1)).toBe(cmd);
    expect(stepCommand({ ...goLike(cmd), fresh: 'container' }, 3)).toBe(cmd);
  });
});

describe('the parse of a stopped step', () => {
  const spec = testSpec({
    recipe: 'go',
    dirs: ['.'],
    moduleDir: '',
    settings: { limits: { timeout_s: 60, memory_mib: 512, cpus: 1, pids: 64 } },
  });
  const run = (stdout: string, exitCode: number) => ({
    step: 'parent_p2p',
    executor: 'local' as const,
    exitCode,
    timedOut: false,
    durationMs: 1,
    command: 'x',
    stdout,
    stderr: '',
    collected: {},
  });
  const pass = [ev({ Action: 'run', Test: 'TestA' }), ev({ Action: 'pass', Test: 'TestA' })];

  it('a run killed at its share is a timeout with no missing-run ambiguity', () => {
    const stdout = [
      ...pass,
      ev({ Action: 'pass' }),
      'telebench-run 1 exit 0',
      ev({ Action: 'run', Test: 'TestA' }),
      'telebench-run 2 exit 124',
      'telebench-run 2 timed-out limit',
      '',
    ].join('\n');
    expect(splitRuns(stdout, 124).map((p) => p.stopped)).toEqual([undefined, 'limit']);
    const { each, ambiguous } = parseRuns(spec, [run(stdout, 124)], 3);
    expect(ambiguous).toBe('');
    expect(each.map((e) => e.killed)).toEqual([undefined, true]);
    // graded again from the stored log alone: timed out, not resolved
    const tests = { FAIL_TO_PASS: ['example.org/m::TestA'], PASS_TO_PASS: [] };
    const g = gradeStoredLogs(spec, [formatStepLog(run(stdout, 124))], tests, 3);
    expect(g).toMatchObject({ timed_out: true, resolved: false, ambiguous: '' });
  });

  it('a run stopped by the tool marker is timed_out; a short log without a stop is ambiguous', () => {
    const panic = ev({
      Action: 'output',
      Test: 'TestA',
      Output: 'panic: test timed out after 1s\n',
    });
    const stopped = [
      ev({ Action: 'run', Test: 'TestA' }),
      panic,
      ev({ Action: 'fail', Test: 'TestA' }),
      ev({ Action: 'fail' }),
      'telebench-run 1 exit 1',
      'telebench-run 1 timed-out tool',
    ].join('\n');
    const p = parseRuns(spec, [run(stopped, 1)], 3);
    expect(p.ambiguous).toBe('');
    expect(p.parsed.timed_out).toBe(true);
    const short = [...pass, ev({ Action: 'pass' }), 'telebench-run 1 exit 0'].join('\n');
    expect(parseRuns(spec, [run(short, 0)], 3).ambiguous).toMatch(/1 of 3 fresh runs/);
  });
});

describe('a fresh-container step', () => {
  it('starts no container after one killed at its limit; an ordinary failure repeats', async () => {
    const spec: TestSpec = {
      ...testSpec({
        recipe: 'python',
        dirs: 'all',
        moduleDir: '',
        settings: { limits: { timeout_s: 60, memory_mib: 512, cpus: 1, pids: 64 } },
      }),
    };
    const stepsRun = async (timedOut: boolean) => {
      const seen: string[] = [];
      const executor: Executor = {
        kind: 'local',
        run: async (s: StepSpec): Promise<StepResult> => {
          seen.push(s.step);
          return {
            executor: 'local',
            step: s.step,
            exitCode: timedOut ? null : 1,
            timedOut,
            stdout: '',
            stderr: '',
            collected: {},
            durationMs: 5,
          };
        },
      };
      const out = await runStep(
        spec,
        { name: 'parent_p2p', files: {}, runs: 3 },
        { executor, instance: { image: 'x', sourceDir: root }, saveLog: (n) => n },
      );
      return { seen, out };
    };
    const killed = await stepsRun(true);
    expect(killed.seen).toEqual(['parent_p2p']);
    expect(killed.out.timedOut).toBe(true);
    const failing = await stepsRun(false);
    expect(failing.seen).toEqual(['parent_p2p', 'parent_p2p_run2', 'parent_p2p_run3']);
    expect(failing.out.timedOut).toBe(false);
  });
});

describe('real go test runs on the host (LocalExecutor, runs = 3)', () => {
  /** A Go module with one test file; its step of 3 runs at `timeout_s`. */
  async function goStep(testGo: string, timeoutS: number) {
    const dir = mkdtempSync(join(root, 'go-'));
    writeFileSync(join(dir, 'go.mod'), 'module example.org/hang\n\ngo 1.21\n');
    writeFileSync(join(dir, 'hang_test.go'), testGo);
    const spec = testSpec({
      recipe: 'go',
      dirs: ['.'],
      moduleDir: '',
      settings: { limits: { timeout_s: timeoutS, memory_mib: 512, cpus: 1, pids: 256 } },
    });
    const logs: string[] = [];
    const t0 = Date.now();
    const out = await runStep(
      spec,
      { name: 'parent_p2p', files: {}, runs: 3 },
      {
        executor: new LocalExecutor(),
        instance: { image: '', sourceDir: dir },
        saveLog: (_n, text) => (logs.push(text), String(logs.length)),
      },
    );
    return { out, seconds: (Date.now() - t0) / 1000, stdout: out.stored[0]!.stdout };
  }

  it('a test that sleeps past -timeout: one run, the step ends timed out', async () => {
    const { out, seconds, stdout } = await goStep(
      `package hang\n\nimport (\n\t"testing"\n\t"time"\n)\n\nfunc TestHang(t *testing.T) { time.Sleep(60 * time.Second) }\n`,
      2,
    );
    expect(marks(stdout)).toHaveLength(1);
    expect(stops(stdout)).toEqual(['telebench-run 1 timed-out tool']);
    expect(out.each).toHaveLength(1);
    expect(out.parsed.timed_out).toBe(true);
    expect(out.ambiguous).toBe('');
    // one run of ~2 s plus the build, not three (and far from the 3 x 17 s container limit)
    expect(seconds).toBeLessThan(40);
  });

  it('a TestMain that blocks before the tests (no Go timeout): killed at its share, one run', async () => {
    const { out, seconds, stdout } = await goStep(
      `package hang\n\nimport (\n\t"os"\n\t"testing"\n\t"time"\n)\n\nfunc TestMain(m *testing.M) { time.Sleep(120 * time.Second); os.Exit(m.Run()) }\n\nfunc TestA(t *testing.T) {}\n`,
      1,
    );
    expect(stops(stdout)).toEqual(['telebench-run 1 timed-out limit']);
    expect(out.timedOut).toBe(true);
    expect(out.results[0]!.timedOut).toBe(false); // the run's share, not the container's limit
    expect(seconds).toBeGreaterThanOrEqual(16);
    expect(seconds).toBeLessThan(45);
  });

  it('an ordinary failing test: all three runs', async () => {
    const { out, stdout } = await goStep(
      `package hang\n\nimport "testing"\n\nfunc TestFail(t *testing.T) { t.Fatal("no") }\n`,
      30,
    );
    expect(marks(stdout)).toEqual([
      'telebench-run 1 exit 1',
      'telebench-run 2 exit 1',
      'telebench-run 3 exit 1',
    ]);
    expect(out.each).toHaveLength(3);
    expect(out.timedOut).toBe(false);
    expect(out.parsed.timed_out).toBe(false);
    expect(out.parsed.tests).toEqual({ 'example.org/hang::TestFail': 'fail' });
  });
});
