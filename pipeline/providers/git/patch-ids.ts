/**
 * Changed files and `git patch-id --stable` of many diffs at once, for the git mirror source
 * (`mirror-source.ts`): one `git diff-tree --stdin -p` stream piped through one `git patch-id
 * --stable`, instead of one process per commit (Magma's 12,230 commits and 10,294 PR heads). A
 * diff that needs an object the mirror lacks (a partial clone without some large blobs) is
 * reported with the object and its paths; the other diffs go on.
 *
 * Git's own semantics decide: the patch-id is git's (`--stable`: the sum of per-file hashes, so
 * file order does not matter; whitespace and line numbers ignored), the changed lines are the
 * diff's own `+`/`-` lines (what `git diff --numstat` counts; a binary file counts 0/0).
 */
import { spawn } from 'node:child_process';
import { TelebenchError } from '../../errors.js';
import { hostEnv, patchFiles } from './repo.js';

/** One diff: `to` against its first parent (`from` null; a root commit against the empty tree), or `from..to`. */
export interface DiffRequest {
  from: string | null;
  to: string;
}

/** A changed file of a diff, with its added and deleted lines. */
export interface DiffFile {
  path: string;
  additions: number;
  deletions: number;
}

/** What one diff is: its patch-id (null when the diff is empty) and its changed files. */
export interface DiffFacts {
  patch_id: string | null;
  files: DiffFile[];
}

/** A diff that could not be read: the object git could not read and the paths that name it. */
export interface MissingObjectDiff {
  request: DiffRequest;
  object: string;
  /** Paths of the diff whose old or new blob is `object` ([] when git named no such path). */
  paths: string[];
}

/** A cache of {@link DiffFacts} by {@link diffKey} (the run's key-value store): objects never change. */
export interface DiffCache {
  get(key: string): DiffFacts | undefined;
  set(key: string, value: DiffFacts): void;
}

/** The cache key of a request: `to` alone, or `from..to`. */
export function diffKey(r: DiffRequest): string {
  return r.from ? `${r.from}..${r.to}` : r.to;
}

