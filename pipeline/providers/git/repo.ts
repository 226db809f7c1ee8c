/**
 * Git access for the SWE-Bench 5G environments (simple-git, why: a maintained typed wrapper over
 * the real `git` binary, so we get git's own semantics for diffs, parents and fetches).
 *
 * - {@link ensureMirror}: one bare mirror per repository in the cache (all refs, incl. `refs/pull/*`).
 * - {@link commitInfo}, {@link diffSplit}, {@link fileAt}: what `swe5g.resolve` needs.
 * - {@link exportCleanRepo}: a fresh `git init` holding ONLY the base commit (shallow, no tags, no
 *   other refs), which is what goes into the instance image, so no fix commit, `refs/pull/*` or
 *   future tag can leak into what a solver sees (SWE-bench issue 465: `git log --all` showed fixes).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { SimpleGit } from 'simple-git';
import { TelebenchError } from '../../errors.js';
import { gitClient } from './client.js';
import { SECRET_ENV_VARS } from '../../secrets.js';

/** Languages whose test files the splitter knows. */
export type RepoLanguage = 'go' | 'c' | 'python';

const gitEnv = {
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'telebench',
  GIT_AUTHOR_EMAIL: 'telebench@localhost',
  GIT_COMMITTER_NAME: 'telebench',
  GIT_COMMITTER_EMAIL: 'telebench@localhost',
};

/** Host variables git (and the host toolchains we run) may see; never a secret. */
const HOST_ENV_VARS = [
  'PATH',
  'HOME',
  'TMPDIR',
  'LANG',
  'GIT_SSH_COMMAND',
  'SSL_CERT_FILE',
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'NO_PROXY',
] as const;

/**
 * The minimal environment for a host tool: `PATH`, `HOME`, `TMPDIR`, `LANG`, proxy and CA
 * variables, plus the `extra` names asked for (e.g. `GOPROXY`), each only when set. Names in
 * {@link SECRET_ENV_VARS} are never copied, even when asked for, so tokens do not reach child
 * processes (or their error messages).
 * @returns a fresh object (name -> value)
 */
export function hostEnv(extra: readonly string[] = []): Record<string, string> {
  const secret = new Set<string>(SECRET_ENV_VARS);
  const out: Record<string, string> = {};
  for (const k of [...HOST_ENV_VARS, ...extra]) {
    const v = process.env[k];
    if (v !== undefined && !secret.has(k)) out[k] = v;
  }
  return out;
}

/** A simple-git client bound to `dir` with prompts disabled, a fixed identity and {@link hostEnv}. */
export function git(dir: string): SimpleGit {
  // Only what git needs: simple-git refuses EDITOR/PAGER-like variables, and secrets stay out.
  return gitClient(dir, { ...hostEnv(), ...gitEnv });
}

/**
 * Makes sure a bare mirror of `source` (URL or local path) exists at `mirrorDir` and holds
 * `needCommits`. An existing mirror is fetched only when one of them is missing (offline friendly),
 * or always with `opts.refresh` (`swe5g.mine` keeps `<state>/mirrors` current that way).
 * @returns `mirrorDir`
 * @throws TelebenchError `git_mirror_failed` (tier transient) when clone/fetch fails;
 *   `commit_not_found` (tier content) when a commit is still missing after a fetch
 */
export async function ensureMirror(
  source: string,
  mirrorDir: string,
  needCommits: readonly string[] = [],
  opts: { refresh?: boolean } = {},
): Promise<string> {
  // One clone/fetch per mirror folder at a time within this process.
  const prev = mirrorLocks.get(mirrorDir) ?? Promise.resolve();
  const next = prev.then(
    () => ensureMirrorUnlocked(source, mirrorDir, needCommits, opts.refresh === true),
    () => ensureMirrorUnlocked(source, mirrorDir, needCommits, opts.refresh === true),
  );
  mirrorLocks.set(mirrorDir, next);
  return next;
}

