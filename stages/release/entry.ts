/**
 * A dataset as an entry: everything the generic release code (collect, release, publish, verify,
 * the CLI commands and the local release stages) needs to know about one released dataset, defined
 * once next to the stages that build it and registered in one place (`stages/index.ts`,
 * `DATASET_ENTRIES`). The generic code reads these fields and never tests a dataset id.
 */
import type { Pipeline, Stage, StageOutput, StoreReader } from '../../pipeline/stage.js';
import { ConfigError, TelebenchError } from '../../pipeline/errors.js';
import type { DatasetDefinition } from '../../datasets/definition.js';
import type { VerifySummary } from '../../datasets/card.js';

/** The parts of a stage context a release needs (the CLI builds one from the state directory). */
export interface ReleaseContextLike {
  store: StoreReader;
  config: unknown;
  stateDir: string;
  log(message: string): void;
}

/** Where a verifier runs: the state directory, the configuration file, a log sink. */
export interface VerifierEnv {
  stateDir: string;
  configFile: string;
  log?: (message: string) => void;
  signal?: AbortSignal;
}

/** Rows a run produced for a dataset, plus counts of what was left out and why. */
export interface CollectedRows<Row = Record<string, unknown>> {
  rows: Row[];
  /** Counts by reason of what the stage held but the release leaves out (`incomplete_left_out`). */
  leftOut: Record<string, number>;
  /**
   * The keys ({@link DatasetDefinition.key}) behind each `leftOut` count, for messages that name
   * them (`telebench refresh`: "validated but left out"); absent when the dataset does not say.
   */
  leftOutKeys?: Record<string, string[]>;
  /** Per `leftOut` reason, what a user does to have such rows released (one sentence). */
  leftOutHints?: Record<string, string>;
  /** Generation profile recorded in the manifest and card, null when the dataset has none. */
  profile: string | null;
  /** Configuration sections as they were (recorded in the manifest). */
  settings: Record<string, unknown>;
  /** Provenance lines for the card (generator settings, where problem statements came from). */
  notes?: string[];
  /** Snapshot limitations for the card. */
  limitations?: string[];
  /** Models behind the rows: generator (made them) and targets (configured to be evaluated). */
  models: { generator: string[]; targets: string[] };
}

/**
 * Re-runs released rows (SWE-Bench 5G: gold patch resolves, empty patch does not).
 * @returns the summary for the card and the keys ({@link DatasetDefinition.key}) that reproduced
 */
export type Verifier<Row = Record<string, unknown>> = (
  rows: readonly Row[],
) => Promise<{ summary: VerifySummary; reproduced: ReadonlySet<string> }>;

/** Options of an image push (`release --push REGISTRY`, `publish --push REGISTRY`). */
export interface PushOptions {
  /** Registry `host:port`. */
  registry: string;
  /** How the registry was given, for errors (`release --push`). */
  flag: string;
  log: (message: string) => void;
  /** Receives each local image name and the digest reference it was pushed as. */
  record?: (local: string, ref: string) => void;
}

/** A dataset whose rows name container images (SWE-Bench 5G's `image_name`). */
export interface ImageHooks<Row> {
  /**
   * `release --push`: pushes the rows' images and returns the rows naming them by digest.
   * Called after the verifier, before the plan.
   */
  push(rows: Row[], options: PushOptions): Promise<Row[]>;
  /**
   * `publish --push`: checks that released rows already name their images in the registry and
   * pushes them again, so the registry surely holds what the rows name.
   */
  republish(rows: Row[], options: PushOptions): Promise<void>;
}

/** The re-run check of a dataset whose rows can be executed (`telebench verify`). */
export interface VerifyHooks<Row> {
  /** The verifier for a configuration; null when the executor code is not there. */
  verifier(config: unknown, env: VerifierEnv): Verifier<Row> | null;
  /**
   * Checks before the release stage re-runs rows (the Docker engine answers).
   * @throws PreflightError naming what is missing
   */
  preflight?(config: unknown): Promise<void>;
  /** Card limitation of a release written without the re-run. */
  unverifiedLimitation: string;
}

