/**
 * `telebench status` and `telebench report run`: per-stage counts by state, skip reasons (the
 * funnel) and error codes, as a Markdown table or JSON.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '../store/store.js';
import type { StageRegistry } from '../runner.js';
import type { NodeTasks } from '../providers/docker/swarm.js';
import { runLockHolder } from '../state.js';

export interface StageStatus {
  stage: string;
  version: number | null;
  total: number;
  byState: Record<string, number>;
  bySkipReason: Record<string, number>;
  byErrorCode: Record<string, number>;
}

/**
 * Status of every stage with rows in the store, in the order their items were first planned
 * (pipeline order), or of `only` in its order.
 */
export function collectStatus(
  store: Store,
  registry: StageRegistry,
  only?: Set<string>,
): StageStatus[] {
  // A Set keeps insertion order: callers pass stages in pipeline order.
  const names = only ? [...only] : store.stagesInPlanOrder();
  return names.map((stage) => ({
    stage,
    version: registry.get(stage)?.version ?? null,
    ...store.counts(stage),
  }));
}

const STATES = ['done', 'skipped', 'failed', 'pending', 'running', 'orphaned'] as const;

/** Markdown (or JSON with `json`) status of the stages. */
export function statusReport(
  store: Store,
  registry: StageRegistry,
  json: boolean,
  only?: Set<string>,
  run?: { pid?: number },
): string {
  const rows = collectStatus(store, registry, only);
  const running = rows.reduce((n, r) => n + (r.byState.running ?? 0), 0);
  const orphaned = rows.reduce((n, r) => n + (r.byState.orphaned ?? 0), 0);
  const notes: string[] = [];
  if (running > 0 && run) {
    notes.push(
      run.pid !== undefined
        ? `running: ${running} items are being worked on now by the run with pid ${run.pid}.`
        : `running: ${running} items were in flight when their run ended without finishing (killed, e.g. kill -9 or a lost machine); no telebench process holds this state folder now. Nothing is lost: the next \`run\` starts them again.`,
    );
  }
  if (orphaned > 0) {
    notes.push(
      `orphaned: ${orphaned} items that an earlier run planned but the latest full plan no longer lists (the input or the configuration changed, e.g. a subset removed); kept with their results for reference, never deleted, not run again unless planned again.`,
    );
  }
  if (json)
    return `${JSON.stringify({ stages: rows, run_in_progress: run?.pid !== undefined, ...(run?.pid !== undefined ? { pid: run.pid } : {}), notes }, null, 2)}\n`;
  if (rows.length === 0) return 'No items yet: run `telebench run <pipeline>` first.\n';
  const out = [
    '| stage | total | ' + STATES.join(' | ') + ' |',
    '|---|---:|' + STATES.map(() => '---:').join('|') + '|',
  ];
  for (const r of rows)
    out.push(`| ${r.stage} | ${r.total} | ${STATES.map((s) => r.byState[s] ?? 0).join(' | ')} |`);
  const reasons = rows.filter((r) => Object.keys(r.bySkipReason).length > 0);
  if (reasons.length > 0) {
    out.push('', '**Skip reasons**', '');
    for (const r of reasons) {
      out.push(
        `- ${r.stage}: ${Object.entries(r.bySkipReason)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      );
    }
  }
  const errors = rows.filter((r) => Object.keys(r.byErrorCode).length > 0);
  if (errors.length > 0) {
    out.push('', '**Failures by error code** (rerun with `--retry-failed`)', '');
    for (const r of errors) {
      out.push(
        `- ${r.stage}: ${Object.entries(r.byErrorCode)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      );
    }
  }
  if (notes.length > 0) out.push('', ...notes.map((n) => `- ${n}`));
  return `${out.join('\n')}\n`;
}

/**
 * `telebench status` with executor swarm: telebench's running step tasks per Swarm node and the
 * cluster task budget (steps of the configured limits that fit the ready, active nodes at once).
 * @returns a Markdown table, or one JSON line `{"swarm": ...}` when `json`
 */
export function swarmStatusReport(
  s: { nodes: NodeTasks[]; budget: number },
  json: boolean,
): string {
  if (json) return `${JSON.stringify({ swarm: s })}\n`;
  const out = [
    '',
    `**Swarm tasks per node** (cluster task budget ${s.budget}; set swe5g.environments.swarm.task_budget to it)`,
    '',
    '| node | state | availability | CPUs | memory GiB | telebench tasks | budget |',
    '|---|---|---|---:|---:|---:|---:|',
    ...s.nodes.map(
      (n) =>
        `| ${n.hostname} (${n.node.slice(0, 12)}) | ${n.state} | ${n.availability} | ${n.cpus} | ${(n.memoryBytes / 2 ** 30).toFixed(1)} | ${n.tasks} | ${n.budget} |`,
    ),
  ];
  return `${out.join('\n')}\n`;
}

/**
 * Stages of a run that did not start, from its event log (`runs/<run_id>/events.jsonl`):
 * `{stage: "stopped at preflight: <message> -> <hint>"}` or `{stage: "not started: <because>"}`.
 * A missing or partly written log (a killed run) gives what could be read.
 */
export function notStarted(eventsFile: string): Record<string, string> {
  return Object.fromEntries([...readNotStarted(eventsFile)].map(([k, v]) => [k, v.text]));
}

/** {@link notStarted} with, for a stage behind a preflight stop, the stage that stopped (`root`). */
function readNotStarted(eventsFile: string): Map<string, { text: string; root?: string }> {
  const out = new Map<string, { text: string; root?: string }>();
  if (!existsSync(eventsFile)) return out;
  for (const line of readFileSync(eventsFile, 'utf8').split('\n')) {
    if (!line.includes('"stage-preflight-failed"') && !line.includes('"stage-blocked"')) continue;
    let e: {
      kind?: string;
      stage?: string;
      message?: string;
      hint?: string;
      because?: string;
      root?: string;
    };
    try {
      e = JSON.parse(line) as typeof e;
    } catch {
      continue; // the last line of a killed run can be cut; the others still count
    }
    if (!e.stage) continue;
    if (e.kind === 'stage-preflight-failed')
      out.set(e.stage, { text: `stopped at preflight: ${e.message} -> ${e.hint}` });
    else if (e.kind === 'stage-blocked')
      out.set(e.stage, {
        text: `not started: ${e.because}`,
        ...(typeof e.root === 'string' ? { root: e.root } : {}),
      });
  }
  return out;
}

/**
 * Markdown summary of the last run: its manifest, the status of its stages in pipeline order, and
 * why stages did not start (from the run's event log under `stateDir`).
 */
export function runReport(store: Store, registry: StageRegistry, stateDir?: string): string {
  const run = store.lastRun();
  if (!run) return 'No run recorded in this state directory.\n';
  const m = run.manifest as {
    stageVersions?: Record<string, number>;
    gitSha?: string;
    configFile?: string;
    configHash?: string;
  };
  const stages = new Set(Object.keys(m.stageVersions ?? {}));
  return [
    `# Run ${run.runId}`,
    '',
    `- pipeline: ${run.pipeline}`,
    `- started: ${run.startedAt}; finished: ${run.finishedAt ?? unfinished(stateDir)}`,
    `- exit code: ${run.exitCode ?? 'none'}`,
    `- git: ${m.gitSha ?? 'unknown'}; config: ${m.configFile ?? '?'} (sha256 ${m.configHash?.slice(0, 12) ?? '?'})`,
    '',
    statusReport(store, registry, false, stages),
    ...notStartedLines(stateDir ? join(stateDir, 'runs', run.runId, 'events.jsonl') : undefined),
  ].join('\n');
}

/** Why the last run has no end: still running (the pid holding the lock) or stopped by a kill. */
function unfinished(stateDir: string | undefined): string {
  if (!stateDir) return 'not finished (killed or still running)';
  const pid = runLockHolder(stateDir);
  return pid !== undefined
    ? `not finished: still running (pid ${pid})`
    : 'not finished: killed (no process holds the state lock; `run` with the same arguments resumes it)';
}

/**
 * For `telebench status`: the stages of the last run that did not start (stopped at preflight,
 * or behind one that did), from its event log under `stateDir`; they have no items, so the status
 * table alone would not show them. @returns Markdown starting with a blank line, or ''
 */
export function lastRunNotStarted(store: Store, stateDir: string): string {
  const run = store.lastRun();
  if (!run) return '';
  const lines = notStartedLines(join(stateDir, 'runs', run.runId, 'events.jsonl'));
  if (!lines.length) return '';
  lines[0] = `**Stages of the last run (${run.runId}) that did not run**`;
  return `\n${lines.join('\n')}`;
}

function notStartedLines(eventsFile: string | undefined): string[] {
  const why = eventsFile ? readNotStarted(eventsFile) : new Map<string, { text: string }>();
  // the stages behind a preflight stop go on one line under it, not a line each
  const behind = new Map<string, string[]>();
  for (const [stage, e] of why) {
    const root = (e as { root?: string }).root;
    if (root !== undefined && why.get(root)?.text.startsWith('stopped at preflight'))
      behind.set(root, [...(behind.get(root) ?? []), stage]);
  }
  const folded = new Set([...behind.values()].flat());
  // the hint on its own line of the list item: message and hint together ran to 1,000 characters
  const rows = [...why]
    .filter(([stage]) => !folded.has(stage))
    .map(
      ([stage, { text }]) =>
        `- ${stage}: ${text.replace(/^(stopped at preflight: .*?) -> /s, '$1\n  -> ')}${
          behind.has(stage) ? `\n  - not started behind it: ${behind.get(stage)!.join(', ')}` : ''
        }`,
    );
  return rows.length > 0 ? ['**Stages that did not run**', '', ...rows, ''] : [];
}