const mirrorLocks = new Map<string, Promise<string>>();

async function ensureMirrorUnlocked(
  source: string,
  mirrorDir: string,
  needCommits: readonly string[],
  refresh: boolean,
): Promise<string> {
  try {
    if (!existsSync(join(mirrorDir, 'HEAD'))) {
      mkdirSync(dirname(mirrorDir), { recursive: true });
      rmSync(mirrorDir, { recursive: true, force: true });
      await git(dirname(mirrorDir)).raw(['clone', '--mirror', '--quiet', source, mirrorDir]);
    } else if (refresh || (await missingCommits(mirrorDir, needCommits)).length > 0) {
      await git(mirrorDir).raw(['fetch', '--prune', '--quiet', source, '+refs/*:refs/*']);
    }
  } catch (err) {
    throw new TelebenchError(
      'git_mirror_failed',
      `could not mirror ${source} into ${mirrorDir}: ${(err as Error).message}`,
      { tier: 'transient', context: { source, mirrorDir }, cause: err },
    );
  }
  const missing = await missingCommits(mirrorDir, needCommits);
  if (missing.length > 0) {
    throw new TelebenchError(
      'commit_not_found',
      `${source} has no commit ${missing.join(', ')} (mirror ${mirrorDir})`,
      { tier: 'content', context: { source, missing } },
    );
  }
  return mirrorDir;
}

/**
 * Commits of `shas` that `repoDir` does not hold (as commit objects). Only git's own "not there"
 * answer (`git cat-file -e` exits 1 with no message, or says the name is not valid) counts as
 * missing.
 * @throws TelebenchError `git_read_failed` (tier infra) naming the repository and commit when git
 *   fails otherwise (no repository at `repoDir`, a corrupt object store, no git binary)
 */
export async function missingCommits(repoDir: string, shas: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const sha of shas) {
    try {
      await git(repoDir).raw(['cat-file', '-e', `${sha}^{commit}`]);
    } catch (err) {
      const msg = errorText(err);
      if (
        msg === '' ||
        /Not a valid object name|is a (blob|tree|tag), not a commit|bad object/i.test(msg)
      )
        out.push(sha);
      else throw readFailed(repoDir, sha, 'check for', err);
    }
  }
  return out;
}

/** The message of a simple-git failure (git's stderr), trimmed. */
function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).trim();
}

function readFailed(repoDir: string, commit: string, what: string, err: unknown): TelebenchError {
  return new TelebenchError(
    'git_read_failed',
    `git could not ${what} ${commit} in ${repoDir}: ${errorText(err) || 'git failed with no message'}`,
    { tier: 'infra', context: { repoDir, commit }, cause: err },
  );
}

/** Parents, committer date (ISO 8601) and subject of one commit. @throws GitError when unknown */
export async function commitInfo(
  repoDir: string,
  sha: string,
): Promise<{ sha: string; parents: string[]; date: string; subject: string }> {
  const out = await git(repoDir).raw(['show', '-s', '--format=%H%n%P%n%cI%n%s', sha]);
  const [full = '', parents = '', date = '', subject = ''] = out.split('\n');
  return { sha: full, parents: parents.split(' ').filter(Boolean), date, subject };
}

/**
 * Is `path` a test file for `language`? Go: `*_test.go` and `testdata/`; Python: `test_*.py`,
 * `*_test.py`, `conftest.py` and files under `test/` or `tests/`; C: files under `test/`,
 * `tests/` or named `test_*.c`/`*_test.c`. (SWE-bench splits `patch`/`test_patch` the same way,
 * by path.)
 */
export function isTestPath(language: RepoLanguage, path: string): boolean {
  const base = path.split('/').pop() ?? path;
  const inTestDir = /(^|\/)(tests?|testdata)\//.test(path);
  switch (language) {
    case 'go':
      return base.endsWith('_test.go') || /(^|\/)testdata\//.test(path);
    case 'python':
      return (
        /^test_.*\.py$/.test(base) || /_test\.py$/.test(base) || base === 'conftest.py' || inTestDir
      );
    case 'c':
      return inTestDir || /^test_.*\.[ch]$/.test(base) || /_test\.[ch]$/.test(base);
  }
}