/**
 * How a dataset is refreshed (`telebench refresh`): by a landing-time window
 * ({@link WindowRefreshHooks}, SWE-Bench 5G) or by what its inputs are ({@link SourcesRefreshHooks},
 * TeleResilienceBench).
 */
export type RefreshHooks = WindowRefreshHooks | SourcesRefreshHooks;

/**
 * A dataset whose candidates carry a landing time: the next release mines only what landed at or
 * after the previous release's cutoff.
 */
export interface WindowRefreshHooks {
  readonly kind: 'window';
  /** Config key of the window start, for messages (`swe5g.mining.since`). */
  readonly sinceKey: string;
  /** The window start the configuration itself sets (ISO 8601), or null. */
  configuredSince(config: unknown): string | null;
  /** The configuration with the window start set to `since` (ISO 8601 UTC); pure. */
  narrow(config: unknown, since: string): unknown;
  /**
   * The cutoff of what the store's candidates cover: the latest landing time (ISO 8601 UTC) among
   * them, or null when none was mined. Recorded in the manifest (`cutoff`).
   */
  cutoffOf(store: StoreReader): string | null;
  /** What a candidate is called in messages (`PR`). */
  readonly candidateNoun: string;
  /**
   * The keys of the candidates that landed at or after `since` (ISO 8601 UTC) among those the
   * store mined, sorted; for the refresh's report ({@link CandidateFate}).
   */
  landedSince(store: StoreReader, since: string): string[];
  /**
   * Where a candidate that is not a row stopped: the first stage whose item for `key` is not done
   * (skipped with its reason, failed with its error code, or not run), or null when every stage
   * finished it.
   */
  fateOf(store: StoreReader, key: string): CandidateFate | null;
}

/** Where a candidate stopped short of a row: its key, the stage, how, and why (a reason code). */
export interface CandidateFate {
  key: string;
  stage: string;
  state: 'skipped' | 'failed' | 'not run';
  /** The skip reason or the error code; '' when not run. */
  reason: string;
  /** A failed one: the next refresh retries it (its cutoff is held there). */
  retried?: boolean;
}

/** A source file a release was built from: its label (path or Hub file) and sha256 (hex). */
export interface SourceFile {
  file: string;
  sha256: string;
}

/**
 * A dataset built from source files (TeleResilienceBench's subsets): a refresh re-runs the
 * pipeline with the current configuration (cached stages redo only what a new or changed file
 * brings) and compares what the release is built from (manifest `sources`) with the last one.
 */
export interface SourcesRefreshHooks {
  readonly kind: 'sources';
  /** The source files the store's rows come from, by input id (a subset id). Recorded as `sources`. */
  sourcesOf(store: StoreReader): Record<string, SourceFile>;
  /**
   * The rows of release N+1: a previous row is kept as released while its source row is
   * unchanged, replaced by the collected one when its source row changed, and removed with a
   * reason (by key) when its source row is gone; collected rows with new keys are added.
   */
  carry(
    previous: readonly Record<string, unknown>[],
    collected: readonly Record<string, unknown>[],
    store: StoreReader,
  ): { rows: Record<string, unknown>[]; removedReasons: Record<string, string> };
}

/** Rows of one done item of a stage whose item is not one row, and its rejected rows by reason. */
export type FunnelRows = (output: unknown) => { rows: number; rejected: Record<string, number> };

