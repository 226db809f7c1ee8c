/**
 * The state directory: `--state DIR`, else `TELEBENCH_HOME`, else `./cache`. Layout:
 * `state.db` (SQLite store), `blobs/` (content-addressed artifacts), `runs/<run_id>/`
 * (events.jsonl, manifest.json), `mirrors/`, `downloads/`, `releases/` (used by the stages).
 */
import { resolve, join } from 'node:path';
import {
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

/** Opens (creating) the store and blob store of a state directory. @throws like {@link Store} */
export function openState(dir: string): OpenState {
  mkdirSync(dir, { recursive: true });
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
