/**
 * Content-addressed blob store: `<root>/<aa>/<rest-of-sha256>`. Writes go to a temporary file in
 * the same folder and are renamed into place, so a SIGKILL never leaves a half-written blob under
 * its final name. Storing the same bytes twice is a no-op.
 */
import { mkdirSync, writeFileSync, renameSync, readFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { sha256 } from '../hash.js';
import { TelebenchError } from '../errors.js';

export class BlobStore {
  /** @param root absolute folder of the store (created when missing) */
  constructor(readonly root: string) {
    mkdirSync(root, { recursive: true });
  }

  /** Absolute path where the blob with this sha256 lives (it may not exist). */
  path(digest: string): string {
    if (!/^[0-9a-f]{64}$/.test(digest)) {
      throw new TelebenchError('bad_digest', `not a sha256 hex digest: "${digest}"`, {
        tier: 'bug',
      });
    }
    return join(this.root, digest.slice(0, 2), digest.slice(2));
  }

  /**
   * Stores bytes (strings as UTF-8).
   * @returns the sha256 hex digest, which is the blob's name
   */
  put(data: string | Uint8Array): string {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    const digest = sha256(bytes);
    const target = this.path(digest);
    if (existsSync(target)) return digest;
    const dir = join(this.root, digest.slice(0, 2));
    mkdirSync(dir, { recursive: true });
    const tmp = join(dir, `.tmp-${randomUUID()}`);
    writeFileSync(tmp, bytes);
    renameSync(tmp, target);
    return digest;
  }

  /** True when the blob exists. */
  has(digest: string): boolean {
    return existsSync(this.path(digest));
  }

  /**
   * Reads a blob.
   * @throws TelebenchError `blob_missing` when no blob has that digest
   */
  get(digest: string): Buffer {
    const p = this.path(digest);
    if (!existsSync(p)) {
      throw new TelebenchError('blob_missing', `blob ${digest} is not in ${this.root}`, {
        tier: 'infra',
        context: { digest, root: this.root },
      });
    }
    return readFileSync(p);
  }

  /** Reads a blob as UTF-8 text. @throws like {@link get} */
  getText(digest: string): string {
    return this.get(digest).toString('utf8');
  }

  /** Size in bytes of a stored blob. @throws like {@link get} */
  size(digest: string): number {
    return statSync(this.path(digest)).size;
  }
}
