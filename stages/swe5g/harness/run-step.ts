/**
 * The one step runner of the harness: runs one step of a {@link TestSpec} through an
 * {@link Executor} (fresh sandbox per container), with the spec's limits, stores each run's log
 * as a blob ({@link formatStepLog}), and parses it with the spec's parser, each fresh run checked
 * against its exit code ({@link parseRuns}). Validation, grading, `verify` and the release check
 * run their tests only through {@link runStep}.
 */
import type { Executor, StepResult } from '../../../pipeline/providers/docker/executor.js';
import type { Overlay } from '../../../pipeline/providers/docker/overlay.js';
import type { ParsedRun } from './parsers.js';
import { parseRuns, type RunParse } from './parse.js';
import { stepCommand, type TestSpec } from './spec.js';
import { formatStepLog, storedRun, type StoredRun } from './step-log.js';

/** Where a step runs and where its logs go. */
export interface StepDeps {
  executor: Executor;
  /** The instance image (docker, swarm) and its clean tree at base_commit on the host (local). */
  instance: { image: string; sourceDir: string };
  /**
   * Stores one run's log text; returns its digest. `name` is the step name for the first run and
   * `<step>_run<i>` for later containers of a `fresh: 'container'` step.
   */
  saveLog: (name: string, text: string) => string;
  signal?: AbortSignal;
  log?: (message: string) => void;
}

/** One step to run: its name, the files written over the instance, its fresh runs. */
export interface StepRun {
  name: string;
  files: Overlay;
  /** Fresh runs of the tests (>= 1; default 1): processes or containers per `spec.fresh`. */
  runs?: number;
  /** Extra `# ` lines for the log summary (files put back, the patch method). */
  notes?: readonly string[];
}

/** What a step produced. */
export interface StepOutcome {
  name: string;
  /** The runs combined (flaky: passed in one fresh run, failed in another). */
  parsed: ParsedRun;
  /** Each fresh run's parse (processes of a Go step, or containers). */
  each: RunParse[];
  /** Executor results, one per container. */
  results: StepResult[];
  /** The stored runs (what the logs hold). */
  stored: StoredRun[];
  /** Log digests by name (`<step>`, `<step>_run2`, ...). */
  logs: Record<string, string>;
  /** Wall time of the step's containers, seconds. */
  seconds: number;
  /**
   * A container was killed at the time limit, or a run of a multi-process step at its share of
   * it (`RunParse.killed`).
   */
  timedOut: boolean;
  /** The first disagreement of a run with its exit code ('' when none): `ambiguous_log`. */
  ambiguous: string;
}

/**
 * Whether one container's run of a step timed out: killed at its limit, or its log says the test
 * tool's own timeout ended it (Go's `panic: test timed out`). A log its parser cannot read is left
 * to the step's parse (which throws the same error after the loop).
 */
function timedOutRun(spec: TestSpec, run: StoredRun): boolean {
  if (run.timedOut) return true;
  try {
    return parseRuns(spec, [run], 1).parsed.timed_out;
  } catch {
    return false;
  }
}

/**
 * Runs one step. Its fresh runs stop at the first that times out (issue 31): for `fresh:
 * 'container'` no further container starts; for `fresh: 'process'` the step script stops itself
 * (spec.ts `stepCommand`, each run's share of the container's limit). The step is then timed out
 * (`timedOut`, or `parsed.timed_out` for the tool's own timeout) with the runs it made.
 * @returns the {@link StepOutcome}; a timeout or a disagreeing log is reported in it, not thrown
 *   (validation turns them into skips, grading into a verdict)
 * @throws TelebenchError from the executor (infra), SkipItem `ambiguous_log` from a parser that
 *   cannot read its file at all
 */
export async function runStep(spec: TestSpec, step: StepRun, deps: StepDeps): Promise<StepOutcome> {
  const runs = Math.max(1, Math.floor(step.runs ?? 1));
  const containers = spec.fresh === 'container' ? runs : 1;
  const command = stepCommand(spec, spec.fresh === 'process' ? runs : 1);
  const limits =
    spec.fresh === 'process'
      ? { ...spec.limits, timeoutMs: spec.limits.timeoutMs * runs }
      : spec.limits;
  const results: StepResult[] = [];
  const stored: StoredRun[] = [];
  const logs: Record<string, string> = {};
  for (let i = 0; i < containers; i++) {
    const name = i === 0 ? step.name : `${step.name}_run${i + 1}`;
    const result = await deps.executor.run(
      {
        step: name,
        instance: {
          image: deps.instance.image,
          workdir: spec.workdir,
          sourceDir: deps.instance.sourceDir,
        },
        files: step.files,
        command,
        collect: spec.collect,
        limits,
      },
      deps.signal,
    );
    const run = storedRun(result, command);
    results.push(result);
    stored.push(run);
    logs[name] = deps.saveLog(name, formatStepLog(run, step.notes));
    deps.log?.(`${name}: exit ${result.exitCode} in ${(result.durationMs / 1000).toFixed(1)} s`);
    // a run that timed out ends the step: its verdict is the timeout whatever the others say
    if (i + 1 < containers && timedOutRun(spec, run)) break;
  }
  const { parsed, ambiguous, each } = parseRuns(spec, stored, runs);
  return {
    name: step.name,
    parsed,
    each,
    results,
    stored,
    logs,
    seconds: results.reduce((s, r) => s + r.durationMs, 0) / 1000,
    timedOut: results.some((r) => r.timedOut) || each.some((e) => e.killed),
    ambiguous,
  };
}
