/**
 * The contract between the engine and the domain stages (`stages/`). A stage is pure data plus two
 * functions: `plan` lists work items from what the store already holds (no network), `run` does one
 * item and must be idempotent (running it twice for the same input yields an equivalent output).
 *
 * The runner decides what is done: an item is done only when its stored stage `version` and the hash
 * of its canonical-JSON `input` both match; bump `version` to make every stored output stale.
 */
import type { BlobStore } from './store/blobs.js';
import type { KeyValue, ItemRecord } from './store/store.js';
import type { TelebenchEvent } from './events.js';

/** One unit of work: `key` is unique within the stage and stable across runs (e.g. `free5gc__amf-161`). */
export interface WorkItem<In> {
  readonly key: string;
  readonly input: In;
}

/** One done item of a stage as {@link StoreReader.outputs} lists it. */
export interface StageOutput<In, Out> {
  key: string;
  input: In;
  output: Out;
}

/**
 * Names a stage for the store's record readers: its handle (what {@link defineStage} returned), or
 * its name where the name comes from configuration (release sources, funnels).
 */
export type StageRef = string | { readonly name: string };

/** Read access to other stages' results. Only items `done` at the stage's current version are listed. */
export interface StoreReader {
  /**
   * Done outputs of `stage`, in key order, typed by its handle: `ctx.store.outputs(buildStage)`
   * is `Iterable<StageOutput<BuildInput, BuildOutput>>`, so a renamed stage or a changed output
   * type fails to compile instead of at run time.
   * @throws TelebenchError `unknown_stage` (tier bug) for a stage not in the run's registry
   */
  outputs<In, Out>(stage: Stage<In, Out, any>): Iterable<StageOutput<In, Out>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /**
   * Done outputs of the stage named `stage`, untyped: for generic readers whose stage names come
   * from configuration (`release.sources`). Stages read each other through {@link outputs}.
   * @throws TelebenchError `unknown_stage` for a name not in the run's registry
   */
  outputsNamed(stage: string): Iterable<StageOutput<unknown, unknown>>;
  /** One item's full record (any state), or undefined. */
  item(stage: StageRef, key: string): ItemRecord | undefined;
  /** All records of a stage (any state), in key order. */
  items(stage: StageRef): Iterable<ItemRecord>;
}

/** What every stage hook receives. `Cfg` is the whole validated configuration. */
export interface StageContext<Cfg = unknown> {
  readonly config: Cfg;
  /** Absolute path of the configuration file (relative paths in it resolve against its folder). */
  readonly configFile: string;
  /** Absolute state directory (`--state`, `TELEBENCH_HOME`, default `./cache`). */
  readonly stateDir: string;
  readonly runId: string;
  readonly store: StoreReader;
  /** Namespaced key-value cache (ETags, HTTP and model response caches). */
  readonly kv: KeyValue;
  /** Content-addressed raw artifacts (API responses, logs, model outputs). */
  readonly blobs: BlobStore;
  /** Aborted on SIGINT/SIGTERM: long operations should stop and throw. */
  readonly signal: AbortSignal;
  emit(event: TelebenchEvent): void;
  /** Free-text log line into the run's event log (kind `log`). */
  log(message: string, data?: Record<string, unknown>): void;
  /**
   * One shared instance per run and `key` (providers: the GitHub client, the Docker client, ...).
   * `make` runs at most once.
   */
  memo<T>(key: string, make: () => T): T;
}

/** Context of `plan`: `limit` (from `--limit N`) caps how many items the stage may list. */
export interface PlanContext<Cfg = unknown> extends StageContext<Cfg> {
  readonly limit: number | undefined;
}

/** Context of `run` for one item. */
export interface RunContext<Cfg = unknown> extends StageContext<Cfg> {
  /** Unique id of this attempt (a new one each time the item is started). */
  readonly attempt: string;
  readonly key: string;
  /**
   * Stores `data` in the blob store and links it to this item under `name`.
   * @returns the sha256 hex digest of the stored bytes
   */
  artifact(name: string, data: string | Uint8Array, mediaType?: string): string;
}

export interface Stage<In = unknown, Out = unknown, Cfg = unknown> {
  /** Dotted name, `<branch>.<step>`: `swe5g.mine`, `resilience.truncate`. */
  readonly name: string;
  /** Bump when the output for the same input would change. */
  readonly version: number;
  /**
   * Stages whose outputs `plan` reads. Without {@link Stage.itemNeeds} the runner starts this stage
   * after they all finish (a barrier: right for a stage whose item input aggregates many upstream
   * items, such as a summary or a release).
   */
  readonly needs: readonly string[];
  /**
   * Item-level readiness ("streaming"). For one item `plan` listed, the keys of the items of each
   * stage in `needs` that its input is made from (e.g. `{ 'swe5g.build': [key] }`). When declared,
   * the runner starts this stage as soon as its needs have passed their preflight, re-runs `plan`
   * as their items finish, and releases an item as soon as every item it names has finished in
   * this run (done, skipped or failed) or its stage has finished. Contract: the input `plan` lists
   * for a key whose named items have finished is the input the stage's final plan would list (the
   * input reads nothing else that is still changing). Stages absent from the record, or not
   * selected in this run, impose no wait. Naming a stage outside `needs` is a bug (throws).
   */
  itemNeeds?(item: WorkItem<In>): Readonly<Record<string, readonly string[]>>;
  readonly description: string;
  /**
   * The part of an item's input whose hash decides whether its stored output is current (default:
   * the whole input). A stage leaves out here what its `run` never reads, so a change to it keeps
   * the stored output: `swe5g.build` and `swe5g.validate` leave out the issue text (the problem
   * statement, issue 31), which no image or test reads. The whole input is still what `run` gets
   * and what the store records when the item runs. Pure; the runner hashes its canonical JSON.
   */
  cacheKey?(input: In): unknown;
  /** Items run at once (default 1). */
  concurrency?(config: Cfg): number;
  /**
   * Checks outside services and inputs before any item starts.
   * @throws PreflightError naming the service and what to start or set
   */
  preflight?(ctx: StageContext<Cfg>): Promise<void>;
  /** Lists the work items. Pure over the store and config: no network, no writes. */
  plan(ctx: PlanContext<Cfg>): AsyncIterable<WorkItem<In>> | Iterable<WorkItem<In>>;
  /**
   * Does one item.
   * @throws SkipItem for a content outcome (recorded as skipped with its reason)
   * @throws TelebenchError (any other tier) for a failure (recorded as failed)
   */
  run(item: WorkItem<In>, ctx: RunContext<Cfg>): Promise<Out>;
}

/** A named set of stages run together by `telebench run <name>`. */
export interface Pipeline<Cfg = unknown> {
  readonly name: string;
  readonly description: string;
  /** Stage names; the runner adds nothing implicitly and orders them by `needs`. */
  readonly stages: readonly string[];
  /** Markdown report of this pipeline's results (`telebench report <name>`). */
  report?(ctx: StageContext<Cfg>): string | Promise<string>;
}

/**
 * Declares a stage and returns its handle: the stage itself, with its input and output types, which
 * other stages pass to `ctx.store.outputs(handle)` to read its outputs typed (never by name).
 */
export function defineStage<In, Out, Cfg>(stage: Stage<In, Out, Cfg>): Stage<In, Out, Cfg> {
  return stage;
}

/** The name of a stage reference. */
export function stageName(stage: StageRef): string {
  return typeof stage === 'string' ? stage : stage.name;
}
