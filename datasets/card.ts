/**
 * The dataset card (`README.md` of a release): YAML front matter as the Hugging Face Hub reads it
 * (`pretty_name`, `license`, `language`, `task_categories`, `size_categories`, `tags`, `configs` with
 * `data_files` per split) and a Markdown body (summary, provenance, construction funnel with counts,
 * field descriptions, licences, known limitations, citation). Pure: the same input gives the same
 * bytes, so a re-release of identical content is recognised as identical.
 */
import { stringify } from 'yaml';
import type { DatasetDefinition } from './definition.js';
import { sizeCategory } from './definition.js';
import { hubLicenseId } from './licenses.js';

/** Rows and files of one Hub config. Paths are relative to the release folder. */
export interface CardConfig {
  name: string;
  rows: number;
  parquet: string;
  jsonl: string;
}

/** One stage of the construction funnel, counted from the store. */
export interface FunnelStep {
  stage: string;
  done: number;
  skipped: number;
  failed: number;
  /** Skip reason -> count. */
  reasons: Record<string, number>;
}

/**
 * The re-proof of one instance at release (SWE-Bench 5G, issue 32): the gold patch and the empty
 * patch each run up to `runs` times, each in a fresh container; it holds when the gold resolved
 * every run and the empty patch none. Runs stop at the first run that breaks the rule.
 */
export interface ReproofRecord {
  instance_id: string;
  holds: boolean;
  /** Runs asked for of each patch (`release.reproof_runs`). */
  runs: number;
  /** Gold runs made and how many resolved. */
  gold: { runs: number; resolved: number };
  /** Empty-patch runs made and how many did not resolve (failed, as they must). */
  empty: { runs: number; failed: number };
  /** The image the runs used (a digest reference when pushed), '' for the local executor. */
  image: string;
  /** The engine's content id of that image (`sha256:...`), '' when none. */
  image_id: string;
  /** sha256 of each run's log, in run order (the logs are blobs of the state, `<state>/blobs`). */
  logs: { gold: string[]; empty: string[] };
  /** Wall time of the instance's runs (image build or pull included), seconds. */
  seconds: number;
  /** Why it does not hold ('' when it does). */
  reason: string;
}

/** Result of re-running the gold patches before release (SWE-Bench 5G). */
export interface VerifySummary {
  attempted: number;
  /** Instances whose gold patch resolved every run. */
  gold_resolved: number;
  /** Share of gold patches that reproduced before any was dropped, 0..1. */
  rate: number;
  /** Instances the empty patch resolved in at least one run. */
  empty_patch_resolved: number;
  dropped: { instance_id: string; reason: string }[];
  executor: string;
  /** Runs of each patch per instance (absent in releases made before re-proof: 1). */
  runs?: number;
  /** The per-instance re-proof (absent in releases made before re-proof). */
  records?: ReproofRecord[];
}

/** The date windows of a release (datasets with {@link DatasetDefinition.windows}). */
export interface CardWindows {
  /** Oldest first; `first`/`last` are the earliest and latest window dates (UTC ISO). */
  windows: { name: string; rows: number; first: string; last: string; parquet: string }[];
  /** Rows without a window date (in no window config). */
  undated: number;
  /** The dataset's paragraphs on which date decides and how to select after a cutoff. */
  text: string;
}

/** Everything the card shows; built by `stages/release/assemble.ts`. */
export interface CardInput {
  dataset: DatasetDefinition;
  version: string;
  configs: CardConfig[];
  licenses: { spdx: string; rows: number; evidence: string }[];
  funnel: FunnelStep[];
  /** Stage name -> version of the stages that made the rows. */
  stageVersions: Record<string, number>;
  configHash: string;
  /** Generation profile (TeleResilienceBench), null when not applicable. */
  profile: string | null;
  /** Free-form provenance lines (generator and model settings), one per bullet. */
  provenanceNotes: string[];
  /** The `--limit` values and runs that made the rows a sample, or null (not a sample). */
  sample: { limits: number[]; runs: string[] } | null;
  /** Models behind the rows: generator (made them), targets (configured to be evaluated). */
  models: { generator: string[]; targets: string[] };
  /** Limitations of this snapshot on top of the dataset's fixed ones. */
  snapshotLimitations: string[];
  verify: VerifySummary | null;
  /** Date windows; null or absent for a dataset without them. */
  windows?: CardWindows | null;
}

