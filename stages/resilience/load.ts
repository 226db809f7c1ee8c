/**
 * `resilience.load`: turns each subset of `config/subsets.yaml` into normalised items with their
 * generator prompt rendered and counted (cl100k), plus the rows that were rejected. Sources:
 * - the GSMA/ot-lite subsets, downloaded once from the Hugging Face Hub at the pinned revision
 *   (pipeline/providers/hub/download.ts) into `<state>/downloads/`;
 * - local files (JSON, JSON Lines, CSV), e.g. ORAN-Bench-13K and srsRANBench from ../shared/data.
 *
 * The Hub is not checked in a preflight on purpose: a stage preflight stops the whole stage (and
 * every stage after it), so an unreachable Hub would keep the local sources from loading and hide
 * the generator's own preflight message. Instead each Hub subset is its own item: without network
 * it fails with `hub_unreachable` and a hint (retried by `--retry-failed`), the local subsets load,
 * and the generation stage still checks its model server.
 *
 * Work item = one subset (not one row). Why: a file is parsed as a whole (a JSON array, CSV), the
 * 3GPP_TSG choices come from the whole split, and a subset changes as a whole (its file hash is in
 * the item input, so an edited file is re-read; a file downloaded into `<state>/data` is identified
 * by its URL instead, so the run after the download does not re-read it). The per-row unit of work, and of model calls, is
 * the generation stage, which plans one item per row from these outputs. Rejected rows are listed
 * in the output with file and row (and logged), never guessed.
 */
import { ensureSourceFile, readSourceRecord } from './sources.js';
import { readFileSync, existsSync } from 'node:fs';
import { resolve, dirname, join } from 'node:path';
import { defineStage, type StageContext } from '../../pipeline/stage.js';
import { TelebenchError } from '../../pipeline/errors.js';
import { sha256 } from '../../pipeline/hash.js';
import { countCl100k } from '../../pipeline/providers/tokenizer/cl100k.js';
import { downloadHubFile } from '../../pipeline/providers/hub/download.js';
import { resilienceSettings, type HasResilience, type ResilienceConfig } from './config.js';
import { configuredDataRoot, loadSubsets, SOURCE_FILES, type ResolvedSubset } from './subsets.js';
import { readRows, normaliseRows } from './adapters.js';
import {
  loadPromptTemplates,
  renderOptions,
  renderTemplate,
  requireTemplate,
  type PromptTemplate,
} from './prompts.js';
import type { PromptedItem, SubsetLoadOutput } from './types.js';

/** Input of a load work item: the subset entry, the file identity and the prompt templates. */
export interface LoadInput {
  subset: ResolvedSubset;
  /**
   * sha256 of the local file ('' for Hub files, identified by the pinned revision, and for files
   * downloaded into `<state>/data`, identified by `source_url`).
   */
  file_sha256: string;
  hub?: { url: string; dataset: string; revision: string };
  /** URL a file downloaded into `<state>/data` comes from (no data root configured). */
  source_url?: string;
  templates: { mc: { name: string; sha256: string }; numeric: { name: string; sha256: string } };
}

/** The mc and numeric base templates the configuration selects. @throws ConfigError */
export function baseTemplates(
  configFile: string,
  cfg: ResilienceConfig,
): { mc: PromptTemplate; numeric: PromptTemplate } {
  const all = loadPromptTemplates(resolve(dirname(configFile), cfg.prompts_dir));
  return {
    mc: requireTemplate(all, cfg.prompts.mc, 'mc', 'resilience.prompts.mc'),
    numeric: requireTemplate(all, cfg.prompts.numeric, 'numeric', 'resilience.prompts.numeric'),
  };
}

/**
 * Normalises a subset's file text and renders each item's generator prompt. Pure.
 * @param text file content; @param fileLabel how rejections name the file
 * @throws TelebenchError `subset_file_unreadable` (tier config) when the whole file cannot be read
 */
