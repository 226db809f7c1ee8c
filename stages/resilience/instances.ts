/**
 * `resilience.instances`: writes the instances as JSON Lines for the release stage, plus the
 * construction summary (the funnel per sub-benchmark: rows, rejected rows, generated, correct,
 * wrong kept, prompt_truncated, budget_exhausted, prompt_too_long, unparsed, instances).
 *
 * Files, under `<state>/resilience/instances/`:
 * - `instances.jsonl`: every instance (published fields + provenance, instance.ts), ordered by
 *   source, subset and row;
 * - `main.jsonl`, `auxiliary.jsonl`, `extra.jsonl`: the same split by role (main = the seven
 *   discrete-choice ot-lite subsets, auxiliary = TeleMath, extra = further sources);
 * - `construction.json`: the summary, including the generator profile; the release card states
 *   which profile made the snapshot.
 * Each file is written to a temporary name and renamed.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineStage, type StoreReader } from '../../pipeline/stage.js';
import { hashJson, sha256 } from '../../pipeline/hash.js';
import { resilienceSettings, type HasResilience } from './config.js';
import type { ResilienceInstance } from './instance.js';
import type { GenerateInput } from './generate.js';
import { resilienceLoad } from './load.js';
import { resilienceTruncate } from './truncate.js';
import { resilienceGenerate } from './generate.js';

export interface InstancesOutput {
  dir: string;
  files: Record<string, { path: string; rows: number; sha256: string }>;
  summary: ConstructionSummary;
}

export interface FunnelRow {
  rows: number;
  rejected: number;
  generated: number;
  correct: number;
  wrong: number;
  instances: number;
  skipped: Record<string, number>;
}

export interface ConstructionSummary {
  profile: string | null;
  generator: string | null;
  by_sub_benchmark: Record<string, FunnelRow>;
  totals: FunnelRow;
  /** Prompts refused or flagged so they were not scored (issue 6, "no silent truncation"). */
  truncation: { prompt_too_long: number; prompt_truncated: number; budget_exhausted: number };
}

const emptyRow = (): FunnelRow => ({
  rows: 0,
  rejected: 0,
  generated: 0,
  correct: 0,
  wrong: 0,
  instances: 0,
  skipped: {},
});

/**
 * The funnel from the store (any state of the generation and truncation items). Pure over the store.
 */
export function constructionSummary(store: StoreReader): ConstructionSummary {
  const by: Record<string, FunnelRow> = {};
  const subOf = new Map<string, string>();
  const row = (sb: string): FunnelRow => (by[sb] ??= emptyRow());
  for (const o of store.outputs(resilienceLoad)) {
    const r = row(o.output.sub_benchmark);
    r.rows += o.output.rows_read;
    r.rejected += o.output.rejected.length;
    for (const it of o.output.items) subOf.set(it.sample_id, it.sub_benchmark);
  }
  let profile: string | null = null;
  let generator: string | null = null;
  for (const rec of store.items(resilienceGenerate)) {
    const sb = subOf.get(rec.key);
    if (!sb) continue;
    const input = rec.input as GenerateInput;
    profile ??= input.profile;
    generator ??= input.request.model;
    const r = row(sb);
    if (rec.state === 'done') {
      r.generated++;
      if ((rec.output as { correct: boolean }).correct) r.correct++;
      else r.wrong++;
    } else if (rec.state === 'skipped' && rec.skipReason) {
      r.skipped[rec.skipReason] = (r.skipped[rec.skipReason] ?? 0) + 1;
    }
  }
  for (const rec of store.items(resilienceTruncate)) {
    const sb = subOf.get(rec.key);
    if (!sb) continue;
    const r = row(sb);
    if (rec.state === 'done') r.instances++;
    else if (rec.state === 'skipped' && rec.skipReason && rec.skipReason !== 'generator_correct') {
      r.skipped[rec.skipReason] = (r.skipped[rec.skipReason] ?? 0) + 1;
    }
  }
  const totals = emptyRow();
  for (const r of Object.values(by)) {
    for (const k of ['rows', 'rejected', 'generated', 'correct', 'wrong', 'instances'] as const)
      totals[k] += r[k];
    for (const [k, v] of Object.entries(r.skipped))
      totals.skipped[k] = (totals.skipped[k] ?? 0) + v;
  }
  return {
    profile,
    generator,
    by_sub_benchmark: Object.fromEntries(Object.entries(by).sort(([a], [b]) => a.localeCompare(b))),
    totals,
    truncation: {
      prompt_too_long: totals.skipped.prompt_too_long ?? 0,
      prompt_truncated: totals.skipped.prompt_truncated ?? 0,
      budget_exhausted: totals.skipped.budget_exhausted ?? 0,
    },
  };
}

/** Source, then subset, then the numeric row (`teleqna:2` before `teleqna:10`). */
function byRow(a: ResilienceInstance, b: ResilienceInstance): number {
  const k = (i: ResilienceInstance) => `${i.source}\u0000${i.subset}`;
  const ka = k(a);
  const kb = k(b);
  return ka < kb ? -1 : ka > kb ? 1 : a.row - b.row;
}

function writeAtomic(path: string, text: string): string {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
  return sha256(text);
}

export const resilienceInstances = defineStage<
  { outputs: string; count: number; summary: string },
  InstancesOutput,
  HasResilience
>({
  name: 'resilience.instances',
  version: 1,
  needs: ['resilience.truncate'],
  description:
    'Writes the instances (published schema + provenance) as JSON Lines and the construction summary.',
  *plan(ctx) {
    resilienceSettings(ctx.config);
    const list = [...ctx.store.outputs(resilienceTruncate)].map((o) => [o.key, hashJson(o.output)]);
    yield {
      key: 'instances',
      input: {
        outputs: hashJson(list),
        count: list.length,
        summary: hashJson(constructionSummary(ctx.store)),
      },
    };
  },
  async run(_item, ctx) {
    const dir = join(ctx.stateDir, 'resilience', 'instances');
    mkdirSync(dir, { recursive: true });
    const all = [...ctx.store.outputs(resilienceTruncate)].map((o) => o.output).sort(byRow);
    const files: InstancesOutput['files'] = {};
    const write = (name: string, rows: ResilienceInstance[]) => {
      const path = join(dir, `${name}.jsonl`);
      const text = rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : '');
      files[name] = { path, rows: rows.length, sha256: writeAtomic(path, text) };
    };
    write('instances', all);
    for (const role of ['main', 'auxiliary', 'extra'] as const)
      write(
        role,
        all.filter((i) => i.role === role),
      );
    const summary = constructionSummary(ctx.store);
    const sPath = join(dir, 'construction.json');
    files.construction = {
      path: sPath,
      rows: 1,
      sha256: writeAtomic(sPath, `${JSON.stringify(summary, null, 2)}\n`),
    };
    ctx.log(`wrote ${all.length} instances to ${dir}`, { dir, count: all.length });
    return { dir, files, summary };
  },
});