/** Hub front matter object of a card (exported for tests and the publish dry run). */
export function frontMatter(input: CardInput): Record<string, unknown> {
  const { dataset } = input;
  const total = input.configs.reduce((n, c) => n + c.rows, 0);
  const licenses = [...new Set(input.licenses.map((l) => hubLicenseId(l.spdx)))].sort();
  const configs: Record<string, unknown>[] = [];
  const names = input.configs.map((c) => c.name);
  const aggregates = dataset.aggregateConfigs(names).filter((a) => a.members.length > 0);
  for (const [i, a] of aggregates.entries()) {
    const files = input.configs.filter((c) => a.members.includes(c.name)).map((c) => c.parquet);
    configs.push({
      config_name: a.name,
      ...(i === 0 && { default: true }),
      data_files: [{ split: dataset.split, path: files.length === 1 ? files[0] : files }],
    });
  }
  for (const c of input.configs) {
    configs.push({
      config_name: c.name,
      ...(aggregates.length === 0 && configs.length === 0 && { default: true }),
      data_files: [{ split: dataset.split, path: c.parquet }],
    });
  }
  for (const w of input.windows?.windows ?? [])
    configs.push({ config_name: w.name, data_files: [{ split: dataset.split, path: w.parquet }] });
  return {
    pretty_name: dataset.prettyName,
    license: licenses.length === 1 ? licenses[0] : licenses.length === 0 ? 'unknown' : licenses,
    language: ['en'],
    task_categories: [...dataset.taskCategories],
    size_categories: [sizeCategory(total)],
    tags: [...dataset.tags],
    configs,
  };
}

const TYPE_LABEL: Record<string, string> = {
  STRING: 'string',
  INT32: 'int32',
  DOUBLE: 'float64',
  BOOLEAN: 'bool',
  LIST_STRING: 'list<string>',
  JSON_TEXT: 'JSON object (JSON text in Parquet)',
};

const pct = (x: number): string => `${(100 * x).toFixed(2)}%`;
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * The card's `## Date windows` section: the dataset's text, the table of windows (rows, earliest
 * and latest date, the model cutoffs each is clean for) and the cutoffs the whole snapshot is
 * clean for. A window is clean for a model whose training data ends before its earliest date.
 */
function windowSection(w: CardWindows): string[] {
  const day = (iso: string) => iso.slice(0, 10);
  const out = ['## Date windows', '', w.text, ''];
  if (w.windows.length === 0) {
    out.push('No row of this snapshot carries a window date, so it has no window configs.', '');
    return out;
  }
  out.push(
    '| window (config) | rows | earliest | latest | clean for model cutoffs before |',
    '|---|---:|---|---|---|',
  );
  for (const x of w.windows)
    out.push(`| ${x.name} | ${x.rows} | ${x.first} | ${x.last} | ${day(x.first)} |`);
  out.push('');
  const first = w.windows[0]!.first;
  out.push(
    `The whole snapshot is clean for models whose training data ends before ${day(first)} (its earliest instance date, ${first}); it spans ${w.windows.length} window(s) up to ${w.windows.at(-1)!.last}.` +
      (w.undated
        ? ` ${w.undated} row(s) carry no window date and are in no window config (and never kept by \`--after\`).`
        : ''),
    '',
  );
  return out;
}

/**
 * Renders the card.
 * @returns Markdown text beginning with `---\n<YAML>---\n`
 */