export function buildSubset(
  subset: ResolvedSubset,
  text: string,
  fileLabel: string,
  templates: { mc: PromptTemplate; numeric: PromptTemplate },
): SubsetLoadOutput {
  let read;
  try {
    read = readRows(text, subset.format, fileLabel);
  } catch (err) {
    throw new TelebenchError(
      'subset_file_unreadable',
      `${fileLabel} (subset ${subset.id}) cannot be read as ${subset.format}: ${(err as Error).message}`,
      { tier: 'config', context: { file: fileLabel, subset: subset.id } },
    );
  }
  const norm = normaliseRows(subset, read.rows, fileLabel);
  const items: PromptedItem[] = norm.items.map((it) => {
    const t = it.kind === 'mc' ? templates.mc : templates.numeric;
    const prompt = renderTemplate(t, {
      QUESTION: it.question,
      OPTIONS: renderOptions(it.choices),
      NUM_OPTIONS: String(it.choices.length),
    });
    return {
      ...it,
      prompt,
      prompt_template: t.name,
      prompt_version: t.version,
      prompt_tokens_cl100k: countCl100k(prompt),
    };
  });
  return {
    subset_id: subset.id,
    source: subset.source,
    subset: subset.name,
    sub_benchmark: subset.sub_benchmark,
    role: subset.role,
    file: fileLabel,
    file_sha256: sha256(text),
    rows_read: read.rows.length + read.rejected.length,
    items,
    rejected: [...read.rejected, ...norm.rejected].sort((a, b) => (a.row ?? -1) - (b.row ?? -1)),
  };
}

function logRejected(ctx: StageContext<unknown>, out: SubsetLoadOutput): void {
  if (out.rejected.length === 0) return;
  const byReason: Record<string, number> = {};
  for (const r of out.rejected) byReason[r.reason] = (byReason[r.reason] ?? 0) + 1;
  ctx.log(
    `${out.subset_id}: ${out.rejected.length} of ${out.rows_read} rows rejected (${Object.entries(
      byReason,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}); first: ${out.rejected
      .slice(0, 3)
      .map((r) => r.detail)
      .join(' | ')}`,
    { subset: out.subset_id, rejected: out.rejected.length, byReason },
  );
}

function templateRefs(t: { mc: PromptTemplate; numeric: PromptTemplate }): LoadInput['templates'] {
  return {
    mc: { name: t.mc.name, sha256: t.mc.sha256 },
    numeric: { name: t.numeric.name, sha256: t.numeric.sha256 },
  };
}

const templatesMemo = (ctx: StageContext<HasResilience>) =>
  ctx.memo('resilience.baseTemplates', () =>
    baseTemplates(ctx.configFile, resilienceSettings(ctx.config)),
  );

/** Download options of one ot-lite subset. */
function hubParams(ctx: StageContext<HasResilience>, cfg: ResilienceConfig, s: ResolvedSubset) {
  return {
    hubUrl: cfg.hub.url.replace(/\/+$/, ''),
    dataset: cfg.hub.dataset,
    revision: cfg.hub.revision,
    path: s.hubFile!,
    downloadsDir: join(ctx.stateDir, 'downloads'),
    signal: ctx.signal,
    timeoutMs: cfg.hub.timeout_ms,
  };
}

async function loadLocal(
  s: ResolvedSubset,
  ctx: StageContext<HasResilience>,
): Promise<SubsetLoadOutput> {
  const cfg = resilienceSettings(ctx.config);
  const url = sourceUrl(s, ctx.configFile, cfg);
  if (url && (!existsSync(s.path!) || !readSourceRecord(s.path!))) {
    ctx.log(`downloading ${url} into ${s.path!}`);
    await ensureSourceFile(url, s.path!, { signal: ctx.signal, timeoutMs: cfg.data_timeout_ms });
  }
  if (!existsSync(s.path!)) {
    throw new TelebenchError(
      'subset_file_missing',
      `subset ${s.id}: file ${s.path} does not exist (resilience.data_root or $TELEBENCH_DATA_ROOT + file in config/subsets.yaml)`,
      { tier: 'config', context: { subset: s.id, file: s.path } },
    );
  }
  const out = buildSubset(s, readFileSync(s.path!, 'utf8'), s.path!, templatesMemo(ctx));
  if (!url) return out;
  return { ...out, download: { url, etag: readSourceRecord(s.path!)?.etag ?? null } };
}

