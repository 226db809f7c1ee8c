/**
 * `telebench status` and `telebench report run`: per-stage counts by state, skip reasons (the
 * funnel) and error codes, as a Markdown table or JSON.
 */
import type { Store } from '../store/store.js';
import type { StageRegistry } from '../runner.js';

export interface StageStatus {
  stage: string;
  version: number | null;
  total: number;
  byState: Record<string, number>;
  bySkipReason: Record<string, number>;
  byErrorCode: Record<string, number>;
}

/** Status of every stage with rows in the store (or of `only`), in name order. */
export function collectStatus(
  store: Store,
  registry: StageRegistry,
  only?: Set<string>,
): StageStatus[] {
  const names = new Set([...store.stages(), ...(only ?? [])]);
  return [...names]
    .filter((n) => !only || only.has(n))
    .sort()
    .map((stage) => ({
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
): string {
  const rows = collectStatus(store, registry, only);
  if (json) return `${JSON.stringify({ stages: rows }, null, 2)}\n`;
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
  return `${out.join('\n')}\n`;
}

/** Markdown summary of the last run: its manifest and the status of its stages. */
export function runReport(store: Store, registry: StageRegistry): string {
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
    `- started: ${run.startedAt}; finished: ${run.finishedAt ?? 'not finished (killed or still running)'}`,
    `- exit code: ${run.exitCode ?? 'none'}`,
    `- git: ${m.gitSha ?? 'unknown'}; config: ${m.configFile ?? '?'} (sha256 ${m.configHash?.slice(0, 12) ?? '?'})`,
    '',
    statusReport(store, registry, false, stages),
  ].join('\n');
}