/** One released dataset: its definition and how the pipeline's outputs become its rows. */
export interface DatasetEntry<Row extends Record<string, unknown> = Record<string, unknown>> {
  /** Schema, fields, card texts (`datasets/<id>/schema.ts` or the dataset's own folder). */
  readonly definition: DatasetDefinition<Row>;
  /** Name of its local release stage, run at the end of the `all` pipeline (`release.swe5g`). */
  readonly releaseStage: string;
  /** The pipeline whose stages build the rows: the funnel, stage versions and input hashes. */
  readonly pipeline: string;
  /** Stage whose done outputs become the rows, unless `release.sources.<id>` names another. */
  readonly source: string;
  /** Other stages `collect` reads (waited for by the release stage when registered). */
  readonly alsoNeeds?: readonly string[];
  /**
   * The one mapping from the source stage's done outputs to rows (checked against the row schema
   * afterwards by the release plan).
   * @throws TelebenchError (tier config) for outputs that cannot become rows, naming where
   */
  collect(
    outputs: readonly StageOutput<unknown, unknown>[],
    ctx: ReleaseContextLike,
  ): CollectedRows<Row>;
  /** Sentence naming where a licence comes from, for the card's licence table. */
  licenseEvidence(spdx: string): string;
  /**
   * What else `collect` reads from the store besides the source stage's outputs (SWE-Bench 5G: the
   * current problem statements and classifications, the audits), as a JSON value: the local
   * release stage hashes it into its input, so a change there re-releases.
   */
  rowInputs?(store: StoreReader): unknown;
  /** Funnel counts of the stages whose done item holds several rows, by stage name. */
  readonly funnelRows?: Readonly<Record<string, FunnelRows>>;
  /** Present when rows can be re-run (`telebench verify`, the pre-release check). */
  readonly verify?: VerifyHooks<Row>;
  /** Present when rows name container images (`--push REGISTRY`). */
  readonly images?: ImageHooks<Row>;
  /** Present when the dataset can be refreshed from its latest release (`telebench refresh`). */
  readonly refresh?: RefreshHooks;
  /**
   * Stages a dataset brings with it, registered with the entry (`stages/index.ts` adds them to
   * the stage registry). SWE-Bench 5G and TeleResilienceBench register theirs as branches there.
   */
  readonly stages?: readonly Stage<any, any, any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Pipelines a dataset brings with it (its `pipeline` among them), registered with the entry. */
  readonly pipelines?: readonly Pipeline[];
}

/** An entry with its row type erased, as the registry holds it. */
export type AnyDatasetEntry = DatasetEntry<Record<string, unknown>>;

/**
 * Types an entry by its row type at its definition and erases the row type for the registry (the
 * generic code sees rows only through the schema, the key and the entry's own functions).
 */
export function defineDatasetEntry<Row extends Record<string, unknown>>(
  entry: DatasetEntry<Row>,
): AnyDatasetEntry {
  return entry as unknown as AnyDatasetEntry;
}

/** The registered datasets, found by id or alias. */
export interface DatasetRegistry {
  readonly entries: readonly AnyDatasetEntry[];
  /**
   * The entry named `name` (its id or an alias, case-insensitive).
   * @throws ConfigError (`config_invalid`, exit 2) naming the known datasets
   */
  byName(name: string): AnyDatasetEntry;
}

/**
 * A registry over `entries`.
 * @throws TelebenchError `dataset_registered_twice` (tier bug) when two entries share an id, an
 *   alias or a release stage name
 */
export function datasetRegistry(entries: readonly AnyDatasetEntry[]): DatasetRegistry {
  const names = new Map<string, string>();
  for (const e of entries) {
    const d = e.definition;
    for (const n of [d.id, ...d.aliases, e.releaseStage]) {
      const prev = names.get(n.toLowerCase());
      if (prev !== undefined) {
        throw new TelebenchError(
          'dataset_registered_twice',
          `datasets ${prev} and ${d.id} both use the name "${n}"`,
          { tier: 'bug', context: { name: n } },
        );
      }
      names.set(n.toLowerCase(), d.id);
    }
  }
  const known = () =>
    entries
      .map((e) =>
        e.definition.aliases.length
          ? `${e.definition.id} (${e.definition.aliases.join(', ')})`
          : e.definition.id,
      )
      .join('; ');
  return {
    entries,
    byName(name) {
      const n = name.toLowerCase();
      const e = entries.find((x) => x.definition.id === n || x.definition.aliases.includes(n));
      if (!e) {
        throw new ConfigError(`unknown dataset "${name}"; known: ${known()}`);
      }
      return e;
    },
  };
}