/**
 * Splits git output written with `-z` into paths: NUL-separated, never quoted, so a name with
 * non-ASCII letters (`größe.go`), a space, a quote or a newline comes back exactly as the file is
 * named (without `-z` git prints `"gr\303\266\303\237e.go"`). The one reader of path lists from git.
 * @param out the output of a git command run with `-z` (`diff --name-only -z`, `ls-tree -z
 *   --name-only`, `ls-files -z`)
 * @returns the paths in git's order, empty entries dropped
 */
export function splitNulPaths(out: string): string[] {
  return out.split('\0').filter((p) => p !== '');
}

/**
 * Undoes git's C-style quoting of a path in a patch (`"gr\\303\\266\\303\\237e.go"`, used for
 * names with non-ASCII bytes, control characters, `"` or `\\`): octal escapes are bytes, decoded
 * as UTF-8 together. A name that does not start with `"` is returned as it is.
 * @returns the exact file name
 */
export function unquoteGitPath(name: string): string {
  if (!name.startsWith('"') || !name.endsWith('"') || name.length < 2) return name;
  const body = name.slice(1, -1);
  const bytes: number[] = [];
  const simple: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13 };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const n = body[i + 1] ?? '';
    if (/[0-7]/.test(n)) {
      bytes.push(parseInt(body.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(simple[n] ?? n.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** One file of a unified diff: its path before (null when created) and after (null when deleted). */
export interface PatchFile {
  oldPath: string | null;
  newPath: string | null;
}

/**
 * The files a unified diff touches, with exact names: the one reader of paths in patch text (git
 * diffs with `diff --git` headers, quoted or not, binary, mode-only, renames; and plain diffs of
 * `---`/`+++` lines). Hunk bodies are skipped by their line counts, so a removed line that starts
 * with `-- ` is never taken for a header.
 * @returns the files in the patch's order
 */
export function patchFiles(patch: string): PatchFile[] {
  const out: PatchFile[] = [];
  const lines = patch.split('\n');
  // a path token of a `---`/`+++` line or a rename line: quoted, or up to a tab (GNU diff dates)
  const token = (s: string): string => unquoteGitPath(s.startsWith('"') ? s : s.split('\t')[0]!);
  const side = (s: string, prefix: string): string | null => {
    const t = token(s);
    if (t === '/dev/null') return null;
    return t.startsWith(prefix) ? t.slice(prefix.length) : t;
  };
  let cur:
    (PatchFile & { git: boolean; lines?: boolean; created: boolean; deleted: boolean }) | undefined;
  const close = (): void => {
    if (!cur) return;
    out.push({
      oldPath: cur.created ? null : cur.oldPath,
      newPath: cur.deleted ? null : cur.newPath,
    });
    cur = undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('diff --git ')) {
      close();
      const rest = line.slice('diff --git '.length);
      let a: string | null = null;
      let b: string | null = null;
      if (rest.startsWith('"')) {
        const m = /^("(?:[^"\\]|\\.)*") (.*)$/.exec(rest);
        if (m) {
          a = side(m[1]!, 'a/');
          b = side(m[2]!, 'b/');
        }
      } else {
        // `a/P b/P` (no rename: both names equal, so the line splits in its middle)
        const len = (rest.length - 5) / 2;
        if (
          Number.isInteger(len) &&
          rest.startsWith('a/') &&
          rest.slice(len + 2, len + 5) === ' b/'
        )
          a = b = rest.slice(2, len + 2);
        else {
          const m = /^(\S+) (.*)$/.exec(rest);
          if (m) {
            a = side(m[1]!, 'a/');
            b = side(m[2]!, 'b/');
          }
        }
      }
      cur = { oldPath: a, newPath: b, git: true, created: false, deleted: false };
      continue;
    }
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (hunk && cur) {
      let oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
      let newLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      while ((oldLeft > 0 || newLeft > 0) && i + 1 < lines.length) {
        const l = lines[++i]!;
        if (l.startsWith('\\')) continue; // "\ No newline at end of file"
        if (l.startsWith('-')) oldLeft--;
        else if (l.startsWith('+')) newLeft--;
        else {
          oldLeft--;
          newLeft--;
        }
      }
      continue;
    }
    if (line.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ')) {
      if (!cur?.git || cur.lines) close();
      const oldPath = side(line.slice(4), 'a/');
      const newPath = side(lines[i + 1]!.slice(4), 'b/');
      if (cur?.git) {
        cur.lines = true;
        cur.oldPath = oldPath ?? cur.oldPath;
        cur.newPath = newPath ?? cur.newPath;
        if (oldPath === null) cur.created = true;
        if (newPath === null) cur.deleted = true;
      } else {
        cur = {
          oldPath,
          newPath,
          git: false,
          created: oldPath === null,
          deleted: newPath === null,
        };
      }
      i++;
      continue;
    }
    if (!cur?.git) continue;
    if (line.startsWith('new file mode ')) cur.created = true;
    else if (line.startsWith('deleted file mode ')) cur.deleted = true;
    else if (line.startsWith('rename from ') || line.startsWith('copy from '))
      cur.oldPath = token(line.replace(/^(rename|copy) from /, ''));
    else if (line.startsWith('rename to ') || line.startsWith('copy to '))
      cur.newPath = token(line.replace(/^(rename|copy) to /, ''));
  }
  close();
  return out;
}

/**
 * Paths a git command lists, read NUL-separated (`-z` is added to `args`).
 * @param args the git command without `-z`, e.g. `['diff', '--name-only', '--no-renames', a, b]`
 * @throws GitError (simple-git) when git fails
 */
export async function gitPaths(repoDir: string, args: readonly string[]): Promise<string[]> {
  const [cmd, ...rest] = args;
  return splitNulPaths(await git(repoDir).raw([cmd!, '-z', ...rest]));
}

/**
 * Runs git in `repoDir` and returns its stdout as bytes (no decoding), with {@link hostEnv}.
 * @throws Error naming the git command and its stderr when git exits non-zero
 */
function gitBytes(repoDir: string, args: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      {
        cwd: repoDir,
        env: { ...hostEnv(), ...gitEnv },
        encoding: 'buffer',
        maxBuffer: 1 << 30,
      },
      (err, stdout, stderr) => {
        if (err)
          reject(
            new Error(
              `git ${args.join(' ')} in ${repoDir}: ${stderr.toString('utf8').trim() || err.message}`,
            ),
          );
        else resolve(stdout);
      },
    );
  });
}

