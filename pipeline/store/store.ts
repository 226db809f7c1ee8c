/**
 * The state store: one SQLite file (`<state>/state.db`, better-sqlite3 12, WAL journal,
 * `synchronous = NORMAL`, which is durable against a process kill at any instant; only a power loss
 * can drop the last transactions). Every write is one short synchronous transaction and no network
 * call ever happens inside one.
 *
 * Tables: `items` (one row per stage and work-item key, with its state machine), `artifacts`
 * (named links from an item to blobs), `kv` (namespaced caches: ETags, responses), `runs`
 * (one row per `telebench run`, with its manifest).
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { TelebenchError } from '../errors.js';

export type ItemState = 'pending' | 'running' | 'done' | 'failed' | 'skipped' | 'orphaned';

/** A stored item, with JSON columns parsed. */
export interface ItemRecord {
  stage: string;
  key: string;
  state: ItemState;
  stageVersion: number;
  inputHash: string;
  input: unknown;
  output: unknown;
  error: Record<string, unknown> | null;
  skipReason: string | null;
  skipDetail: string | null;
  attempt: string | null;
  attempts: number;
  runId: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  updatedAt: string;
}

/** What the runner must do with a planned item. */
export type PlanDecision = 'run' | 'done' | 'skipped' | 'failed';

export interface ArtifactRecord {
  name: string;
  digest: string;
  size: number;
  mediaType: string;
  attempt: string;
}

export interface RunRecord {
  runId: string;
  pipeline: string;
  startedAt: string;
  finishedAt: string | null;
  exitCode: number | null;
  manifest: Record<string, unknown>;
}

/** Namespaced key-value cache: values are JSON. */
export interface KeyValue {
  get<T = unknown>(namespace: string, key: string): T | undefined;
  set(namespace: string, key: string, value: unknown): void;
  delete(namespace: string, key: string): void;
  /** Number of entries in a namespace. */
  count(namespace: string): number;
}

/**
 * 2: `items` and `kv` are rowid tables (1 had them WITHOUT ROWID, where every key lookup read the
 * whole overflow chain of each large row on its search path: 21 ms per item in a store holding the
 * resilience subsets' outputs, issue 15). Version-1 stores are migrated on open.
 */
