import { describe, it, expect, afterEach } from 'vitest';
import { mkdtempSync, rmSync, readdirSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { Store } from '../../pipeline/store/store.js';
import { BlobStore } from '../../pipeline/store/blobs.js';
import { hashJson, canonicalJson, sha256 } from '../../pipeline/hash.js';
import { redact } from '../../pipeline/secrets.js';
import { lockState } from '../../pipeline/state.js';
import { configJsonSchema } from '../../pipeline/cli/commands.js';
import { PROJECT_ROOT } from '../../pipeline/manifest.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'telebench-store-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

describe('Store', () => {
  it('migrates a schema-1 store (WITHOUT ROWID items and kv) to rowid tables, keeping every row', () => {
    const file = join(tmp(), 'state.db');
    const old = new Database(file);
    old.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES ('schema_version', '1');
CREATE TABLE items (stage TEXT NOT NULL, key TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending','running','done','failed','skipped','orphaned')),
  stage_version INTEGER NOT NULL, input_hash TEXT NOT NULL, input TEXT NOT NULL, output TEXT,
  error TEXT, skip_reason TEXT, skip_detail TEXT, attempt TEXT,
  attempts INTEGER NOT NULL DEFAULT 0, run_id TEXT, started_at TEXT, finished_at TEXT,
  updated_at TEXT NOT NULL, PRIMARY KEY (stage, key)) WITHOUT ROWID;
CREATE TABLE kv (ns TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  updated_at TEXT NOT NULL, PRIMARY KEY (ns, key)) WITHOUT ROWID;`);
    const big = JSON.stringify({ rows: 'x'.repeat(300_000) });
    const ins = old.prepare(
      `INSERT INTO items (stage, key, state, stage_version, input_hash, input, output, attempts, updated_at) VALUES (?, ?, 'done', 1, 'h', '{}', ?, 1, 'now')`,
    );
    for (let i = 0; i < 5; i++) ins.run('load', `subset-${i}`, big);
    old.prepare(`INSERT INTO kv VALUES ('ns', 'k', '"v"', 'now')`).run();
    old.close();

    const s = new Store(file);
    const sql = s.db
      .prepare(`SELECT group_concat(sql, ';') FROM sqlite_master WHERE name IN ('items', 'kv')`)
      .pluck()
      .get() as string;
    expect(sql).not.toMatch(/WITHOUT ROWID/i);
    expect(sql).toMatch(/PRIMARY KEY \(stage, key\)/);
    expect(s.db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).pluck().get()).toBe(
      '2',
    );
    expect(s.counts('load').byState).toEqual({ done: 5 });
    expect(s.item('load', 'subset-3')?.output).toEqual(JSON.parse(big));
    expect(s.get('ns', 'k')).toBe('v');
    expect(s.planItem('load', 'subset-0', 1, 'h', '{}', false)).toBe('done');
    expect(s.planItem('gen', 'item-0', 1, 'h', '{}', false)).toBe('run');
    // the index on (stage, state) is back after the rebuild
    expect(
      s.db.prepare(`SELECT name FROM sqlite_master WHERE name = 'items_stage_state'`).pluck().get(),
    ).toBe('items_stage_state');
    s.close();
    // opening again changes nothing
    const again = new Store(file);
    expect(again.counts('load').byState).toEqual({ done: 5 });
    again.close();
  });

  it('plans, starts and finishes items; a late finisher of an old attempt cannot overwrite', () => {
    const s = new Store(join(tmp(), 'state.db'));
    expect(s.planItem('st', 'a', 1, 'h1', '{}', false)).toBe('run');
    s.startItem('st', 'a', 'att-1', 'run-1');
    s.startItem('st', 'a', 'att-2', 'run-2'); // resumed after a kill
    expect(s.finishItem('st', 'a', 'att-1', { state: 'done', output: { old: true } })).toBe(false);
    expect(s.finishItem('st', 'a', 'att-2', { state: 'done', output: { ok: 1 } })).toBe(true);
    const rec = s.item('st', 'a')!;
    expect(rec).toMatchObject({ state: 'done', attempts: 2, attempt: 'att-2', output: { ok: 1 } });
    expect(s.planItem('st', 'a', 1, 'h1', '{}', false)).toBe('done');
    expect(s.planItem('st', 'a', 1, 'h2', '{"x":1}', false)).toBe('run');
    expect(s.item('st', 'a')).toMatchObject({ state: 'pending', output: null, input: { x: 1 } });
    s.close();
  });

  it('lists stages in the order they were first planned (status reads as the funnel), and by name', () => {
    const s = new Store(join(tmp(), 'state.db'));
    for (const stage of ['swe5g.mine', 'swe5g.link', 'swe5g.filter'])
      for (const key of ['b', 'a']) s.planItem(stage, key, 1, 'h', '{}', false);
    // replanning an earlier stage's item with a new input keeps the stage's place
    s.planItem('swe5g.mine', 'b', 1, 'h2', '{"x":1}', false);
    expect(s.stagesInPlanOrder()).toEqual(['swe5g.mine', 'swe5g.link', 'swe5g.filter']);
    expect(s.stages()).toEqual(['swe5g.filter', 'swe5g.link', 'swe5g.mine']);
    s.close();
  });

  it('uses WAL and refuses a store from a newer schema', () => {
    const file = join(tmp(), 'state.db');
    const s = new Store(file);
    expect(s.db.pragma('journal_mode', { simple: true })).toBe('wal');
    s.close();
    const db = new Database(file);
    db.prepare(`UPDATE meta SET value = '99' WHERE key = 'schema_version'`).run();
    db.close();
    expect(() => new Store(file)).toThrow(/schema version 99, newer/);
  });

  it('kv round-trips JSON by namespace', () => {
    const s = new Store(join(tmp(), 'state.db'));
    s.set('etag', 'GET /repos/x', { etag: 'W/"1"', body: 'abc' });
    expect(s.get('etag', 'GET /repos/x')).toEqual({ etag: 'W/"1"', body: 'abc' });
    expect(s.get('other', 'GET /repos/x')).toBeUndefined();
    expect(s.count('etag')).toBe(1);
    s.delete('etag', 'GET /repos/x');
    expect(s.count('etag')).toBe(0);
    s.close();
  });
});

describe('BlobStore', () => {
  it('stores content-addressed, deduplicates, leaves no temporary files', () => {
    const root = join(tmp(), 'blobs');
    const b = new BlobStore(root);
    const d1 = b.put('hello');
    expect(d1).toBe(sha256('hello'));
    expect(b.put(Buffer.from('hello'))).toBe(d1);
    expect(b.getText(d1)).toBe('hello');
    const files = readdirSync(join(root, d1.slice(0, 2)));
    expect(files).toEqual([d1.slice(2)]);
    expect(() => b.get('0'.repeat(64))).toThrow(/is not in/);
    expect(() => b.path('../etc/passwd')).toThrow(/not a sha256/);
  });
});

describe('hashing and secrets', () => {
  it('canonical JSON ignores key order and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: [1, { d: 2, c: undefined }] })).toBe('{"a":[1,{"d":2}],"b":1}');
    expect(hashJson({ a: 1, b: 2 })).toBe(hashJson({ b: 2, a: 1 }));
    expect(hashJson({ a: 1 })).not.toBe(hashJson({ a: 2 }));
  });
  it('redacts every secret value from text', () => {
    const env = { GITHUB_TOKENS: 'ghp_aaaaaaaa,ghp_bbbbbbbb', HF_TOKEN: 'hf_secretvalue' };
    expect(redact('auth ghp_bbbbbbbb and hf_secretvalue here', env)).toBe('auth *** and *** here');
  });
});

describe('state lock', () => {
  it('refuses a second live holder and takes over a stale lock', () => {
    const d = tmp();
    const release = lockState(d);
    // our own pid holds it: a child process trying to take it must be refused
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `import('${join(PROJECT_ROOT, 'pipeline/state.ts')}').then(m => m.lockState(${JSON.stringify(d)}))`,
      ],
      { encoding: 'utf8', cwd: PROJECT_ROOT },
    );
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/another telebench run \(pid \d+\)/);
    release();
    expect(existsSync(join(d, 'run.lock'))).toBe(false);
  });
});

describe('configuration JSON Schema', () => {
  it('config/telebench.schema.json is up to date (regenerate: telebench config schema)', () => {
    const file = join(PROJECT_ROOT, 'config', 'telebench.schema.json');
    expect(readFileSync(file, 'utf8')).toBe(configJsonSchema());
  });
});