const GIT_ENV = { GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', GIT_NO_LAZY_FETCH: '1' };

/** Git's words for an object it cannot read (`unable to read <sha>`, `bad object`, `missing blob`). */
const MISSING_RE =
  /(?:unable to read|bad object|missing (?:blob|tree|object)|could not read|invalid object)\s+(?:tree\s+)?([0-9a-f]{40})/i;

/**
 * Changed files and patch-id of every request, read from cache where it has them.
 * @param gitDir a git directory
 * @param requests diffs to read (duplicates are read once)
 * @param cache optional cache by {@link diffKey}; new results are written to it
 * @returns `facts` by {@link diffKey} (every request that could be read) and `missing`: the
 *   requests whose diff needs an object the repository lacks, with the object and its paths
 * @throws TelebenchError `git_read_failed` (tier infra) naming the repository when git fails for
 *   another reason than an absent object
 */
export async function diffFacts(
  gitDir: string,
  requests: readonly DiffRequest[],
  cache?: DiffCache,
): Promise<{ facts: Map<string, DiffFacts>; missing: MissingObjectDiff[] }> {
  const facts = new Map<string, DiffFacts>();
  const missing: MissingObjectDiff[] = [];
  const todo: DiffRequest[] = [];
  const queued = new Set<string>();
  for (const r of requests) {
    const k = diffKey(r);
    if (queued.has(k) || facts.has(k)) continue;
    const hit = cache?.get(k);
    if (hit) facts.set(k, hit);
    else {
      queued.add(k);
      todo.push(r);
    }
  }
  // Singles and pairs in separate runs: a section is named by its `to` commit, unique per run.
  for (const group of [todo.filter((r) => !r.from), todo.filter((r) => r.from)])
    await readGroup(gitDir, group, facts, missing, cache);
  return { facts, missing };
}

/** Reads one group of requests whose `to` commits are distinct, going on past absent objects. */
async function readGroup(
  gitDir: string,
  group: DiffRequest[],
  facts: Map<string, DiffFacts>,
  missing: MissingObjectDiff[],
  cache?: DiffCache,
): Promise<void> {
  let todo = group;
  const knownMissing = new Set<string>();
  while (todo.length > 0) {
    const run = await streamDiffs(gitDir, todo);
    for (const [i, f] of run.done) {
      const k = diffKey(todo[i]!);
      facts.set(k, f);
      cache?.set(k, f);
    }
    if (run.failure === undefined) return;
    // The first request without a complete section is where git stopped: find every remaining
    // request whose diff names the object git could not read, and go on without them.
    const rest = todo.slice(run.done.size);
    const object = run.failure.object;
    if (knownMissing.has(object) && rest.length === todo.length)
      throw gitFailed(gitDir, `${run.failure.message} (again after skipping it)`);
    knownMissing.add(object);
    const named = await requestsNaming(gitDir, rest, object);
    const drop = named.size > 0 ? named : new Map([[0, [] as string[]]]);
    for (const [i, paths] of drop) missing.push({ request: rest[i]!, object, paths });
    todo = rest.filter((_, i) => !drop.has(i));
  }
}

function gitFailed(gitDir: string, message: string): TelebenchError {
  return new TelebenchError(
    'git_read_failed',
    `git could not read diffs in ${gitDir}: ${message}`,
    {
      tier: 'infra',
      context: { gitDir },
    },
  );
}

function stdinLines(reqs: readonly DiffRequest[]): string {
  // `<commit> <parent>`: diff-tree --stdin reads a line as a commit and the parents to diff it against
  return reqs.map((r) => (r.from ? `${r.to} ${r.from}` : r.to)).join('\n') + '\n';
}

/**
 * Scans a diff-tree stream chunk by chunk: counts each file's `+`/`-` hunk lines and keeps only
 * the header lines of each file (for its exact path), without copying the diff bodies.
 */
class SectionScanner {
  /** Changed files of each section whose end was seen, by section index. */
  readonly files = new Map<number, DiffFile[]>();
  /** Sections started so far - 1 (the index of the section being read). */
  index = -1;
  private cur: DiffFile[] = [];
  private file: DiffFile | undefined;
  private header: string[] = [];
  private inHunk = false;
  private rest: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): void {
    const buf = this.rest.length > 0 ? Buffer.concat([this.rest, chunk]) : chunk;
    let start = 0;
    for (let i = buf.indexOf(10, start); i >= 0; i = buf.indexOf(10, start)) {
      this.line(buf, start, i);
      start = i + 1;
    }
    this.rest = Buffer.from(buf.subarray(start));
  }

  /** Ends the stream: the last section is complete when git exited cleanly. */
  end(complete: boolean): void {
    if (this.rest.length > 0) this.line(this.rest, 0, this.rest.length);
    this.rest = Buffer.alloc(0);
    if (complete) this.closeSection();
  }

  private line(buf: Buffer, s: number, e: number): void {
    const c = buf[s];
    if (c === 0x63 /* c */ && e - s === 47 && buf.toString('latin1', s, s + 7) === 'commit ') {
      this.closeSection();
      this.index++;
      return;
    }
    if (c === 0x64 /* d */ && buf.toString('latin1', s, s + 11) === 'diff --git ') {
      this.closeFile();
      this.file = { path: '', additions: 0, deletions: 0 };
      this.header = [buf.toString('utf8', s, e)];
      this.inHunk = false;
    } else if (!this.file) return;
    else if (c === 0x40 /* @ */ && buf[s + 1] === 0x40) this.inHunk = true;
    else if (this.inHunk) {
      if (c === 0x2b /* + */) this.file.additions++;
      else if (c === 0x2d /* - */) this.file.deletions++;
    } else this.header.push(buf.toString('utf8', s, e));
  }

  private closeFile(): void {
    if (!this.file) return;
    const f = patchFiles(this.header.join('\n'))[0];
    this.file.path = f?.newPath ?? f?.oldPath ?? this.file.path;
    this.cur.push(this.file);
    this.file = undefined;
  }

  private closeSection(): void {
    if (this.index < 0) return;
    this.closeFile();
    this.files.set(this.index, this.cur);
    this.cur = [];
  }
}

/**
 * One `git diff-tree --stdin` run piped straight into `git patch-id --stable` (which names each
 * section by its header's commit, the request's `to`: distinct within a run).
 * @returns the requests whose section was read whole (by index; sections come in request order,
 *   one header each thanks to `--always`), and git's failure when it stopped early on an object
 */
