/**
 * The state directory: `--state DIR`, else `TELEBENCH_HOME`, else `./cache`. Layout:
 * `state.db` (SQLite store), `blobs/` (content-addressed artifacts), `runs/<run_id>/`
 * (events.jsonl, manifest.json), `mirrors/`, `downloads/`, `releases/` (used by the stages).
 */
import { resolve, join, dirname } from 'node:path';
import { tmpdir } from 'node:os';
import {
  accessSync,
  constants as fsConstants,
  copyFileSync,
  mkdtempSync,
  rmSync,
  statSync,
  mkdirSync,
  openSync,
  closeSync,
  readFileSync,
  writeFileSync,
  unlinkSync,
  existsSync,
} from 'node:fs';
import { Store } from './store/store.js';
import { BlobStore } from './store/blobs.js';
import { TelebenchError } from './errors.js';

/** Absolute state directory from the flag, the environment, or the default `./cache`. */
export function resolveStateDir(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string {
  return resolve(flag ?? env.TELEBENCH_HOME ?? 'cache');
}

export interface OpenState {
  dir: string;
  store: Store;
  blobs: BlobStore;
  close(): void;
}

const CAUSES: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOTDIR: 'a part of the path is a file, not a folder',
  EEXIST: 'it exists and is not a folder',
  ENOSPC: 'no space left on the device',
};

function cause(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  return CAUSES[code] ? `${CAUSES[code]} (${code})` : (err as Error).message;
}

/** Whether this process may write in `dir` (false on a read-only mount or folder). */
function writable(dir: string): { ok: true } | { ok: false; why: string } {
  try {
    accessSync(dir, fsConstants.W_OK);
    return { ok: true };
  } catch (err) {
    return { ok: false, why: cause(err) };
  }
}

/**
 * `mkdir -p` one folder at a time: finds the nearest existing ancestor of `dir` and creates each
 * missing folder below it with a plain `mkdir`. Node 20's `mkdirSync(dir, { recursive: true })`
 * never returns when a parent's `mkdir` fails with ENOENT, e.g. under /proc (`--state /proc/x/y`
 * spun the CPU forever); this way the first failing `mkdir` throws its own error.
 * @param dir folder to create (absolute or relative to the working folder)
 * @throws the `mkdir` error (ENOENT, EACCES, EROFS, ENOTDIR when an ancestor is a file)
 */
function makeFolders(dir: string): void {
  const missing: string[] = [];
  let d = resolve(dir);
  while (!existsSync(d)) {
    missing.unshift(d);
    const parent = dirname(d);
    if (parent === d) break;
    d = parent;
  }
  for (const m of missing) mkdirSync(m);
}

/**
 * Opens (creating) the store and blob store of a state directory.
 *
 * `mode: 'read'` (status, items, show, report) also works on a read-only folder: the store files
 * are copied to a temporary folder and read there (SQLite cannot open a WAL store where it may not
 * create its `-shm` file), the copy removed on `close()`, and `readOnly` is set.
 * @throws TelebenchError `state_dir_unusable` (tier config, exit 2) naming the folder and the cause
 *   when it cannot be created or is not a folder; `state_read_only` (tier config) when a command
 *   that writes meets a read-only folder; otherwise like {@link Store}
 */
export function openState(
  dir: string,
  opts: { mode?: 'write' | 'read' } = {},
): OpenState & { readOnly?: boolean } {
  try {
    makeFolders(dir);
    if (!statSync(dir).isDirectory())
      throw Object.assign(new Error('not a folder'), { code: 'EEXIST' });
  } catch (err) {
    throw new TelebenchError(
      'state_dir_unusable',
      `cannot create the state folder ${dir}: ${cause(err)}; choose another --state (or TELEBENCH_HOME)`,
      { tier: 'config', context: { dir }, cause: err },
    );
  }
  const w = writable(dir);
  if (!w.ok && opts.mode !== 'read') {
    throw new TelebenchError(
      'state_read_only',
      `the state folder ${dir} is read-only: ${w.why}; telebench writes its store, blobs and run logs there. Make it writable or choose another --state (status, items, show and report can still read it)`,
      { tier: 'config', context: { dir } },
    );
  }
  if (!w.ok) {
    const copy = mkdtempSync(join(tmpdir(), 'telebench-readonly-'));
    for (const f of ['state.db', 'state.db-wal']) {
      if (existsSync(join(dir, f))) copyFileSync(join(dir, f), join(copy, f));
    }
    const store = new Store(join(copy, 'state.db'));
    const blobs = new BlobStore(join(existsSync(join(dir, 'blobs')) ? dir : copy, 'blobs'));
    return {
      dir,
      store,
      blobs,
      readOnly: true,
      close: () => {
        store.close();
        rmSync(copy, { recursive: true, force: true });
      },
    };
  }
  const store = new Store(join(dir, 'state.db'));
  const blobs = new BlobStore(join(dir, 'blobs'));
  return { dir, store, blobs, close: () => store.close() };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The pid of the live process holding the run lock of `dir`, or undefined when no run is in
 * progress (no lock, or the lock of a killed process).
 */
export function runLockHolder(dir: string): number | undefined {
  const file = join(dir, 'run.lock');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8'));
  return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : undefined;
}

/**
 * Takes the run lock of a state directory (`run.lock`, holding the pid). A lock left by a killed
 * process (its pid no longer alive) is taken over.
 * @returns a function that releases the lock
 * @throws TelebenchError `state_locked` (tier config) when another live process holds it
 */
export function lockState(dir: string): () => void {
  const file = join(dir, 'run.lock');
  for (let tries = 0; tries < 3; tries++) {
    try {
      const fd = openSync(file, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        if (existsSync(file) && readFileSync(file, 'utf8') === String(process.pid))
          unlinkSync(file);
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(file, 'utf8'));
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new TelebenchError(
          'state_locked',
          `another telebench run (pid ${pid}) is using the state directory ${dir}; wait for it, stop it, or choose another --state`,
          { tier: 'config', context: { dir, pid } },
        );
      }
      unlinkSync(file); // stale lock of a killed run
    }
  }
  throw new TelebenchError('state_locked', `cannot take the run lock ${file}`, { tier: 'config' });
}
