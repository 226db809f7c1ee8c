/**
 * A local GitHub REST server for tests: real HTTP speaking the routes the telebench GitHub provider
 * calls (pipeline/providers/github/pulls.ts), with ETags / `If-None-Match` -> 304, `Link` pagination,
 * and injectable faults (secondary and primary rate limits, 502, dropped connections, malformed
 * JSON). Data is a {@link GithubCorpus}: repositories with issues, pull requests (typed by
 * `@octokit/openapi-types`), per-PR files and commits, and default-branch commits with parents.
 *
 * Routes: GET /rate_limit; /repos/{o}/{r}/pulls; /pulls/{n}/files; /pulls/{n}/commits;
 * /commits (sha, since); /commits/{sha}; /issues/{n}; /issues/{n}/comments; and POST /graphql
 * for `repository(owner, name) { prN: pullRequest(number: N) { closingIssuesReferences ... } }`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { components } from '@octokit/openapi-types';

export type PullSimple = components['schemas']['pull-request-simple'];
export type DiffEntry = components['schemas']['diff-entry'];
export type GhCommit = components['schemas']['commit'];
export type GhIssue = components['schemas']['issue'];
export type GhIssueComment = components['schemas']['issue-comment'];

/** One repository of the corpus. */
export interface RepoData {
  pulls: PullSimple[];
  files: Record<number, DiffEntry[]>;
  prCommits: Record<number, GhCommit[]>;
  /** Default-branch commits, newest first: sha, parents, committer date. */
  branch: { sha: string; parents: string[]; date: string }[];
  issues: GhIssue[];
  comments: Record<number, GhIssueComment[]>;
  /** GraphQL `closingIssuesReferences` per PR number (`owner/name#N`). */
  closing?: Record<number, string[]>;
}

/** `owner/name` -> data. */
export type GithubCorpus = Record<string, RepoData>;

/** A fault served instead of the real answer to the next `times` requests whose path matches. */
export interface Fault {
  match: RegExp;
  /**
   * `abuse`: 403 with GitHub's older "abuse detection mechanism" wording and `retry-after`
   * (without it when `seconds` is 0); `too-many`: 429 with `retry-after` and a wording the
   * throttling plugin does not know; `denied`: 403 "Resource not accessible by integration" (not a
   * rate limit).
   */
  kind: 'secondary' | 'primary' | '502' | 'drop' | 'malformed' | 'abuse' | 'too-many' | 'denied';
  times: number;
  /** secondary, abuse, too-many: retry-after seconds; primary: seconds until x-ratelimit-reset. */
  seconds?: number;
}

/** One request seen by the server. */
export interface SeenRequest {
  method: string;
  path: string;
  status: number;
  auth: string | null;
}

/** A started server: `url` is the base URL to give the provider. */
export interface GithubServer {
  url: string;
  corpus: GithubCorpus;
  requests: SeenRequest[];
  faults: Fault[];
  close(): Promise<void>;
}

const etagOf = (body: string): string =>
  `"${createHash('sha1').update(body).digest('hex').slice(0, 20)}"`;

/**
 * Starts the server on 127.0.0.1 (random port).
 * @param corpus data served (mutable: tests may change it between runs)
 */
export async function startGithubServer(corpus: GithubCorpus): Promise<GithubServer> {
  const requests: SeenRequest[] = [];
  const faults: Fault[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const record = (status: number): void => {
      requests.push({
        method: req.method ?? 'GET',
        path: url.pathname + url.search,
        status,
        auth: req.headers.authorization ?? null,
      });
    };
    const fault = faults.find((f) => f.times > 0 && f.match.test(url.pathname));
    if (fault) {
      fault.times--;
      serveFault(fault, req, res, record);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/graphql') {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString('utf8')));
      req.on('end', () => {
        record(200);
        json(res, 200, graphql(corpus, text));
      });
      return;
    }
    const answer = route(corpus, url);
    if (!answer) {
      record(404);
      json(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
      return;
    }
    const body = JSON.stringify(answer.body);
    const etag = etagOf(body);
    const headers: Record<string, string> = {
      etag,
      'content-type': 'application/json; charset=utf-8',
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': '4999',
      'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
    };
    if (answer.next) {
      const nextUrl = new URL(url.toString());
      nextUrl.searchParams.set('page', String(answer.next));
      headers.link = `<http://${req.headers.host}${nextUrl.pathname}${nextUrl.search}>; rel="next"`;
    }
    if (req.headers['if-none-match'] === etag) {
      record(304);
      res.writeHead(304, headers);
      res.end();
      return;
    }
    record(200);
    res.writeHead(200, headers);
    res.end(body);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    corpus,
    requests,
    faults,
    close: () =>
      new Promise<void>((ok, ko) => {
        server.closeAllConnections();
        server.close((err) => (err ? ko(err) : ok()));
      }),
  };
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  extra: Record<string, string> = {},
) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...extra });
  res.end(JSON.stringify(body));
}