/**
 * Unified diff `from..to` split into source and test files (binary diffs included, full index).
 * The patch text is exact: a file whose text diff holds bytes that are not UTF-8 is written as a
 * git binary patch, so no byte is lost to decoding (issue 14, section 1).
 * @returns `patch` (non-test files), `test_patch` (test files), and the changed paths of each
 *   (exact names, read NUL-separated)
 */
export async function diffSplit(
  repoDir: string,
  from: string,
  to: string,
  language: RepoLanguage,
): Promise<{ patch: string; test_patch: string; source_files: string[]; test_files: string[] }> {
  const names = await gitPaths(repoDir, ['diff', '--name-only', '--no-renames', from, to]);
  const test_files = names.filter((p) => isTestPath(language, p));
  const source_files = names.filter((p) => !isTestPath(language, p));
  const diffOf = async (files: string[]): Promise<string> => {
    if (files.length === 0) return '';
    // pathspecs taken literally: a name with '*' or '[' names only itself; `attributesFile` (if
    // given) overrides the repository's attributes
    const diff = (fs: string[], attributesFile?: string): Promise<Buffer> =>
      gitBytes(repoDir, [
        ...(attributesFile ? ['-c', `core.attributesFile=${attributesFile}`] : []),
        'diff',
        '--binary',
        '--no-renames',
        from,
        to,
        '--',
        ...fs.map((f) => `:(literal)${f}`),
      ]);
    const whole = await diff(files);
    if (isUtf8(whole)) return whole.toString('utf8');
    // A text diff holding bytes that are not UTF-8 (a Latin-1 comment) cannot live in the
    // patch string unchanged: such files go as git binary patches (base85, exact bytes).
    const attrs = join(mkdtempSync(join(tmpdir(), 'telebench-attr-')), 'attributes');
    writeFileSync(attrs, '* binary\n');
    try {
      const parts: Buffer[] = [];
      for (const f of files) {
        const one = await diff([f]);
        parts.push(isUtf8(one) ? one : await diff([f], attrs));
      }
      return Buffer.concat(parts).toString('utf8');
    } finally {
      rmSync(dirname(attrs), { recursive: true, force: true });
    }
  };
  return {
    patch: await diffOf(source_files),
    test_patch: await diffOf(test_files),
    source_files,
    test_files,
  };
}