async function streamDiffs(
  gitDir: string,
  reqs: readonly DiffRequest[],
): Promise<{ done: Map<number, DiffFacts>; failure?: { object: string; message: string } }> {
  const env = { ...hostEnv(), ...GIT_ENV };
  const diff = spawn(
    'git',
    [
      'diff-tree',
      '--stdin',
      '--always',
      '--root',
      '-p',
      '--no-renames',
      '--no-color',
      '--no-ext-diff',
      '--pretty=format:commit %H',
    ],
    { cwd: gitDir, env, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const pid = spawn('git', ['patch-id', '--stable'], {
    cwd: gitDir,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const scan = new SectionScanner();
  let pidOut = '';
  let diffErr = '';
  let pidErr = '';
  pid.stdout.setEncoding('latin1');
  pid.stdout.on('data', (t: string) => (pidOut += t));
  diff.stderr.setEncoding('utf8');
  diff.stderr.on('data', (t: string) => (diffErr += t));
  pid.stderr.setEncoding('utf8');
  pid.stderr.on('data', (t: string) => (pidErr += t));
  diff.stdout.on('data', (b: Buffer) => scan.push(b));
  diff.stdout.pipe(pid.stdin); // backpressure: patch-id reads slower than diff-tree writes
  // git exits early on an absent object: ignore EPIPE on the request list
  diff.stdin.on('error', () => undefined);
  pid.stdin.on('error', () => undefined);
  diff.stdin.end(stdinLines(reqs));
  const closed = (p: typeof diff): Promise<number | null> =>
    new Promise((resolve, reject) => {
      p.on('error', reject);
      p.on('close', resolve);
    });
  const [diffCode, pidCode] = await Promise.all([closed(diff), closed(pid)]);
  const ok = diffCode === 0;
  scan.end(ok); // a failed run's last section is incomplete: never counted
  if (pidCode !== 0) throw gitFailed(gitDir, `git patch-id failed: ${pidErr.trim()}`);
  const ids = new Map<string, string>();
  for (const line of pidOut.split('\n')) {
    const m = /^([0-9a-f]{40}) ([0-9a-f]{40})$/.exec(line.trim());
    if (m) ids.set(m[2]!, m[1]!);
  }
  const done = new Map<number, DiffFacts>();
  for (const [i, files] of scan.files)
    done.set(i, { patch_id: ids.get(reqs[i]!.to) ?? null, files });
  if (ok) return { done };
  const m = MISSING_RE.exec(diffErr);
  if (!m) throw gitFailed(gitDir, diffErr.trim() || `git diff-tree exited with ${diffCode}`);
  return { done, failure: { object: m[1]!, message: diffErr.trim() } };
}

/**
 * Which of `reqs` name `object` as an old or new blob (raw `diff-tree`, which reads trees only).
 * @returns request index -> the paths naming it
 */
async function requestsNaming(
  gitDir: string,
  reqs: readonly DiffRequest[],
  object: string,
): Promise<Map<number, string[]>> {
  const env = { ...hostEnv(), ...GIT_ENV };
  const raw = spawn(
    'git',
    [
      'diff-tree',
      '--stdin',
      '--always',
      '--root',
      '-r',
      '-z',
      '--no-renames',
      '--no-abbrev',
      '--pretty=format:commit %H%x00',
    ],
    { cwd: gitDir, env, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  raw.stdout.setEncoding('utf8');
  raw.stdout.on('data', (s: string) => (out += s));
  raw.stderr.setEncoding('utf8');
  raw.stderr.on('data', (s: string) => (err += s));
  raw.stdin.on('error', () => undefined);
  raw.stdin.end(stdinLines(reqs));
  const code = await new Promise<number | null>((resolve, reject) => {
    raw.on('error', reject);
    raw.on('close', resolve);
  });
  const found = new Map<number, string[]>();
  let index = -1;
  const fields = out.split('\0');
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i]!.replace(/^\n/, '');
    if (/^commit [0-9a-f]{40}$/.test(f)) {
      index++;
      continue;
    }
    // `:100644 100644 <old> <new> M` then the path as the next field
    const m = /^:\d+ \d+ ([0-9a-f]{40}) ([0-9a-f]{40}) [A-Z]\d*$/.exec(f);
    if (!m) continue;
    const path = fields[++i] ?? '';
    if (m[1] === object || m[2] === object) found.set(index, [...(found.get(index) ?? []), path]);
  }
  // a tree git could not read: the request where the raw listing stopped is the one
  if (code !== 0 && found.size === 0 && MISSING_RE.exec(err)?.[1] === object)
    found.set(Math.max(0, index), []);
  return found;
}
