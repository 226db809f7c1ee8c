/**
 * A local Hugging Face Hub for tests: a real HTTP server (node:http, ephemeral port) that speaks
 * the routes `@huggingface/hub` 2.x calls, read from its source (`src/lib/*.ts`):
 *
 * Read side (downloads at a pinned revision):
 * - `GET|HEAD /{datasets/|spaces/|}<ns>/<name>/resolve/<rev>/<path>` with `Range`, `ETag`,
 *   `X-Linked-ETag`, `X-Linked-Size` (LFS), `X-Repo-Commit`, `Content-Range`; 404 with
 *   `X-Error-Code: EntryNotFound | RevisionNotFound | RepoNotFound` (fileDownloadInfo, WebBlob).
 * - `GET .../raw/<rev>/<path>`: the git blob (the LFS pointer for LFS files).
 * - `GET /api/<type>s/<ns>/<name>/revision/<rev>` (datasetInfo/modelInfo; `sha`, `siblings`),
 *   `GET /api/<type>s/<ns>/<name>` (repoExists), `GET /api/<type>s/<ns>/<name>/refs`.
 * - `POST /api/<type>s/<ns>/<name>/paths-info/<rev>` (pathsInfo; `expand` adds `lastCommit`).
 * - `GET /api/<type>s/<ns>/<name>/tree/<rev>[/<path>]?recursive=&expand=` with `Link: rel="next"`
 *   pagination (listFiles).
 *
 * Write side (publishing):
 * - `GET /api/whoami-v2`; `POST /api/repos/create` (409 when it exists); the new repository gets an
 *   initial commit with `.gitattributes`, as on the Hub.
 * - `POST /api/<type>s/<repo>/preupload/<rev>`: `uploadMode` `lfs` for files at or above
 *   `lfsThreshold` bytes or whose 512-byte sample has a NUL byte (binary), else `regular`.
 * - `POST /<type>s/<repo>.git/info/lfs/objects/batch` (git-lfs batch API, `transfer: basic`; no Xet:
 *   the client falls back to basic when the server does not answer `xet`), `PUT` of the object to
 *   the `href` it returned (sha256 and size checked), objects already stored get no `actions`.
 * - `POST /api/<type>s/<repo>/commit/<branch>`: NDJSON `header` (`summary`, `parentCommit`),
 *   `file` (inline base64), `lfsFile` (must have been uploaded), `deletedFile`. A `parentCommit`
 *   that is not the branch head gives **412** "A commit has happened since. Please refresh and try
 *   again." (the Hub's answer), and the branch is left unchanged.
 * - `POST /api/<type>s/<repo>/branch/<branch>` (createBranch), `POST /api/<type>s/<repo>/tag/<rev>`
 *   `{tag, message}` (the REST route huggingface_hub's `create_tag` calls; the JS client has none;
 *   409 when the tag exists).
 *
 * Authentication: `Authorization: Bearer <token>`; a token not in `tokens` gets **401** on every
 * route (as the Hub does for invalid credentials); writes without a token get 401; reads of a
 * private repository without access get 404 `RepoNotFound` (the Hub hides private repos).
 *
 * Test seams: {@link HubServer.seedRepo} / {@link HubServer.pushCommit} (another writer moving a
 * branch), {@link HubServer.requests} (every request seen, without the token), and read access to
 * the stored state. Not mocks: the real client talks HTTP to it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';

type RepoType = 'model' | 'dataset' | 'space';

interface StoredFile {
  /** The file's real bytes (for LFS files, the object's bytes). */
  content: Buffer;
  lfs: { oid: string; size: number } | null;
  /** git blob oid (sha1 of `blob <len>\0<bytes>` of what git stores: the pointer for LFS). */
  oid: string;
}

interface StoredCommit {
  id: string;
  parent: string | null;
  title: string;
  description: string;
  date: string;
  author: string;
  files: Map<string, StoredFile>;
}

interface StoredRepo {
  type: RepoType;
  name: string;
  private: boolean;
  createdAt: string;
  commits: Map<string, StoredCommit>;
  branches: Map<string, string>;
  tags: Map<string, { commit: string; message: string }>;
  lfs: Map<string, Buffer>;
}

/** One request the server saw (the token is never recorded, only whether one was sent). */
export interface SeenRequest {
  method: string;
  path: string;
  authorized: boolean;
  range: string | undefined;
  status: number;
}