/**
 * Content of `path` at `commit`, or undefined when git says the file does not exist there
 * (`path '<p>' does not exist in '<commit>'` / `exists on disk, but not in '<commit>'`).
 * @throws TelebenchError `commit_not_found` (tier content) when `repoDir` lacks `commit`;
 *   `git_read_failed` (tier infra) naming the repository and commit for any other failure (no
 *   repository at `repoDir`, a corrupt mirror, no git binary)
 */
export async function fileAt(
  repoDir: string,
  commit: string,
  path: string,
): Promise<string | undefined> {
  try {
    return await git(repoDir).raw(['show', `${commit}:${path}`]);
  } catch (err) {
    if (!/does not exist in '|exists on disk, but not in '/.test(errorText(err)))
      throw readFailed(repoDir, commit, `read ${path} at`, err);
    // git gives the same answer for a full-length id it does not know: check the commit.
    if ((await missingCommits(repoDir, [commit])).length > 0) {
      throw new TelebenchError(
        'commit_not_found',
        `${repoDir} has no commit ${commit} (reading ${path})`,
        { tier: 'content', context: { repoDir, commit, path } },
      );
    }
    return undefined;
  }
}

/** Tags whose commit is an ancestor of (or equal to) `commit`, newest first (by creator date). */
export async function tagsReaching(repoDir: string, commit: string): Promise<string[]> {
  const out = await git(repoDir).raw([
    'tag',
    '--merged',
    commit,
    '--sort=-creatordate',
    '--format=%(refname:short)',
  ]);
  return out.split('\n').filter(Boolean);
}

/** A file of a commit's tree whose blob the repository lacks (a partial or damaged mirror). */
export interface AbsentFile {
  path: string;
  object: string;
}

/**
 * Files no test reads: documents, images, media and office files (by extension). Issue 21: the
 * Magma snapshot lacks a `.docx` and some `.gif`s; a source export may go on without them.
 */
const DOCUMENT_RE =
  /\.(?:docx?|pptx?|xlsx?|odt|odp|ods|pdf|png|jpe?g|gif|svg|ico|bmp|webp|tiff?|psd|ai|eps|mp[34]|mov|avi|webm|wav|key|pages|numbers|vsdx?|drawio)$/i;

/** True when `path` is a file no test reads ({@link DOCUMENT_RE}: documents, images, media). */
export function isDocumentPath(path: string): boolean {
  return DOCUMENT_RE.test(path);
}