export function renderCard(input: CardInput): string {
  const { dataset } = input;
  const total = input.configs.reduce((n, c) => n + c.rows, 0);
  const out: string[] = [];
  out.push('---', stringify(frontMatter(input), { lineWidth: 0 }).trimEnd(), '---', '');
  out.push(`# ${dataset.prettyName} ${input.version}`, '', dataset.summary, '');
  out.push(
    `This snapshot holds **${total}** rows in ${input.configs.length} config(s), split \`${dataset.split}\`.`,
    '',
  );
  out.push('| config | rows | files |', '|---|---:|---|');
  for (const c of input.configs)
    out.push(`| ${c.name} | ${c.rows} | \`${c.parquet}\`, \`${c.jsonl}\` |`);
  out.push('');
  out.push(
    'Each config is stored twice with identical rows: Parquet (what the Hub loads) and JSON Lines.',
    '',
  );

  if (input.windows) out.push(...windowSection(input.windows));

  out.push('## Provenance', '');
  out.push(
    'Built by the telebench pipeline. `manifest.json` beside this card records the git commit of the',
    'code, the configuration hash, the stage versions, the input hashes and the row counts.',
    '',
  );
  if (input.sample) {
    const lim = input.sample.limits.map((n) => `\`--limit ${n}\``).join(', ');
    out.push(
      `**This snapshot is a sample**: the latest runs of its stages stopped each stage after at most ${input.sample.limits.join(' / ')} items (${lim}; run ${input.sample.runs.join(', ')}), so it holds only part of what its configuration describes.`,
      '',
    );
  }
  const names = (m: string[]) => (m.length ? m.map((x) => `\`${x}\``).join(', ') : 'none');
  out.push(`- configuration hash: \`${input.configHash}\``);
  out.push(`- generator model(s): ${names(input.models.generator)}`);
  out.push(`- target model(s) configured for evaluation: ${names(input.models.targets)}`);
  out.push(
    `- sample: ${input.sample ? input.sample.limits.map((n) => `\`--limit ${n}\``).join(', ') : 'no (no --limit in the runs that built it)'}`,
  );
  for (const [s, v] of Object.entries(input.stageVersions).sort())
    out.push(`- stage \`${s}\` version ${v}`);
  if (input.profile) {
    out.push(
      `- generation profile: \`${input.profile}\`${input.profile === 'paper' ? ' (reproduces the published settings, including their 2048-token context)' : ''}`,
    );
  }
  for (const n of input.provenanceNotes) out.push(`- ${n}`);
  out.push('');
  if (input.profile !== null) {
    out.push(
      'Instances made without context truncation differ from the published ones: the published run',
      'lost about two thirds of its continuation prompts to a 2048-token context, so its half traces and',
      'answers came from cut prompts. This snapshot was made with the profile named above.',
      '',
    );
  }

  out.push('## Construction funnel', '');
  if (input.funnel.length === 0) out.push('No stage counts were recorded for this snapshot.', '');
  else {
    out.push(
      'Counts are rows: source rows kept and rejected for the load stage, merged PRs for mining, one',
      'row per item for the other stages (a subset or repository that failed counts once).',
      '',
    );
    out.push('| stage | done | skipped | failed | skip reasons |', '|---|---:|---:|---:|---|');
    for (const f of input.funnel) {
      const reasons = Object.entries(f.reasons)
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .map(([r, n]) => `${r} ${n}`)
        .join(', ');
      out.push(`| ${f.stage} | ${f.done} | ${f.skipped} | ${f.failed} | ${reasons || '—'} |`);
    }
    out.push(`| **released** | ${total} | | | |`, '');
  }

  if (input.verify) {
    const v = input.verify;
    const runs = v.runs ?? 1;
    out.push('## Reproduction check', '');
    out.push(
      `Before release every instance was re-run from its own row and recipe in fresh containers (${v.executor}), ${runs === 1 ? 'once with the gold patch and once with the empty patch' : `${runs} times with the gold patch and ${runs} times with the empty patch, each run in a fresh container`}.`,
      `The gold patch resolved ${runs === 1 ? '' : `all ${runs} runs in `}${v.gold_resolved} of ${v.attempted} instances (**${pct(v.rate)}** before dropping;`,
      "SWE-bench's Docker harness reaches 99.78%). The empty patch resolved " +
        `${v.empty_patch_resolved}${runs === 1 ? '' : ' (in any run)'}.` +
        (v.records
          ? " `manifest.json` (`verify.records`) holds each instance's runs, the image it ran in and the sha256 of every run's log."
          : ''),
      '',
    );
    if (v.dropped.length > 0) {
      out.push('Dropped because they did not reproduce:', '');
      for (const d of v.dropped) out.push(`- \`${d.instance_id}\`: ${d.reason}`);
      out.push('');
    }
  }

  out.push('## Fields', '', '| field | type | description |', '|---|---|---|');
  for (const f of dataset.fields)
    out.push(`| \`${f.name}\` | ${TYPE_LABEL[f.parquet]} | ${cell(f.description)} |`);
  out.push('');
  out.push(
    'Lists are native Parquet lists of strings; object fields are JSON text in Parquet and JSON objects in the JSON Lines files.',
    '',
  );

  out.push(
    '## Licences',
    '',
    'Every row carries the licence of what it was made from (`license`).',
    '',
  );
  out.push('| licence | rows | evidence |', '|---|---:|---|');
  for (const l of input.licenses) out.push(`| ${l.spdx} | ${l.rows} | ${cell(l.evidence)} |`);
  out.push('');
  if (input.licenses.some((l) => l.spdx === 'unknown')) {
    out.push(
      'Rows marked `unknown` come from a source whose licence could not be established: check them before reuse.',
      '',
    );
  }

  out.push('## Known limitations', '');
  for (const l of [...dataset.limitations, ...input.snapshotLimitations]) out.push(`- ${l}`);
  out.push('', '## Citation', '', dataset.citation, '');
  return out.join('\n');
}
