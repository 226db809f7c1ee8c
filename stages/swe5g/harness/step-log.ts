/**
 * The stored log of one test run: what the executor returned (exit code, timeout, stdout, stderr,
 * the collected result files) in one text blob that a person reads and that the harness reads
 * back, so a step is graded again from its stored log without any container (SWE-bench grades
 * its stored `test_output.txt` the same way).
 *
 * Format: a `# ...` summary line, then sections, each opened by a line `--<boundary> <name>`;
 * the boundary is derived from the content's SHA-256 and is absent from every section, so output
 * of the code under test can never open a section. Sections: `meta` (JSON: step, executor,
 * exitCode, timedOut, durationMs, absent collected files), `command`, `stdout`, `stderr`, and
 * `file <path>` per collected file.
 */
import { createHash } from 'node:crypto';
import { TelebenchError } from '../../../pipeline/errors.js';
import type { StepResult } from '../../../pipeline/providers/docker/executor.js';

/** One run as stored: the executor's result plus the command it ran. */
export interface StoredRun {
  step: string;
  executor: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  command: string;
  stdout: string;
  stderr: string;
  /** Collected files; undefined for a file that was not there. */
  collected: Record<string, string | undefined>;
}

const HEAD = '# telebench step log v2';

/** A {@link StoredRun} of an executor result. */
export function storedRun(result: StepResult, command: string): StoredRun {
  return {
    step: result.step,
    executor: result.executor,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
    command,
    stdout: result.stdout,
    stderr: result.stderr,
    collected: { ...result.collected },
  };
}

/**
 * The log text of a run.
 * @param notes extra `# ` lines of the summary (what was put back, the patch method)
 */
export function formatStepLog(run: StoredRun, notes: readonly string[] = []): string {
  const files = Object.entries(run.collected);
  const bodies = [run.command, run.stdout, run.stderr, ...files.map(([, v]) => v ?? '')];
  const h = createHash('sha256');
  for (const b of bodies) h.update(b).update('\0');
  let boundary = `telebench-${h.digest('hex').slice(0, 24)}`;
  while (bodies.some((b) => b.includes(boundary))) boundary += 'x';
  const meta = {
    step: run.step,
    executor: run.executor,
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    durationMs: run.durationMs,
    absent: files.filter(([, v]) => v === undefined).map(([k]) => k),
  };
  const section = (name: string, body: string): string => `--${boundary} ${name}\n${body}\n`;
  return [
    `${HEAD} boundary=${boundary}\n`,
    `# step ${run.step} executor ${run.executor} exit ${run.exitCode} timed_out ${run.timedOut} ${run.durationMs} ms\n`,
    ...notes.map((n) => `# ${n.replaceAll('\n', ' ')}\n`),
    section('meta', JSON.stringify(meta)),
    section('command', run.command),
    section('stdout', run.stdout),
    section('stderr', run.stderr),
    ...files.filter(([, v]) => v !== undefined).map(([k, v]) => section(`file ${k}`, v!)),
  ].join('');
}

/**
 * Reads a log written by {@link formatStepLog} back into the run.
 * @throws TelebenchError `bad_step_log` (tier content) when the text is not such a log (a log of
 *   an older version, a truncated blob), naming what is missing
 */
export function readStepLog(text: string): StoredRun {
  const first = text.slice(0, text.indexOf('\n'));
  const m = /^# telebench step log v2 boundary=(\S+)$/.exec(first);
  if (!m)
    throw new TelebenchError(
      'bad_step_log',
      `not a telebench step log (v2): first line ${JSON.stringify(first.slice(0, 80))}`,
      { tier: 'content' },
    );
  const open = `--${m[1]} `;
  const sections = new Map<string, string>();
  let at = text.indexOf(`\n${open}`);
  while (at >= 0) {
    const nameEnd = text.indexOf('\n', at + 1);
    const name = text.slice(at + 1 + open.length, nameEnd);
    const next = text.indexOf(`\n${open}`, nameEnd);
    // the body ends before the newline that formatStepLog put after it
    const end = next >= 0 ? next : text.length - 1;
    sections.set(name, text.slice(nameEnd + 1, end));
    at = next;
  }
  const need = (k: string): string => {
    const v = sections.get(k);
    if (v === undefined)
      throw new TelebenchError('bad_step_log', `step log has no ${k} section (truncated?)`, {
        tier: 'content',
      });
    return v;
  };
  const meta = JSON.parse(need('meta')) as Omit<StoredRun, 'command' | 'stdout' | 'stderr'> & {
    absent: string[];
  };
  const collected: Record<string, string | undefined> = {};
  for (const [k, v] of sections) if (k.startsWith('file ')) collected[k.slice(5)] = v;
  for (const k of meta.absent) collected[k] = undefined;
  return {
    step: meta.step,
    executor: meta.executor,
    exitCode: meta.exitCode,
    timedOut: meta.timedOut,
    durationMs: meta.durationMs,
    command: need('command'),
    stdout: need('stdout'),
    stderr: need('stderr'),
    collected,
  };
}