/**
 * Files of `commit`'s tree whose blobs `repoDir` does not hold (`git ls-tree -r` reads trees only;
 * one `git cat-file --batch-check` answers every blob). Submodule entries (commits) are not blobs.
 * @returns the absent files, in tree order ([] for a complete mirror)
 * @throws TelebenchError `git_read_failed` (tier infra) naming repository and commit when a tree
 *   cannot be read
 */
export async function absentFiles(repoDir: string, commit: string): Promise<AbsentFile[]> {
  let listing: string;
  try {
    listing = await git(repoDir).raw(['ls-tree', '-r', '-z', '--full-tree', commit]);
  } catch (err) {
    throw readFailed(repoDir, commit, 'list the tree of', err);
  }
  const blobs: AbsentFile[] = [];
  for (const rec of listing.split('\0')) {
    const m = /^\d+ blob ([0-9a-f]{40})\t(.*)$/s.exec(rec);
    if (m) blobs.push({ object: m[1]!, path: m[2]! });
  }
  if (blobs.length === 0) return [];
  const answer = await new Promise<string>((resolve, reject) => {
    const p = execFile(
      'git',
      ['cat-file', '--batch-check=%(objectname)'],
      {
        cwd: repoDir,
        env: { ...hostEnv(), ...gitEnv, GIT_NO_LAZY_FETCH: '1' },
        maxBuffer: 1 << 30,
      },
      (err, stdout, stderr) =>
        err
          ? reject(readFailed(repoDir, commit, 'check the blobs of', stderr || err))
          : resolve(stdout),
    );
    p.stdin?.end([...new Set(blobs.map((b) => b.object))].join('\n') + '\n');
  });
  const missing = new Set(
    answer
      .split('\n')
      .map((l) => /^([0-9a-f]{40}) missing$/.exec(l.trim())?.[1])
      .filter((x): x is string => x !== undefined),
  );
  return blobs.filter((b) => missing.has(b.object));
}

/**
 * The rule of every export from a partial mirror: it may go on without `absent` files only when
 * each is a document no test reads ({@link isDocumentPath}) or one `unread` names.
 * @throws TelebenchError `source_objects_missing` (tier content) naming the absent files a build
 *   or test may read (the first ten, then how many more)
 */
export function refuseReadAbsent(
  mirrorDir: string,
  commit: string,
  absent: readonly AbsentFile[],
  unread: (path: string) => boolean,
): void {
  const needed = absent.filter((f) => !isDocumentPath(f.path) && !unread(f.path));
  if (needed.length === 0) return;
  throw new TelebenchError(
    'source_objects_missing',
    `${mirrorDir} lacks ${needed.length} file(s) of ${commit} that a build or test may read: ${needed
      .slice(0, 10)
      .map((f) => `${f.path} (${f.object})`)
      .join(', ')}${needed.length > 10 ? `, and ${needed.length - 10} more` : ''}`,
    { tier: 'content', context: { mirrorDir, commit, absent: needed } },
  );
}

/**
 * Creates `dest` as a fresh git repository that holds only `commit` (fetched with `--depth=1
 * --no-tags` from `mirrorDir`) checked out on branch `main`; FETCH_HEAD, reflogs and hooks are
 * removed. This is the source tree of an instance image: nothing after `commit` is reachable or
 * even present as an object.
 *
 * When the mirror lacks blobs of `commit`'s tree (issue 21: a snapshot without some large
 * documents), the export goes on only if every absent file is a document no test reads
 * ({@link isDocumentPath}) or that `unread` says the build never opens (a monorepo folder's
 * instance: the files its resolve listed in `absent_files`): the commit, its trees and the
 * present blobs are copied into `dest`
 * (`git pack-objects` | `git index-pack`, `commit` marked shallow), and the absent files are
 * left out of the work tree (sparse checkout, skip-worktree), so `git status` stays clean.
 * @returns the files left out (`[]` for a complete mirror): the caller records them in the
 *   instance's provenance
 * @throws TelebenchError `source_objects_missing` (tier content) listing the absent files when
 *   any of them may be read by a build or test (source, build files, data); `git_export_failed`
 *   (tier infra) when the fetch or checkout fails
 */