const SCHEMA_VERSION = 2;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
  stage TEXT NOT NULL,
  key TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending','running','done','failed','skipped','orphaned')),
  stage_version INTEGER NOT NULL,
  input_hash TEXT NOT NULL,
  input TEXT NOT NULL,
  output TEXT,
  error TEXT,
  skip_reason TEXT,
  skip_detail TEXT,
  attempt TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  run_id TEXT,
  started_at TEXT,
  finished_at TEXT,
  updated_at TEXT NOT NULL,
  orphaned_from TEXT,
  PRIMARY KEY (stage, key)
);
CREATE INDEX IF NOT EXISTS items_stage_state ON items (stage, state);
CREATE TABLE IF NOT EXISTS artifacts (
  stage TEXT NOT NULL,
  key TEXT NOT NULL,
  name TEXT NOT NULL,
  digest TEXT NOT NULL,
  size INTEGER NOT NULL,
  media_type TEXT NOT NULL,
  attempt TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (stage, key, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS kv (
  ns TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (ns, key)
);
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY,
  pipeline TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  exit_code INTEGER,
  manifest TEXT NOT NULL
);
`;

interface ItemRow {
  stage: string;
  key: string;
  state: ItemState;
  stage_version: number;
  input_hash: string;
  input: string;
  output: string | null;
  error: string | null;
  skip_reason: string | null;
  skip_detail: string | null;
  attempt: string | null;
  attempts: number;
  run_id: string | null;
  started_at: string | null;
  finished_at: string | null;
  updated_at: string;
}

function toRecord(row: ItemRow): ItemRecord {
  return {
    stage: row.stage,
    key: row.key,
    state: row.state,
    stageVersion: row.stage_version,
    inputHash: row.input_hash,
    input: JSON.parse(row.input) as unknown,
    output: row.output === null ? null : (JSON.parse(row.output) as unknown),
    error: row.error === null ? null : (JSON.parse(row.error) as Record<string, unknown>),
    skipReason: row.skip_reason,
    skipDetail: row.skip_detail,
    attempt: row.attempt,
    attempts: row.attempts,
    runId: row.run_id,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    updatedAt: row.updated_at,
  };
}

const now = (): string => new Date().toISOString();

type PlanRow = Pick<ItemRow, 'state' | 'stage_version' | 'input_hash'> & {
  orphaned_from: ItemState | null;
};

/**
 * The state a stored row stands for when planned at `version` with `inputHash`: undefined when it
 * must run from scratch (stale version or input, or an orphaned row whose earlier state is not a
 * finished one or was not recorded).
 */
function effectiveState(row: PlanRow, version: number, inputHash: string): ItemState | undefined {
  if (row.stage_version !== version || row.input_hash !== inputHash) return undefined;
  if (row.state !== 'orphaned') return row.state;
  const was = row.orphaned_from;
  return was === 'done' || was === 'skipped' || was === 'failed' ? was : undefined;
}

/** What the runner does with a planned row in `state`: failed rows run again only with `--retry-failed`. */
function decisionOf(state: ItemState, retryFailed: boolean): PlanDecision {
  if (state === 'done') return 'done';
  if (state === 'skipped') return 'skipped';
  if (state === 'failed') return retryFailed ? 'run' : 'failed';
  return 'run';
}

/**
 * The SQLite state of one state folder (`<state>/state.db`, better-sqlite3 in WAL mode, schema
 * version {@link SCHEMA_VERSION}): item rows per stage (state, version, input hash, output, error),
 * artifacts, runs and the namespaced key-value cache. Short synchronous transactions only; no
 * network call ever happens inside one.
 * @throws TelebenchError `store_unreadable` (tier config) when the file cannot be opened or was
 *   written by a newer telebench
 */
export class Store implements KeyValue {
  readonly db: Database.Database;

  /**
   * Opens (creating when missing) the store at `file`.
   * @throws TelebenchError `store_unreadable` (tier config) when the file is not a telebench store
   *   or was written by a newer schema version
   */
  constructor(readonly file: string) {
    mkdirSync(dirname(file), { recursive: true });
    try {
      this.db = new Database(file);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
      this.db.pragma('busy_timeout = 10000');
      this.db.pragma('foreign_keys = ON');
      this.db.exec(SCHEMA);
      this.migrateWithoutRowid();
      // Stores written before `orphaned_from` existed get the column (NULL: state not known).
      const cols = this.db.prepare('PRAGMA table_info(items)').all() as { name: string }[];
      if (!cols.some((c) => c.name === 'orphaned_from'))
        this.db.exec('ALTER TABLE items ADD COLUMN orphaned_from TEXT');
    } catch (err) {
      throw new TelebenchError(
        'store_unreadable',
        `cannot open the state store ${file}: ${(err as Error).message}`,
        {
          tier: 'config',
          context: { file },
          cause: err,
        },
      );
    }
    const row = this.db.prepare('SELECT value FROM meta WHERE key = ?').get('schema_version') as
      { value: string } | undefined;
    if (!row || Number(row.value) < SCHEMA_VERSION) {
      this.db
        .prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)')
        .run('schema_version', String(SCHEMA_VERSION));
    } else if (Number(row.value) > SCHEMA_VERSION) {
      throw new TelebenchError(
        'store_unreadable',
        `the state store ${file} has schema version ${row.value}, newer than this telebench (${SCHEMA_VERSION}); upgrade telebench or choose another --state`,
        { tier: 'config', context: { file } },
      );
    }
  }

  /**
   * Schema 1 -> 2: rebuilds `items` and `kv` as rowid tables when they are WITHOUT ROWID (same
   * columns, same rows, one transaction: a kill leaves the old table intact).
   */
  private migrateWithoutRowid(): void {
    const tables = this.db
      .prepare(
        `SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name IN ('items', 'kv') AND sql LIKE '%WITHOUT ROWID%'`,
      )
      .all() as { name: string; sql: string }[];
    if (tables.length === 0) return;
    this.db.transaction(() => {
      for (const t of tables) {
        const create = t.sql
          .replace(/\)\s*WITHOUT ROWID\s*$/i, ')')
          .replace(/^CREATE TABLE\s+(IF NOT EXISTS\s+)?"?\w+"?/i, `CREATE TABLE ${t.name}_v2`);
        this.db.exec(create);
        this.db.exec(`INSERT INTO ${t.name}_v2 SELECT * FROM ${t.name}`);
        this.db.exec(`DROP TABLE ${t.name}`);
        this.db.exec(`ALTER TABLE ${t.name}_v2 RENAME TO ${t.name}`);
      }
      this.db.exec(SCHEMA); // indexes dropped with the old tables
    })();
  }

  /** Closes the database (checkpointing the WAL). The store is unusable afterwards. */
  close(): void {
    this.db.close();
  }

  // ---------------------------------------------------------------- items

  /**
   * Records that `plan` listed an item and decides what to do with it.
   * A row whose version or input hash differs from the planned one is reset to `pending` (its output
   * is stale); a row left `running` by a killed process is re-run; `failed` rows are re-run only
   * when `retryFailed`. An `orphaned` row listed again with the same version and input hash gets
   * back the finished state it had (done, skipped or failed, with its output): finished work whose
   * input did not change is never redone.
   */
  planItem(
    stage: string,
    key: string,
    version: number,
    inputHash: string,
    inputJson: string,
    retryFailed: boolean,
  ): PlanDecision {
    const row = this.planRow(stage, key);
    if (!row) {
      this.stmt(
        `INSERT INTO items (stage, key, state, stage_version, input_hash, input, updated_at)
         VALUES (?, ?, 'pending', ?, ?, ?, ?)`,
      ).run(stage, key, version, inputHash, inputJson, now());
      return 'run';
    }
    const state = effectiveState(row, version, inputHash);
    if (state === undefined) {
      this.stmt(
        `UPDATE items SET state = 'pending', stage_version = ?, input_hash = ?, input = ?, output = NULL,
           error = NULL, skip_reason = NULL, skip_detail = NULL, orphaned_from = NULL, updated_at = ?
         WHERE stage = ? AND key = ?`,
      ).run(version, inputHash, inputJson, now(), stage, key);
      return 'run';
    }
    if (row.state === 'orphaned') {
      this.stmt(
        `UPDATE items SET state = ?, orphaned_from = NULL, updated_at = ? WHERE stage = ? AND key = ?`,
      ).run(state, now(), stage, key);
    }
    return decisionOf(state, retryFailed);
  }

  /** What {@link planItem} would decide, without writing (for `--dry-run`). */
  planDecisionReadOnly(
    stage: string,
    key: string,
    version: number,
    inputHash: string,
    retryFailed: boolean,
  ): PlanDecision {
    const row = this.planRow(stage, key);
    const state = row ? effectiveState(row, version, inputHash) : undefined;
    return state === undefined ? 'run' : decisionOf(state, retryFailed);
  }

  private planRow(stage: string, key: string): PlanRow | undefined {
    return this.stmt(
      'SELECT state, stage_version, input_hash, orphaned_from FROM items WHERE stage = ? AND key = ?',
    ).get(stage, key) as PlanRow | undefined;
  }

  /** Runs `fn` in one transaction (used to batch `planItem` calls). */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  /**
   * Marks items of `stage` not in `plannedKeys` as `orphaned` (kept, never deleted; the state they
   * had is kept in `orphaned_from` so that {@link planItem} can restore it). @returns count
   */
  orphanUnplanned(stage: string, plannedKeys: ReadonlySet<string>): number {
    const keys = this.stmt(`SELECT key FROM items WHERE stage = ? AND state != 'orphaned'`)
      .pluck()
      .all(stage) as string[];
    const gone = keys.filter((k) => !plannedKeys.has(k));
    if (gone.length === 0) return 0;
    const upd = this.stmt(
      `UPDATE items SET orphaned_from = state, state = 'orphaned', updated_at = ? WHERE stage = ? AND key = ?`,
    );
    this.transaction(() => {
      for (const k of gone) upd.run(now(), stage, k);
    });
    return gone.length;
  }

  /** Marks an item `running` for a new attempt. */
  startItem(stage: string, key: string, attempt: string, runId: string): void {
    const t = now();
    this.stmt(
      `UPDATE items SET state = 'running', attempt = ?, attempts = attempts + 1, run_id = ?, started_at = ?,
         finished_at = NULL, error = NULL, updated_at = ? WHERE stage = ? AND key = ?`,
    ).run(attempt, runId, t, t, stage, key);
  }

  /**
   * Records the end of an attempt. Only the attempt that is current in the row may finish it
   * (a late finisher of an abandoned attempt cannot overwrite a newer one).
   * @returns false when `attempt` is no longer the row's current attempt
   */
  finishItem(
    stage: string,
    key: string,
    attempt: string,
    result:
      | { state: 'done'; output: unknown }
      | { state: 'failed'; error: Record<string, unknown> }
      | { state: 'skipped'; reason: string; detail: string; data?: unknown }
      | { state: 'pending' },
  ): boolean {
    const t = now();
    let info: Database.RunResult;
    if (result.state === 'done') {
      info = this.stmt(
        `UPDATE items SET state = 'done', output = ?, error = NULL, finished_at = ?, updated_at = ?
         WHERE stage = ? AND key = ? AND attempt = ?`,
      ).run(JSON.stringify(result.output ?? null), t, t, stage, key, attempt);
    } else if (result.state === 'failed') {
      info = this.stmt(
        `UPDATE items SET state = 'failed', error = ?, finished_at = ?, updated_at = ?
         WHERE stage = ? AND key = ? AND attempt = ?`,
      ).run(JSON.stringify(result.error), t, t, stage, key, attempt);
    } else if (result.state === 'skipped') {
      info = this.stmt(
        `UPDATE items SET state = 'skipped', skip_reason = ?, skip_detail = ?, output = ?, finished_at = ?,
           updated_at = ? WHERE stage = ? AND key = ? AND attempt = ?`,
      ).run(
        result.reason,
        result.detail,
        JSON.stringify(result.data ?? null),
        t,
        t,
        stage,
        key,
        attempt,
      );
    } else {
      info = this.stmt(
        `UPDATE items SET state = 'pending', updated_at = ? WHERE stage = ? AND key = ? AND attempt = ?`,
      ).run(t, stage, key, attempt);
    }
    return info.changes === 1;
  }

  /** One item, or undefined. */
  item(stage: string, key: string): ItemRecord | undefined {
    const row = this.stmt('SELECT * FROM items WHERE stage = ? AND key = ?').get(stage, key) as
      ItemRow | undefined;
    return row ? toRecord(row) : undefined;
  }

  /** Every item of a stage in key order (all states). */
  *items(stage: string): Iterable<ItemRecord> {
    for (const row of this.stmt('SELECT * FROM items WHERE stage = ? ORDER BY key').iterate(
      stage,
    )) {
      yield toRecord(row as ItemRow);
    }
  }

  /** Done items of `stage` stored at `version`, in key order. */
  *doneOutputs<T>(
    stage: string,
    version: number,
  ): Iterable<{ key: string; input: unknown; output: T }> {
    const rows = this.stmt(
      `SELECT key, input, output FROM items WHERE stage = ? AND state = 'done' AND stage_version = ? ORDER BY key`,
    ).all(stage, version) as { key: string; input: string; output: string | null }[];
    for (const r of rows) {
      yield {
        key: r.key,
        input: JSON.parse(r.input) as unknown,
        output: JSON.parse(r.output ?? 'null') as T,
      };
    }
  }

  /** Counts per state and per skip reason for a stage (orphaned rows excluded from `total`). */
  counts(stage: string): {
    total: number;
    byState: Record<string, number>;
    bySkipReason: Record<string, number>;
    byErrorCode: Record<string, number>;
  } {
    const byState: Record<string, number> = {};
    let total = 0;
    for (const r of this.stmt(
      'SELECT state, COUNT(*) AS n FROM items WHERE stage = ? GROUP BY state',
    ).all(stage) as {
      state: string;
      n: number;
    }[]) {
      byState[r.state] = r.n;
      if (r.state !== 'orphaned') total += r.n;
    }
    const bySkipReason: Record<string, number> = {};
    for (const r of this.stmt(
      `SELECT skip_reason AS reason, COUNT(*) AS n FROM items WHERE stage = ? AND state = 'skipped' GROUP BY skip_reason ORDER BY n DESC`,
    ).all(stage) as { reason: string; n: number }[]) {
      bySkipReason[r.reason] = r.n;
    }
    const byErrorCode: Record<string, number> = {};
    for (const r of this.stmt(
      `SELECT json_extract(error, '$.code') AS code, COUNT(*) AS n FROM items WHERE stage = ? AND state = 'failed' GROUP BY code ORDER BY n DESC`,
    ).all(stage) as { code: string | null; n: number }[]) {
      byErrorCode[r.code ?? 'unknown'] = r.n;
    }
    return { total, byState, bySkipReason, byErrorCode };
  }

  /**
   * Names of every stage that has rows, in the order their first item was planned (a run plans
   * stages in pipeline order, so this reads as the funnel: mine, link, filter, ...).
   */
  stagesInPlanOrder(): string[] {
    return this.stmt('SELECT stage FROM items GROUP BY stage ORDER BY MIN(rowid)')
      .pluck()
      .all() as string[];
  }

  /** Names of every stage that has rows, sorted. */
  stages(): string[] {
    return this.stmt('SELECT DISTINCT stage FROM items ORDER BY stage').pluck().all() as string[];
  }

  // ---------------------------------------------------------------- artifacts

  /** Links a stored blob to an item under `name` (replacing an older link of that name). */
  linkArtifact(stage: string, key: string, a: ArtifactRecord): void {
    this.stmt(
      `INSERT OR REPLACE INTO artifacts (stage, key, name, digest, size, media_type, attempt, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(stage, key, a.name, a.digest, a.size, a.mediaType, a.attempt, now());
  }

  /** Artifacts of an item, by name. */
  artifacts(stage: string, key: string): ArtifactRecord[] {
    return (
      this.stmt(
        'SELECT name, digest, size, media_type, attempt FROM artifacts WHERE stage = ? AND key = ? ORDER BY name',
      ).all(stage, key) as {
        name: string;
        digest: string;
        size: number;
        media_type: string;
        attempt: string;
      }[]
    ).map((r) => ({
      name: r.name,
      digest: r.digest,
      size: r.size,
      mediaType: r.media_type,
      attempt: r.attempt,
    }));
  }

  // ---------------------------------------------------------------- kv

  /** The JSON value stored under `namespace`/`key`, parsed, or undefined when absent. */
  get<T = unknown>(namespace: string, key: string): T | undefined {
    const row = this.stmt('SELECT value FROM kv WHERE ns = ? AND key = ?').get(namespace, key) as
      { value: string } | undefined;
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  /**
   * Stores `value` (JSON-serialised) under `namespace`/`key`, replacing an older value, in one
   * transaction. @throws TypeError when `value` is not JSON-serialisable (a cycle, a BigInt)
   */
  set(namespace: string, key: string, value: unknown): void {
    this.stmt('INSERT OR REPLACE INTO kv (ns, key, value, updated_at) VALUES (?, ?, ?, ?)').run(
      namespace,
      key,
      JSON.stringify(value),
      now(),
    );
  }

  /** Removes `namespace`/`key`; a missing key is not an error. */
  delete(namespace: string, key: string): void {
    this.stmt('DELETE FROM kv WHERE ns = ? AND key = ?').run(namespace, key);
  }

  /** Number of entries stored in `namespace`. */
  count(namespace: string): number {
    return this.stmt('SELECT COUNT(*) FROM kv WHERE ns = ?').pluck().get(namespace) as number;
  }

  // ---------------------------------------------------------------- runs

  /**
   * Records the start of a `telebench run` with its manifest (see pipeline/manifest.ts).
   * @throws SqliteError when `runId` was recorded before (run ids are unique)
   */
  startRun(runId: string, pipeline: string, manifest: Record<string, unknown>): void {
    this.stmt('INSERT INTO runs (run_id, pipeline, started_at, manifest) VALUES (?, ?, ?, ?)').run(
      runId,
      pipeline,
      now(),
      JSON.stringify(manifest),
    );
  }

  /** Records the end time and exit code of a run (a run killed by SIGKILL keeps neither). */
  endRun(runId: string, exitCode: number): void {
    this.stmt('UPDATE runs SET finished_at = ?, exit_code = ? WHERE run_id = ?').run(
      now(),
      exitCode,
      runId,
    );
  }

  /** The newest run (by start time), optionally of one pipeline. */
  lastRun(pipeline?: string): RunRecord | undefined {
    const row = (
      pipeline
        ? this.stmt(
            'SELECT * FROM runs WHERE pipeline = ? ORDER BY started_at DESC, rowid DESC LIMIT 1',
          ).get(pipeline)
        : this.stmt('SELECT * FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1').get()
    ) as
      | {
          run_id: string;
          pipeline: string;
          started_at: string;
          finished_at: string | null;
          exit_code: number | null;
          manifest: string;
        }
      | undefined;
    if (!row) return undefined;
    return {
      runId: row.run_id,
      pipeline: row.pipeline,
      startedAt: row.started_at,
      finishedAt: row.finished_at,
      exitCode: row.exit_code,
      manifest: JSON.parse(row.manifest) as Record<string, unknown>,
    };
  }

  private readonly cache = new Map<string, Database.Statement>();
  private stmt(sql: string): Database.Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }
}
