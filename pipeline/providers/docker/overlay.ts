/**
 * The overlay of a step: the files a patch (fix, test patch, model patch) changed, as git holds
 * them, which every executor writes over the instance's source tree before the command runs
 * (issue 14, section 1: a patch reaches the test tree byte-exact, with its mode and its name).
 *
 * - {@link overlayOf}: reads the changed files from a work tree where the patches were applied
 *   (bytes, never decoded text; mode and symlinks from lstat), so a binary fixture stays binary;
 * - {@link writeOverlay}: the one writer, used by the `docker` executor (into the folder it packs
 *   for the container), the `local` executor (into its copy of the tree) and the `swarm` executor
 *   (into the folder it tars into the task's configs).
 *
 * Importable by any stage and provider (no dependency but node:fs).
 */
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

/** The git modes a file of a patch can have: regular, executable, symbolic link. */
export type GitFileMode = '100644' | '100755' | '120000';

/** One file of an overlay: its bytes (for a symlink: the link target) and its git mode. */
export interface OverlayFile {
  content: Buffer;
  mode: GitFileMode;
}

/** Path relative to the tree's root (exact name, `/`-separated) -> file, or null to delete it. */
export type Overlay = Record<string, OverlayFile | null>;

/**
 * A regular file (mode 100644, or 100755 with `executable`) from text (written as UTF-8) or bytes.
 * @returns the {@link OverlayFile}
 */
export function overlayFile(content: string | Buffer, executable = false): OverlayFile {
  return {
    content: typeof content === 'string' ? Buffer.from(content, 'utf8') : content,
    mode: executable ? '100755' : '100644',
  };
}

/**
 * Reads one path of a work tree as git would store it: a symlink is mode 120000 with its target
 * as content, a file with any execute bit is 100755 (git's rule), else 100644; bytes unchanged.
 * @returns the file, or null when the path does not exist
 * @throws Error (node:fs) for a path that is a directory or cannot be read
 */
export function readOverlayFile(root: string, rel: string): OverlayFile | null {
  const abs = join(root, rel);
  let st;
  try {
    st = lstatSync(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw err;
  }
  if (st.isSymbolicLink())
    return { content: readlinkSync(abs, { encoding: 'buffer' }), mode: '120000' };
  return { content: readFileSync(abs), mode: st.mode & 0o111 ? '100755' : '100644' };
}

/**
 * The overlay of `paths` in the work tree `root` (see {@link readOverlayFile}): each path's bytes
 * and mode, or null for a path that is gone (deleted by the patch).
 * @returns a fresh {@link Overlay}
 */
export function overlayOf(root: string, paths: Iterable<string>): Overlay {
  const out: Overlay = {};
  for (const p of paths) out[p] = readOverlayFile(root, p);
  return out;
}

/**
 * Writes an overlay into `dir` (the executors' one writer): each file's exact bytes, its mode
 * (0644 / 0755, set with chmod so the umask cannot change it) or a symlink; whatever was at the
 * path before (a file, a link) is replaced. Deletions are not performed, only returned, because
 * the docker and swarm executors delete inside the container.
 * @returns the paths to delete (entries that are null)
 * @throws Error (node:fs) when a file cannot be written
 */
export function writeOverlay(dir: string, files: Overlay): string[] {
  const deleted: string[] = [];
  for (const [rel, file] of Object.entries(files)) {
    if (file === null) {
      deleted.push(rel);
      continue;
    }
    const target = join(dir, rel);
    mkdirSync(dirname(target), { recursive: true });
    rmSync(target, { force: true });
    if (file.mode === '120000') {
      symlinkSync(file.content, target);
      continue;
    }
    writeFileSync(target, file.content);
    chmodSync(target, file.mode === '100755' ? 0o755 : 0o644);
  }
  return deleted;
}