export async function exportCleanRepo(
  mirrorDir: string,
  commit: string,
  dest: string,
  unread: (path: string) => boolean = () => false,
): Promise<AbsentFile[]> {
  const absent = await absentFiles(mirrorDir, commit);
  refuseReadAbsent(mirrorDir, commit, absent, unread);
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  const g = git(dest);
  try {
    await g.raw(['init', '--quiet', '--initial-branch=main']);
    if (absent.length > 0) await copyWithout(mirrorDir, commit, dest, absent);
    else {
      // Protocol v2 file transport lets the client ask for any object by id; only that commit's
      // history up to depth 1 is transferred.
      await g.raw([
        '-c',
        'protocol.version=2',
        'fetch',
        '--quiet',
        '--depth=1',
        '--no-tags',
        `file://${mirrorDir}`,
        commit,
      ]);
      await g.raw(['checkout', '--quiet', '-B', 'main', commit]);
    }
    await g.raw(['reflog', 'expire', '--expire=now', '--all']);
    // gc would walk the absent blobs: a partial export holds only what was copied anyway
    if (absent.length === 0) await g.raw(['gc', '--quiet', '--prune=now']);
  } catch (err) {
    throw new TelebenchError(
      'git_export_failed',
      `could not export ${commit} of ${mirrorDir} into a fresh repository: ${(err as Error).message}`,
      { tier: 'infra', context: { mirrorDir, commit }, cause: err },
    );
  }
  rmSync(join(dest, '.git', 'FETCH_HEAD'), { force: true });
  rmSync(join(dest, '.git', 'hooks'), { recursive: true, force: true });
  rmSync(join(dest, '.git', 'logs'), { recursive: true, force: true });
  return absent;
}

/**
 * Copies `commit`, its trees and its present blobs from `mirrorDir` into the fresh repository
 * `dest`, marks `commit` shallow, and checks it out on `main` without the `absent` files.
 */
async function copyWithout(
  mirrorDir: string,
  commit: string,
  dest: string,
  absent: readonly AbsentFile[],
): Promise<void> {
  const gone = new Set(absent.map((f) => f.object));
  const listing = await git(mirrorDir).raw(['ls-tree', '-r', '-t', '-z', '--full-tree', commit]);
  const objects = [commit, (await git(mirrorDir).raw(['rev-parse', `${commit}^{tree}`])).trim()];
  for (const rec of listing.split('\0')) {
    const m = /^\d+ (blob|tree) ([0-9a-f]{40})\t/.exec(rec);
    if (m && !gone.has(m[2]!)) objects.push(m[2]!);
  }
  const env = { ...hostEnv(), ...gitEnv, GIT_NO_LAZY_FETCH: '1' };
  // pack-objects | index-pack: the objects go from the mirror into `dest` without a buffer
  const pack = spawn('git', ['pack-objects', '--stdout', '-q'], { cwd: mirrorDir, env });
  const index = spawn('git', ['index-pack', '--stdin', '--fix-thin'], { cwd: dest, env });
  let errs = '';
  pack.stderr.on('data', (d: Buffer) => (errs += d.toString('utf8')));
  index.stderr.on('data', (d: Buffer) => (errs += d.toString('utf8')));
  index.stdout.resume();
  pack.stdout.pipe(index.stdin);
  pack.stdin.end([...new Set(objects)].join('\n') + '\n');
  const code = (p: typeof pack): Promise<number | null> =>
    new Promise((resolve, reject) => {
      p.on('error', reject);
      p.on('close', resolve);
    });
  const [pc, ic] = await Promise.all([code(pack), code(index)]);
  if (pc !== 0 || ic !== 0) throw new Error(`git pack-objects | git index-pack: ${errs.trim()}`);
  writeFileSync(join(dest, '.git', 'shallow'), `${commit}\n`);
  const g = git(dest);
  await g.raw(['update-ref', 'refs/heads/main', commit]);
  await g.raw(['config', 'core.sparseCheckout', 'true']);
  const literal = (p: string): string => `/${p.replace(/([\\*?[!#])/g, '\\$1')}`;
  mkdirSync(join(dest, '.git', 'info'), { recursive: true });
  writeFileSync(
    join(dest, '.git', 'info', 'sparse-checkout'),
    ['/*', ...absent.map((f) => `!${literal(f.path)}`)].join('\n') + '\n',
  );
  await g.raw(['read-tree', '-mu', 'HEAD']);
}

