/**
 * TeleResilienceBench as a dataset entry (`stages/release/entry.ts`): its rows are the instances
 * `resilience.instances` wrote (its JSON Lines file, checked with the construction's schema),
 * mapped by {@link resilienceRowOf}; rows of the scripted test server are refused unless
 * `release.allow_scripted_output` is set. No verifier, no images. Refreshed by its sources
 * (stages/resilience/refresh.ts). Registered in `stages/index.ts`.
 */
import { readFileSync } from 'node:fs';
import { sha256 } from '../../pipeline/hash.js';
import { TelebenchError } from '../../pipeline/errors.js';
import type { StageOutput } from '../../pipeline/stage.js';
import { MAIN_SUBSETS, resilienceDataset, type ResilienceRow } from '../../datasets/index.js';
import { subsetLicense } from '../../datasets/licenses.js';
import { defineDatasetEntry, type CollectedRows } from '../release/entry.js';
import { releaseSettings } from '../release/config.js';
import { resilienceInstanceSchema, type ResilienceInstance } from './instance.js';
import { resilienceInstances, type InstancesOutput } from './instances.js';
import { resilienceLoad } from './load.js';
import type { SubsetLoadOutput } from './types.js';
import { resilienceRefresh } from './refresh.js';

/** Suffix of the server version the scripted test server (test/servers/llm-server.ts) reports. */
export const SCRIPTED_MARK = 'telebench-scripted';

/**
 * Instance of the construction stage -> TeleResilienceBench row: the one mapping. The published
 * fields, option indices, difficulty, source and role are the instance's own (typed by both
 * schemas: a field whose type differs fails to compile); the licence comes from the source table,
 * the profile from the generator, and every other field of the instance goes under `provenance`.
 */
export function resilienceRowOf(instance: ResilienceInstance): ResilienceRow {
  const {
    sample_id,
    sub_benchmark,
    question,
    choices,
    correct_answer,
    incorrect_answer,
    half_reasoning_trace,
    role,
    correct_index,
    incorrect_index,
    difficulty,
    source,
    ...provenance
  } = instance;
  const published: Omit<ResilienceRow, 'choices' | 'license' | 'profile' | 'provenance'> = {
    sample_id,
    sub_benchmark,
    question,
    correct_answer,
    incorrect_answer,
    half_reasoning_trace,
    role,
    correct_index,
    incorrect_index,
    difficulty,
    source,
  };
  return {
    ...published,
    choices: choices ?? null,
    license: subsetLicense(source, sub_benchmark).spdx,
    profile: instance.generator.profile,
    provenance,
  };
}

/**
 * The instances of the TeleResilienceBench construction: the JSON Lines file that
 * `resilience.instances` wrote (its output names it and its sha256), each line checked with the
 * construction's schema; an output that is itself an instance is checked with it too.
 * @throws TelebenchError `release_source_changed` when the file no longer matches its recorded
 *   sha256, `release_rows_invalid` naming file and line for a bad line
 */
export function resilienceInstancesOf(
  outputs: readonly StageOutput<unknown, unknown>[],
): ResilienceInstance[] {
  const rows: ResilienceInstance[] = [];
  for (const o of outputs) {
    const out = o.output as { files?: { instances?: { path: string; sha256: string } } } | null;
    const file = out?.files?.instances;
    if (!file) {
      if (out && typeof out === 'object' && 'sample_id' in out) rows.push(instanceOf(out, o.key));
      continue;
    }
    const text = readFileSync(file.path, 'utf8');
    if (sha256(text) !== file.sha256) {
      throw new TelebenchError(
        'release_source_changed',
        `${file.path} changed since resilience.instances wrote it (sha256 differs); run the resilience pipeline again`,
        {
          tier: 'config',
          context: { file: file.path },
        },
      );
    }
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch (err) {
        throw new TelebenchError('release_rows_invalid', `${file.path} line ${i + 1} is not JSON`, {
          tier: 'config',
          cause: err,
        });
      }
      const r = resilienceInstanceSchema.safeParse(parsed);
      if (!r.success) {
        const issue = r.error.issues[0]!;
        throw new TelebenchError(
          'release_rows_invalid',
          `${file.path} line ${i + 1}: ${issue.path.join('.')}: ${issue.message}`,
          {
            tier: 'config',
            context: { file: file.path, line: i + 1 },
          },
        );
      }
      rows.push(r.data);
    });
  }
  return rows;
}

/**
 * A source stage's output that is itself an instance, checked with the construction's schema.
 * @throws TelebenchError `release_rows_invalid` (tier config) naming the item and the field
 */
function instanceOf(output: object, key: string): ResilienceInstance {
  const r = resilienceInstanceSchema.safeParse(output);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw new TelebenchError(
    'release_rows_invalid',
    `item ${key} of the source stage: ${issue.path.join('.')}: ${issue.message}`,
    { tier: 'config', context: { key } },
  );
}