/** Options of {@link startHubServer}. */
export interface HubServerOptions {
  /** token -> user name. Default `{ hf_test_token: 'telebench' }`. */
  tokens?: Record<string, string>;
  /** user name -> organisations the user may write to. */
  orgs?: Record<string, string[]>;
  /** Files of at least this many bytes go through LFS. Default 10 MiB (the Hub's rule). */
  lfsThreshold?: number;
  /** Entries per page of the tree listing. Default 1000. */
  treePageSize?: number;
}

/** A running local Hub: its URL, the requests it saw and seams to seed and inspect its state. */
export interface HubServer {
  /** Base URL to pass as `hubUrl`, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** Every request seen, in order. */
  readonly requests: SeenRequest[];
  /**
   * Creates a repository with one commit holding `files` on `main` (plus `.gitattributes`), tags
   * the commit with each of `tags`. Files at or above the LFS threshold are stored as LFS.
   * @returns the commit id
   */
  seedRepo(args: {
    repo: string;
    type?: RepoType;
    private?: boolean;
    files: Record<string, string | Uint8Array>;
    tags?: string[];
  }): string;
  /** Another writer commits to `branch` (default main): adds/replaces `files`. @returns commit id */
  pushCommit(
    repo: string,
    files: Record<string, string | Uint8Array>,
    opts?: { type?: RepoType; branch?: string; title?: string },
  ): string;
  /** Head commit of a branch, or undefined. */
  head(repo: string, branch?: string, type?: RepoType): string | undefined;
  /** Files at a revision (branch, tag or commit) as `path -> bytes`, or undefined. */
  filesAt(repo: string, revision: string, type?: RepoType): Map<string, Buffer> | undefined;
  /** Whether a path is stored through LFS at a revision. */
  isLfs(repo: string, revision: string, path: string, type?: RepoType): boolean;
  /** Tag names of a repository -> commit id. */
  tags(repo: string, type?: RepoType): Map<string, string>;
  /** Commit count of a repository (all branches). */
  commitCount(repo: string, type?: RepoType): number;
  close(): Promise<void>;
}

const sha1 = (b: Buffer | string): string => createHash('sha1').update(b).digest('hex');
const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

function lfsPointer(oid: string, size: number): Buffer {
  return Buffer.from(
    `version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${size}\n`,
  );
}

function gitBlobOid(content: Buffer): string {
  return sha1(Buffer.concat([Buffer.from(`blob ${content.length}\0`), content]));
}