function serveFault(
  f: Fault,
  req: IncomingMessage,
  res: ServerResponse,
  record: (status: number) => void,
): void {
  switch (f.kind) {
    case 'secondary':
      record(403);
      json(
        res,
        403,
        {
          message:
            'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
          documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
        },
        { 'retry-after': String(f.seconds ?? 1) },
      );
      return;
    case 'abuse':
      record(403);
      json(
        res,
        403,
        {
          message:
            'You have triggered an abuse detection mechanism. Please wait a few minutes before you try again.',
          documentation_url: 'https://developer.github.com/v3/#abuse-rate-limits',
        },
        f.seconds === 0 ? {} : { 'retry-after': String(f.seconds ?? 1) },
      );
      return;
    case 'too-many':
      record(429);
      json(
        res,
        429,
        { message: 'Too many requests, slow down.' },
        { 'retry-after': String(f.seconds ?? 1) },
      );
      return;
    case 'denied':
      record(403);
      json(res, 403, {
        message: 'Resource not accessible by integration',
        documentation_url: 'https://docs.github.com/rest',
      });
      return;
    case 'primary':
      record(403);
      json(
        res,
        403,
        {
          message: 'API rate limit exceeded for user ID 1.',
          documentation_url: 'https://docs.github.com',
        },
        {
          'x-ratelimit-limit': '5000',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + (f.seconds ?? 2)),
        },
      );
      return;
    case '502':
      record(502);
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
      return;
    case 'drop':
      record(0);
      req.socket.destroy();
      return;
    case 'malformed':
      record(200);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', etag: '"broken"' });
      res.end('{"number": 1, "title": "trunc');
      return;
  }
}

interface Answer {
  body: unknown;
  next?: number;
}

function page<T>(items: T[], url: URL): Answer {
  const per = Math.min(100, Number(url.searchParams.get('per_page') ?? 30));
  const p = Math.max(1, Number(url.searchParams.get('page') ?? 1));
  const slice = items.slice((p - 1) * per, p * per);
  return p * per < items.length ? { body: slice, next: p + 1 } : { body: slice };
}

function route(corpus: GithubCorpus, url: URL): Answer | undefined {
  const path = url.pathname;
  if (path === '/rate_limit') {
    const core = {
      limit: 5000,
      used: 1,
      remaining: 4999,
      reset: Math.floor(Date.now() / 1000) + 3600,
    };
    return { body: { resources: { core }, rate: core } };
  }
  const m = /^\/repos\/([^/]+)\/([^/]+)\/(.+)$/.exec(path);
  if (!m) return undefined;
  const repo = corpus[`${m[1]}/${m[2]}`];
  if (!repo) return undefined;
  const rest = m[3]!;
  let r: RegExpExecArray | null;
  if (rest === 'pulls') {
    const state = url.searchParams.get('state') ?? 'open';
    const base = url.searchParams.get('base');
    const list = repo.pulls
      .filter((p) => state === 'all' || p.state === state)
      .filter((p) => !base || p.base.ref === base)
      .sort((a, b) => b.updated_at.localeCompare(a.updated_at));
    return page(list, url);
  }
  if ((r = /^pulls\/(\d+)\/files$/.exec(rest))) {
    const f = repo.files[Number(r[1])];
    return f ? page(f, url) : undefined;
  }
  if ((r = /^pulls\/(\d+)\/commits$/.exec(rest))) {
    const c = repo.prCommits[Number(r[1])];
    return c ? page(c, url) : undefined;
  }
  if (rest === 'commits') {
    const since = url.searchParams.get('since');
    const list = repo.branch
      .filter((c) => !since || c.date >= since)
      .map((c) => ({
        sha: c.sha,
        parents: c.parents.map((sha) => ({ sha, url: '', html_url: '' })),
      }));
    return page(list, url);
  }
  if ((r = /^commits\/([0-9a-f]{40})$/.exec(rest))) {
    const c = repo.branch.find((b) => b.sha === r![1]);
    return c
      ? { body: { sha: c.sha, parents: c.parents.map((sha) => ({ sha, url: '', html_url: '' })) } }
      : undefined;
  }
  if ((r = /^issues\/(\d+)$/.exec(rest))) {
    const i = repo.issues.find((x) => x.number === Number(r![1]));
    return i ? { body: i } : undefined;
  }
  if ((r = /^issues\/(\d+)\/comments$/.exec(rest))) {
    return page(repo.comments[Number(r[1])] ?? [], url);
  }
  return undefined;
}

/** Answers the closing-references query of pipeline/providers/github/pulls.ts. */
function graphql(corpus: GithubCorpus, text: string): unknown {
  let body: { query?: string; variables?: { owner?: string; name?: string } };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return { errors: [{ message: 'Problems parsing JSON' }] };
  }
  const repo = corpus[`${body.variables?.owner}/${body.variables?.name}`];
  if (!repo)
    return {
      data: { repository: null },
      errors: [{ type: 'NOT_FOUND', message: 'no repository' }],
    };
  const out: Record<string, unknown> = {};
  for (const m of (body.query ?? '').matchAll(/(\w+): pullRequest\(number: (\d+)\)/g)) {
    const n = Number(m[2]);
    if (!repo.pulls.some((p) => p.number === n)) {
      out[m[1]!] = null;
      continue;
    }
    out[m[1]!] = {
      closingIssuesReferences: {
        nodes: (repo.closing?.[n] ?? []).map((ref) => {
          const [nameWithOwner, num] = ref.split('#');
          return { number: Number(num), repository: { nameWithOwner } };
        }),
      },
    };
  }
  return { data: { repository: out } };
}