/** Card notes: the generator settings as the rows recorded them (model, provider, server, options). */
function generatorNotes(rows: readonly ResilienceRow[]): string[] {
  const generators = new Map<string, number>();
  for (const r of rows) {
    const g = (r.provenance.generator ?? {}) as Record<string, unknown>;
    const text =
      `generator \`${String(g.model ?? 'unknown')}\` via ${String(g.provider ?? 'unknown')} ${g.server_version ? `(server ${String(g.server_version)})` : ''} options ${JSON.stringify(g.options ?? {})}`.replace(
        / +/g,
        ' ',
      );
    generators.set(text, (generators.get(text) ?? 0) + 1);
  }
  return [...generators].map(([t, n]) => `${t}: ${n} rows`);
}

/**
 * Rows of the instances file(s), with the card's notes and limitations.
 * @throws TelebenchError `release_scripted_output` (tier config) when rows come from the scripted
 *   test server and `release.allow_scripted_output` is not set; what {@link resilienceInstancesOf}
 *   throws
 */
function collectResilience(
  outputs: readonly StageOutput<unknown, unknown>[],
  ctx: { config: unknown },
): CollectedRows<ResilienceRow> {
  const whole = (ctx.config ?? {}) as Record<string, unknown>;
  const resilience = (whole.resilience ?? {}) as Record<string, unknown>;
  const generator = (resilience.generator ?? {}) as Record<string, unknown>;
  const profile = typeof generator.profile === 'string' ? generator.profile : 'default';
  const rows = resilienceInstancesOf(outputs).map(resilienceRowOf);
  const notes = generatorNotes(rows);
  // The scripted test server's answers are synthetic stand-ins: never released by accident.
  const scripted = rows.filter((r) =>
    String(
      (r.provenance.generator as Record<string, unknown> | undefined)?.server_version ?? '',
    ).includes(SCRIPTED_MARK),
  ).length;
  const id = resilienceDataset.id;
  if (scripted > 0 && !releaseSettings(ctx.config).allow_scripted_output) {
    throw new TelebenchError(
      'release_scripted_output',
      `${scripted} of ${rows.length} ${id} rows were generated by the scripted test server (server version *${SCRIPTED_MARK}): its answers are synthetic stand-ins, never to be released. Generate them with a real model (resilience.generator.llm) and run again, or set release.allow_scripted_output: true to release them for a pipeline test`,
      { tier: 'config', context: { dataset: id, rows: scripted } },
    );
  }
  if (scripted > 0)
    notes.push(
      `${scripted} rows come from the scripted test server (release.allow_scripted_output: true): synthetic answers, for pipeline tests only`,
    );
  const present = new Set(rows.map((r) => r.sub_benchmark));
  const missing = [...MAIN_SUBSETS, 'telemath'].filter((s) => !present.has(s));
  const limitations = missing.length
    ? [
        `Subsets of the published benchmark not in this snapshot (their source was not loaded or gave no instance): ${missing.join(', ')}.`,
      ]
    : [];
  const targets = (
    (whole.resilience_eval as { targets?: { model?: unknown }[] } | undefined)?.targets ?? []
  ).map((t) => String(t.model));
  const made = [
    ...new Set(
      rows.map((r) =>
        String((r.provenance.generator as { model?: unknown } | undefined)?.model ?? 'unknown'),
      ),
    ),
  ].sort();
  return {
    rows,
    leftOut: {},
    profile,
    settings: { resilience },
    notes,
    limitations,
    models: { generator: made, targets },
  };
}

/** Rows of a done `resilience.load` item (a subset): kept rows, and the rejected ones by reason. */
function loadedRows(o: unknown) {
  const l = o as SubsetLoadOutput;
  const rejected: Record<string, number> = {};
  for (const r of l.rejected ?? []) rejected[r.reason] = (rejected[r.reason] ?? 0) + 1;
  return { rows: l.items?.length ?? 0, rejected };
}

/** TeleResilienceBench: rows from the instances file of `resilience.instances`. */
export const resilienceEntry = defineDatasetEntry<ResilienceRow>({
  definition: resilienceDataset,
  releaseStage: 'release.resilience',
  pipeline: 'resilience',
  source: resilienceInstances.name,
  collect: collectResilience,
  licenseEvidence(spdx) {
    if (spdx === 'MIT')
      return 'source cards and LICENSE files: GSMA/ot-lite card (license: mit), ORAN-Bench-13K and srsRANBench LICENSE';
    if (spdx === 'unknown') return 'no licence on record for the source: check before reuse';
    return 'licence declared by the source';
  },
  refresh: resilienceRefresh,
  funnelRows: {
    [resilienceLoad.name]: loadedRows,
    [resilienceInstances.name]: (o) => ({
      rows: (o as InstancesOutput).summary?.totals.instances ?? 0,
      rejected: {},
    }),
  },
});