/**
 * Paths of a `--numstat -z` listing (`git apply` or `git diff`): each record is
 * `added\tdeleted\tpath\0`, or for a rename or copy `added\tdeleted\t\0old\0new\0` (both paths
 * returned). Read NUL-separated through {@link splitNulPaths}'s rule: names come back exactly as the
 * files are named, never quoted (`größe.go`, not `"gr\303\266\303\237e.go"`).
 * @returns the paths in git's order (a rename gives its old then its new path)
 */
export function numstatPaths(out: string): string[] {
  const recs = out.split('\0');
  const paths: string[] = [];
  for (let i = 0; i < recs.length; i++) {
    const m = /^\n?(?:\d+|-)\t(?:\d+|-)\t(.*)$/s.exec(recs[i]!);
    if (!m) continue;
    if (m[1] !== '') paths.push(m[1]!);
    else {
      // rename/copy: the old and the new path follow as their own records
      if (recs[i + 1]) paths.push(recs[i + 1]!);
      if (recs[i + 2]) paths.push(recs[i + 2]!);
      i += 2;
    }
  }
  return paths;
}

/**
 * Applies a unified diff (text or `--binary`) to the work tree `dir` (`git apply`, no 3-way
 * fallback). The touched paths are read NUL-separated (`--numstat -z`, {@link numstatPaths}), plus
 * the old path of a rename ({@link patchFiles}); a touched path that is no longer in the tree
 * afterwards (lstat) is a deletion.
 * @returns the paths the patch touches, split into present afterwards (`changed`: new, modified,
 *   mode-changed, renamed-to) and gone (`deleted`), exact names relative to `dir`
 * @throws TelebenchError `patch_does_not_apply` (tier content) naming the patch's `label`
 */
export async function applyPatch(
  dir: string,
  patch: string | Buffer,
  label: string,
): Promise<{ changed: string[]; deleted: string[] }> {
  const body = typeof patch === 'string' ? Buffer.from(patch, 'utf8') : patch;
  if (body.toString('latin1').trim() === '') return { changed: [], deleted: [] };
  const file = join(dir, `.telebench-${label}.patch`);
  writeFileSync(
    file,
    body[body.length - 1] === 0x0a ? body : Buffer.concat([body, Buffer.from('\n')]),
  );
  let stat: string;
  try {
    stat = await git(dir).raw(['apply', '--numstat', '-z', file]);
    await git(dir).raw(['apply', '--whitespace=nowarn', file]);
  } catch (err) {
    throw new TelebenchError(
      'patch_does_not_apply',
      `the ${label} does not apply at the base commit: ${(err as Error).message.trim()}`,
      { tier: 'content', context: { label } },
    );
  } finally {
    rmSync(file, { force: true });
  }
  // git apply --numstat names only the new path of a rename: the old one comes from the patch text
  const renamedFrom = patchFiles(body.toString('utf8')).flatMap((f) =>
    f.oldPath !== null && f.newPath !== null && f.oldPath !== f.newPath ? [f.oldPath] : [],
  );
  const touched = [...new Set([...numstatPaths(stat), ...renamedFrom])];
  const present = (p: string): boolean => {
    try {
      lstatSync(join(dir, p));
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return false;
      throw err;
    }
  };
  return { changed: touched.filter(present), deleted: touched.filter((p) => !present(p)) };
}