/**
 * The publisher URL of a local subset that is downloaded into `<state>/data` (no data root
 * configured and the file is one of {@link SOURCE_FILES}), else undefined (a file the user keeps).
 */
function sourceUrl(
  s: ResolvedSubset,
  configFile: string,
  cfg: ResilienceConfig,
): string | undefined {
  const rel = s.file ?? '';
  if (configuredDataRoot(configFile, cfg) || !SOURCE_FILES[rel]) return undefined;
  return `${cfg.data_url_base.replace(/\/+$/, '')}/${SOURCE_FILES[rel]}`;
}

async function loadHub(
  s: ResolvedSubset,
  ctx: StageContext<HasResilience>,
): Promise<SubsetLoadOutput> {
  const cfg = resilienceSettings(ctx.config);
  let got;
  try {
    got = await downloadHubFile(hubParams(ctx, cfg, s));
  } catch (err) {
    if (err instanceof TelebenchError && err.code === 'hub_unreachable') {
      err.message += `; connect to ${cfg.hub.url} (or set resilience.hub.url to a mirror) and run again with --retry-failed, or build from local sources only (resilience.only_subsets)`;
    }
    throw err;
  }
  const label = `hub:${got.dataset}@${got.revision}/${got.path}`;
  const out = buildSubset(s, readFileSync(got.file, 'utf8'), label, templatesMemo(ctx));
  ctx.log(
    `${s.id}: ${got.fromCache ? 'local copy of' : 'downloaded'} ${label} (commit ${got.commit ?? 'unknown'}, ${got.size} bytes)`,
    { commit: got.commit, sha256: got.sha256, fromCache: got.fromCache },
  );
  return { ...out, hub_commit: got.commit };
}

export const resilienceLoad = defineStage<LoadInput, SubsetLoadOutput, HasResilience>({
  name: 'resilience.load',
  version: 1,
  needs: [],
  description:
    'Normalises every subset of config/subsets.yaml (ot-lite from the Hub, downloaded once; local files) and renders their generator prompts.',
  concurrency: () => 4,
  *plan(ctx) {
    const cfg = resilienceSettings(ctx.config);
    const templates = templateRefs(templatesMemo(ctx));
    let warned = false;
    for (const s of loadSubsets(ctx.configFile, cfg, ctx.stateDir)) {
      if (s.source === 'ot-lite') {
        if (!warned && !/^[0-9a-f]{40}$/.test(cfg.hub.revision)) {
          warned = true;
          ctx.log(
            `resilience.hub.revision is "${cfg.hub.revision}", not a commit sha: each download records the commit it resolved to; pin a sha for a reproducible build`,
          );
        }
        yield {
          key: s.id,
          input: {
            subset: s,
            file_sha256: '',
            hub: { url: cfg.hub.url, dataset: cfg.hub.dataset, revision: cfg.hub.revision },
            templates,
          },
        };
      } else {
        // A file downloaded into <state>/data is identified by its URL, so the run after the one
        // that downloaded it neither downloads nor re-reads it (the bytes' hash would change from
        // 'missing' to the file's). A file the user keeps is identified by its bytes: an edited
        // file is a new input; a missing one is reported by `run`.
        const url = sourceUrl(s, ctx.configFile, cfg);
        if (url) {
          yield { key: s.id, input: { subset: s, file_sha256: '', source_url: url, templates } };
          continue;
        }
        const fileSha = existsSync(s.path!) ? sha256(readFileSync(s.path!)) : 'missing';
        yield { key: s.id, input: { subset: s, file_sha256: fileSha, templates } };
      }
    }
  },
  async run(item, ctx) {
    const s = item.input.subset;
    const out = s.source === 'ot-lite' ? await loadHub(s, ctx) : await loadLocal(s, ctx);
    logRejected(ctx, out);
    return out;
  },
});