const GITATTRIBUTES = [
  '*.parquet filter=lfs diff=lfs merge=lfs -text',
  '*.arrow filter=lfs diff=lfs merge=lfs -text',
  '*.bin filter=lfs diff=lfs merge=lfs -text',
  '',
].join('\n');

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errorCode?: string,
  ) {
    super(message);
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Starts the server on 127.0.0.1 with an ephemeral port.
 * @returns a {@link HubServer}; call `close()` when done
 */
export async function startHubServer(options: HubServerOptions = {}): Promise<HubServer> {
  const tokens = options.tokens ?? { hf_test_token: 'telebench' };
  const orgs = options.orgs ?? {};
  const lfsThreshold = options.lfsThreshold ?? 10 * 1024 * 1024;
  const treePageSize = options.treePageSize ?? 1000;
  const repos = new Map<string, StoredRepo>();
  const requests: SeenRequest[] = [];
  let baseUrl = '';

  const repoKey = (type: RepoType, name: string): string => `${type}s/${name}`;

  function makeFile(content: Buffer, forceLfs: boolean): StoredFile {
    const binary = content.subarray(0, 512).includes(0);
    if (forceLfs || content.length >= lfsThreshold || binary) {
      const oid = sha256(content);
      return {
        content,
        lfs: { oid, size: content.length },
        oid: gitBlobOid(lfsPointer(oid, content.length)),
      };
    }
    return { content, lfs: null, oid: gitBlobOid(content) };
  }

  function newCommit(
    repo: StoredRepo,
    parent: string | null,
    files: Map<string, StoredFile>,
    title: string,
    description: string,
    author: string,
  ): StoredCommit {
    const id = sha1(`${parent ?? ''}\n${title}\n${randomBytes(16).toString('hex')}`);
    const commit: StoredCommit = {
      id,
      parent,
      title,
      description,
      date: new Date().toISOString(),
      author,
      files,
    };
    repo.commits.set(id, commit);
    return commit;
  }

  function createRepo(
    type: RepoType,
    name: string,
    isPrivate: boolean,
    author: string,
  ): StoredRepo {
    const repo: StoredRepo = {
      type,
      name,
      private: isPrivate,
      createdAt: new Date().toISOString(),
      commits: new Map(),
      branches: new Map(),
      tags: new Map(),
      lfs: new Map(),
    };
    const files = new Map([['.gitattributes', makeFile(Buffer.from(GITATTRIBUTES), false)]]);
    const c = newCommit(repo, null, files, 'initial commit', '', author);
    repo.branches.set('main', c.id);
    repos.set(repoKey(type, name), repo);
    return repo;
  }

  function getRepo(type: RepoType, name: string, user: string | null): StoredRepo {
    const repo = repos.get(repoKey(type, name));
    if (!repo || (repo.private && !canWrite(user, name))) {
      throw new HttpError(404, `Repository not found: ${type}s/${name}`, 'RepoNotFound');
    }
    return repo;
  }

  function canWrite(user: string | null, name: string): boolean {
    if (!user) return false;
    const ns = name.split('/')[0];
    return ns === user || (orgs[user] ?? []).includes(ns ?? '');
  }

  function resolveRev(repo: StoredRepo, rev: string): StoredCommit {
    const id =
      repo.branches.get(rev) ??
      repo.tags.get(rev)?.commit ??
      (repo.commits.has(rev) ? rev : undefined);
    const commit = id ? repo.commits.get(id) : undefined;
    if (!commit) throw new HttpError(404, `Invalid rev id: ${rev}`, 'RevisionNotFound');
    return commit;
  }

  /** The commit that last changed `path` at or before `commit`. */
  function lastCommitOf(repo: StoredRepo, commit: StoredCommit, path: string): StoredCommit {
    let cur = commit;
    const oid = commit.files.get(path)?.oid;
    while (cur.parent) {
      const parent = repo.commits.get(cur.parent);
      if (!parent || parent.files.get(path)?.oid !== oid) break;
      cur = parent;
    }
    return cur;
  }

  function pathInfo(
    repo: StoredRepo,
    commit: StoredCommit,
    path: string,
    f: StoredFile,
    expand: boolean,
  ) {
    const lc = expand ? lastCommitOf(repo, commit, path) : undefined;
    return {
      type: 'file',
      oid: f.oid,
      size: f.content.length,
      path,
      ...(f.lfs && {
        lfs: {
          oid: f.lfs.oid,
          size: f.lfs.size,
          pointerSize: lfsPointer(f.lfs.oid, f.lfs.size).length,
        },
      }),
      ...(lc && { lastCommit: { id: lc.id, title: lc.title, date: lc.date } }),
      ...(expand && { securityFileStatus: { status: 'safe' } }),
    };
  }

  function repoInfo(repo: StoredRepo, commit: StoredCommit) {
    return {
      _id: sha1(repo.name).slice(0, 24),
      id: repo.name,
      author: repo.name.split('/')[0],
      private: repo.private,
      gated: false,
      disabled: false,
      downloads: 0,
      likes: 0,
      tags: [],
      sha: commit.id,
      lastModified: commit.date,
      createdAt: repo.createdAt,
      siblings: [...commit.files.keys()].sort().map((rfilename) => ({ rfilename })),
    };
  }

  function serveFile(
    req: IncomingMessage,
    res: ServerResponse,
    repo: StoredRepo,
    rev: string,
    path: string,
    raw: boolean,
  ): number {
    const commit = resolveRev(repo, rev);
    const f = commit.files.get(path);
    if (!f) throw new HttpError(404, `Entry not found: ${path}`, 'EntryNotFound');
    const body = raw && f.lfs ? lfsPointer(f.lfs.oid, f.lfs.size) : f.content;
    const etag = `"${!raw && f.lfs ? f.lfs.oid : f.oid}"`;
    const headers: Record<string, string> = {
      'Content-Type': 'application/octet-stream',
      'Accept-Ranges': 'bytes',
      ETag: etag,
      'X-Repo-Commit': commit.id,
    };
    if (!raw && f.lfs) {
      headers['X-Linked-ETag'] = etag;
      headers['X-Linked-Size'] = String(f.lfs.size);
    }
    const range = req.headers.range;
    let status = 200;
    let slice = body;
    if (range) {
      const m = /^bytes=(\d*)-(\d*)$/.exec(range);
      if (!m) throw new HttpError(416, `bad Range header: ${range}`);
      let start = m[1] ? Number(m[1]) : body.length - Number(m[2]);
      let end = m[1] && m[2] ? Number(m[2]) : body.length - 1;
      start = Math.max(0, start);
      end = Math.min(end, body.length - 1);
      if (start > end && body.length > 0) {
        res.writeHead(416, { 'Content-Range': `bytes */${body.length}` });
        res.end();
        return 416;
      }
      status = 206;
      slice = body.subarray(start, end + 1);
      headers['Content-Range'] = `bytes ${start}-${Math.max(start, end)}/${body.length}`;
    }
    headers['Content-Length'] = String(slice.length);
    res.writeHead(status, headers);
    res.end(req.method === 'HEAD' ? undefined : slice);
    return status;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<number> {
    const url = new URL(req.url ?? '/', baseUrl);
    const path = decodeURIComponent(url.pathname);
    const auth = req.headers.authorization;
    let user: string | null = null;
    if (auth) {
      const token = /^Bearer (.+)$/.exec(auth)?.[1];
      user = token ? (tokens[token] ?? null) : null;
      if (!user) throw new HttpError(401, 'Invalid credentials in Authorization header');
    }
    const requireUser = (): string => {
      if (!user) throw new HttpError(401, 'You must be authenticated to access this endpoint');
      return user;
    };
    const requireWrite = (name: string): string => {
      const u = requireUser();
      if (!canWrite(u, name))
        throw new HttpError(403, `You don't have the rights to write to ${name}`);
      return u;
    };
    const json = (status: number, body: unknown, headers: Record<string, string> = {}): number => {
      res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers });
      res.end(JSON.stringify(body));
      return status;
    };

    // --- whoami
    if (path === '/api/whoami-v2' && req.method === 'GET') {
      const u = requireUser();
      return json(200, {
        type: 'user',
        id: sha1(u).slice(0, 24),
        name: u,
        fullname: u,
        email: `${u}@example.invalid`,
        emailVerified: true,
        canPay: false,
        isPro: false,
        periodEnd: null,
        avatarUrl: '',
        orgs: (orgs[u] ?? []).map((o) => ({
          type: 'org',
          name: o,
          fullname: o,
          id: sha1(o).slice(0, 24),
        })),
        auth: {
          type: 'access_token',
          accessToken: { displayName: 'test', role: 'write', createdAt: new Date().toISOString() },
        },
      });
    }

    // --- create repo
    if (path === '/api/repos/create' && req.method === 'POST') {
      const u = requireUser();
      const body = JSON.parse((await readBody(req)).toString('utf8')) as {
        name?: string;
        organization?: string;
        type?: RepoType;
        visibility?: string;
        private?: boolean;
      };
      if (!body.name) throw new HttpError(400, 'name is required');
      const name = `${body.organization ?? u}/${body.name}`;
      const type = body.type ?? 'model';
      if (!canWrite(u, name))
        throw new HttpError(403, `You don't have the rights to create a repo under ${name}`);
      const prefix = type === 'model' ? '' : `${type}s/`;
      if (repos.has(repoKey(type, name))) {
        return json(409, {
          error: `You already created this ${type} repo`,
          url: `${baseUrl}/${prefix}${name}`,
        });
      }
      createRepo(type, name, body.visibility === 'private' || body.private === true, u);
      return json(200, { url: `${baseUrl}/${prefix}${name}`, name, id: sha1(name).slice(0, 24) });
    }

    // --- LFS object upload (href returned by the batch call)
    let m = /^\/__lfs\/(models|datasets|spaces)\/([^/]+\/[^/]+)\/([0-9a-f]{64})$/.exec(path);
    if (m && req.method === 'PUT') {
      // the href acts as a presigned URL (the client sends no token with it), as the Hub's storage does
      const repo = repos.get(repoKey(m[1]!.slice(0, -1) as RepoType, m[2]!));
      if (!repo) throw new HttpError(404, `Repository not found: ${m[2]}`, 'RepoNotFound');
      const body = await readBody(req);
      if (sha256(body) !== m[3]) throw new HttpError(400, `uploaded bytes do not hash to ${m[3]}`);
      repo.lfs.set(m[3]!, body);
      res.writeHead(200, { ETag: `"${m[3]}"` });
      res.end();
      return 200;
    }

    // --- LFS batch
    m = /^\/(?:(datasets|spaces)\/)?([^/]+\/[^/]+?)\.git\/info\/lfs\/objects\/batch$/.exec(path);
    if (m && req.method === 'POST') {
      const type = (m[1] ? m[1].slice(0, -1) : 'model') as RepoType;
      const repo = getRepo(type, m[2]!, user);
      requireWrite(repo.name);
      const body = JSON.parse((await readBody(req)).toString('utf8')) as {
        operation: string;
        transfers?: string[];
        objects: { oid: string; size: number }[];
      };
      if (body.operation !== 'upload') throw new HttpError(400, 'only upload is served');
      if (body.transfers && !body.transfers.includes('basic'))
        throw new HttpError(400, 'basic transfer required');
      return json(
        200,
        {
          transfer: 'basic',
          objects: body.objects.map((o) =>
            repo.lfs.has(o.oid)
              ? { oid: o.oid, size: o.size, authenticated: true }
              : {
                  oid: o.oid,
                  size: o.size,
                  authenticated: true,
                  actions: {
                    upload: {
                      href: `${baseUrl}/__lfs/${type}s/${repo.name}/${o.oid}`,
                      expires_in: 3600,
                    },
                  },
                },
          ),
        },
        { 'Content-Type': 'application/vnd.git-lfs+json' },
      );
    }

    // --- /api/<type>s/<ns>/<name>[/<action>[/<rest>]]
    m = /^\/api\/(models|datasets|spaces)\/([^/]+\/[^/]+)(?:\/([^/]+)(?:\/(.*))?)?$/.exec(path);
    if (m) {
      const type = m[1]!.slice(0, -1) as RepoType;
      const name = m[2]!;
      const action = m[3];
      const rest = m[4] ?? '';
      const repo = getRepo(type, name, user);

      if (!action && req.method === 'GET')
        return json(200, repoInfo(repo, resolveRev(repo, 'main')));

      if (action === 'revision' && req.method === 'GET') {
        const rev = rest === 'HEAD' ? 'main' : rest;
        return json(200, repoInfo(repo, resolveRev(repo, rev)));
      }

      if (action === 'refs' && req.method === 'GET') {
        return json(200, {
          branches: [...repo.branches].map(([b, c]) => ({
            name: b,
            ref: `refs/heads/${b}`,
            targetCommit: c,
          })),
          tags: [...repo.tags].map(([t, v]) => ({
            name: t,
            ref: `refs/tags/${t}`,
            targetCommit: v.commit,
          })),
          converts: [],
        });
      }

      if (action === 'paths-info' && req.method === 'POST') {
        const commit = resolveRev(repo, rest || 'main');
        const raw = (await readBody(req)).toString('utf8');
        const body = JSON.parse(raw) as { paths?: string[]; expand?: boolean };
        const out = [];
        for (const p of body.paths ?? []) {
          const f = commit.files.get(p);
          if (f) out.push(pathInfo(repo, commit, p, f, !!body.expand));
          else if ([...commit.files.keys()].some((k) => k.startsWith(`${p}/`)))
            out.push({ type: 'directory', oid: sha1(p), size: 0, path: p });
        }
        return json(200, out);
      }

      if (action === 'tree' && req.method === 'GET') {
        const [rev = 'main', ...sub] = rest.split('/');
        const commit = resolveRev(repo, rev);
        const dir = sub.join('/');
        const recursive = url.searchParams.get('recursive') === 'true';
        const expand = url.searchParams.get('expand') === 'true';
        const entries: Record<string, unknown>[] = [];
        const dirs = new Set<string>();
        for (const [p, f] of [...commit.files].sort(([a], [b]) => a.localeCompare(b))) {
          if (dir && !p.startsWith(`${dir}/`)) continue;
          const relative = dir ? p.slice(dir.length + 1) : p;
          const parts = relative.split('/');
          for (let i = 1; i < parts.length; i++) {
            const d = (dir ? `${dir}/` : '') + parts.slice(0, i).join('/');
            if (!dirs.has(d) && (recursive || i === 1)) {
              dirs.add(d);
              entries.push({ type: 'directory', oid: sha1(d), size: 0, path: d });
            }
          }
          if (recursive || parts.length === 1) entries.push(pathInfo(repo, commit, p, f, expand));
        }
        if (dir && entries.length === 0)
          throw new HttpError(404, `Entry not found: ${dir}`, 'EntryNotFound');
        const cursor = Number(url.searchParams.get('cursor') ?? '0');
        const page = entries.slice(cursor, cursor + treePageSize);
        const headers: Record<string, string> = {};
        if (cursor + treePageSize < entries.length) {
          const next = new URL(url);
          next.searchParams.set('cursor', String(cursor + treePageSize));
          headers.Link = `<${next.href}>; rel="next"`;
        }
        return json(200, page, headers);
      }

      if (action === 'preupload' && req.method === 'POST') {
        requireWrite(name);
        resolveRev(repo, rest || 'main');
        const body = JSON.parse((await readBody(req)).toString('utf8')) as {
          files: { path: string; size: number; sample: string }[];
        };
        return json(200, {
          files: body.files.map((f) => {
            const sample = Buffer.from(f.sample, 'base64');
            const lfs = f.size >= lfsThreshold || sample.includes(0);
            return { path: f.path, uploadMode: lfs ? 'lfs' : 'regular', shouldIgnore: false };
          }),
        });
      }

      if (action === 'commit' && req.method === 'POST') {
        const u = requireWrite(name);
        const branch = rest || 'main';
        const head = repo.branches.get(branch);
        if (!head) throw new HttpError(404, `Invalid rev id: ${branch}`, 'RevisionNotFound');
        const lines = (await readBody(req))
          .toString('utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as { key: string; value: Record<string, unknown> });
        const header = lines.find((l) => l.key === 'header')?.value as
          { summary?: string; description?: string; parentCommit?: string } | undefined;
        if (!header?.summary) throw new HttpError(400, 'commit header with a summary is required');
        if (header.parentCommit && header.parentCommit !== head) {
          throw new HttpError(412, 'A commit has happened since. Please refresh and try again.');
        }
        const files = new Map(repo.commits.get(head)!.files);
        for (const { key, value } of lines) {
          if (key === 'file') {
            const v = value as { path: string; content: string; encoding?: string };
            const content = Buffer.from(v.content, v.encoding === 'base64' ? 'base64' : 'utf8');
            files.set(v.path, makeFile(content, false));
          } else if (key === 'lfsFile') {
            const v = value as { path: string; oid: string; size: number };
            const content = repo.lfs.get(v.oid);
            if (!content)
              throw new HttpError(422, `LFS object ${v.oid} for ${v.path} was never uploaded`);
            if (content.length !== v.size) throw new HttpError(422, `size mismatch for ${v.path}`);
            files.set(v.path, makeFile(content, true));
          } else if (key === 'deletedFile') {
            const v = value as { path: string };
            if (!files.delete(v.path))
              throw new HttpError(404, `Entry not found: ${v.path}`, 'EntryNotFound');
          } else if (key !== 'header') {
            throw new HttpError(400, `unknown commit operation key ${key}`);
          }
        }
        const c = newCommit(repo, head, files, header.summary, header.description ?? '', u);
        repo.branches.set(branch, c.id);
        const prefix = type === 'model' ? '' : `${type}s/`;
        return json(200, {
          success: true,
          commitOid: c.id,
          commitUrl: `${baseUrl}/${prefix}${name}/commit/${c.id}`,
          hookOutput: '',
        });
      }

      if (action === 'branch' && req.method === 'POST') {
        requireWrite(name);
        const body = JSON.parse((await readBody(req)).toString('utf8') || '{}') as {
          startingPoint?: string;
          overwrite?: boolean;
        };
        if (repo.branches.has(rest) && !body.overwrite)
          throw new HttpError(409, `Reference already exists: ${rest}`);
        repo.branches.set(rest, resolveRev(repo, body.startingPoint ?? 'main').id);
        return json(200, {});
      }

      if (action === 'tag' && req.method === 'POST') {
        requireWrite(name);
        const commit = resolveRev(repo, rest || 'main');
        const body = JSON.parse((await readBody(req)).toString('utf8')) as {
          tag?: string;
          message?: string;
        };
        if (!body.tag) throw new HttpError(400, 'tag is required');
        if (repo.tags.has(body.tag)) throw new HttpError(409, `Tag ${body.tag} already exists`);
        repo.tags.set(body.tag, { commit: commit.id, message: body.message ?? '' });
        return json(200, {});
      }
      throw new HttpError(404, `no route ${req.method} ${path}`);
    }

    // --- resolve / raw
    m = /^\/(?:(datasets|spaces)\/)?([^/]+\/[^/]+)\/(resolve|raw)\/([^/]+)\/(.+)$/.exec(path);
    if (m && (req.method === 'GET' || req.method === 'HEAD')) {
      const type = (m[1] ? m[1].slice(0, -1) : 'model') as RepoType;
      const repo = getRepo(type, m[2]!, user);
      return serveFile(req, res, repo, m[4]!, m[5]!, m[3] === 'raw');
    }

    throw new HttpError(404, `no route ${req.method} ${path}`);
  }

  const server = createServer((req, res) => {
    const seen: SeenRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      authorized: !!req.headers.authorization,
      range: req.headers.range,
      status: 0,
    };
    requests.push(seen);
    handle(req, res).then(
      (status) => {
        seen.status = status;
      },
      (err: unknown) => {
        const e = err instanceof HttpError ? err : new HttpError(500, String(err));
        seen.status = e.status;
        if (res.headersSent) {
          res.destroy();
          return;
        }
        res.writeHead(e.status, {
          'Content-Type': 'application/json; charset=utf-8',
          ...(e.errorCode && { 'X-Error-Code': e.errorCode, 'X-Error-Message': e.message }),
        });
        res.end(JSON.stringify({ error: e.message }));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const find = (repo: string, type: RepoType = 'dataset'): StoredRepo => {
    const r = repos.get(repoKey(type, repo));
    if (!r) throw new Error(`hub-server: no ${type} repository ${repo}`);
    return r;
  };
  const toBuffers = (files: Record<string, string | Uint8Array>) =>
    Object.entries(files).map(
      ([p, c]) => [p, typeof c === 'string' ? Buffer.from(c) : Buffer.from(c)] as const,
    );

  return {
    url: baseUrl,
    requests,
    seedRepo({ repo, type = 'dataset', private: isPrivate = false, files, tags = [] }) {
      const r =
        repos.get(repoKey(type, repo)) ?? createRepo(type, repo, isPrivate, repo.split('/')[0]!);
      const head = r.branches.get('main')!;
      const map = new Map(r.commits.get(head)!.files);
      for (const [p, c] of toBuffers(files)) map.set(p, makeFile(c, false));
      const c = newCommit(r, head, map, 'seed', '', 'seed');
      r.branches.set('main', c.id);
      for (const t of tags) r.tags.set(t, { commit: c.id, message: '' });
      return c.id;
    },
    pushCommit(repo, files, opts = {}) {
      const r = find(repo, opts.type);
      const branch = opts.branch ?? 'main';
      const head = r.branches.get(branch);
      if (!head) throw new Error(`hub-server: no branch ${branch}`);
      const map = new Map(r.commits.get(head)!.files);
      for (const [p, c] of toBuffers(files)) map.set(p, makeFile(c, false));
      const c = newCommit(r, head, map, opts.title ?? 'concurrent change', '', 'someone-else');
      r.branches.set(branch, c.id);
      return c.id;
    },
    head: (repo, branch = 'main', type) => find(repo, type).branches.get(branch),
    filesAt(repo, revision, type) {
      const r = repos.get(repoKey(type ?? 'dataset', repo));
      if (!r) return undefined;
      try {
        return new Map([...resolveRev(r, revision).files].map(([p, f]) => [p, f.content]));
      } catch (err) {
        if (err instanceof HttpError) return undefined;
        throw err;
      }
    },
    isLfs: (repo, revision, path, type) =>
      !!resolveRev(find(repo, type), revision).files.get(path)?.lfs,
    tags: (repo, type) => new Map([...find(repo, type).tags].map(([t, v]) => [t, v.commit])),
    commitCount: (repo, type) => find(repo, type).commits.size,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
