/**
 * Publishing to a Hugging Face Hub dataset repository through the real `@huggingface/hub` client
 * (why: the official client; its `hubUrl` and `fetch` parameters are the seams tests use to point it
 * at a local Hub server). One narrow surface: read the repository's files at a revision, create the
 * repository, commit a set of files in one commit with `parentCommit` (so a concurrent change is
 * never overwritten: the Hub answers 412 and nothing is written), and tag a commit.
 *
 * The JS client has no tag function; {@link createTag} calls the REST route huggingface_hub's
 * `create_tag` uses (`POST /api/datasets/<repo>/tag/<revision>` with `{tag, message}`).
 *
 * Errors become TelebenchErrors with the Hub's status: 401 `hub_unauthorized` (tier config), 403
 * `hub_forbidden` (config), 412 `hub_branch_moved` (content: the branch moved, re-run), 404
 * `hub_not_found`, 429 `hub_rate_limited`, 5xx `hub_unavailable` (transient). Tokens never appear
 * in messages (pipeline/secrets.ts `redact`).
 */
import { createHash } from 'node:crypto';
import type * as hubTypes from '@huggingface/hub';
import { TelebenchError, type ErrorTier } from '../../errors.js';
import { sha256 } from '../../hash.js';
import { redact } from '../../secrets.js';
import { lazy } from '../../lazy.js';

const hub = lazy<typeof hubTypes>('@huggingface/hub');

/** Where and as whom to talk to the Hub. */
export interface HubTarget {
  /** Hub base URL, `https://huggingface.co` (tests: a local server). */
  hubUrl: string;
  /** Dataset repository `owner/name`. */
  repo: string;
  /** `HF_TOKEN` from the environment; required for writes. */
  accessToken?: string;
  /** Injected fetch (default global fetch). */
  fetch?: typeof fetch;
}

/** A file as the Hub stores it: git blob oid, and the sha256 when it is an LFS/Xet file. */
export interface RemoteFile {
  path: string;
  size: number;
  /** git blob oid (sha1) of what git stores (for LFS files: the pointer). */
  oid: string;
  /** sha256 of the content for LFS files, undefined for regular files. */
  lfsSha256?: string;
}

/** A local file to publish. */
export interface LocalFile {
  path: string;
  bytes: Uint8Array;
}

/** One line of a publish plan. */
export interface FileChange {
  path: string;
  change: 'add' | 'update' | 'delete' | 'same';
  bytes: number;
}

const repoOf = (t: HubTarget) => ({ type: 'dataset' as const, name: t.repo });

/**
 * Converts a client error into a TelebenchError naming what was being done.
 * @param what e.g. `committing to telebench/swe-bench-5g@main`
 */
export function hubError(err: unknown, what: string): TelebenchError {
  if (err instanceof TelebenchError) return err;
  if (err instanceof hub().HubApiError) {
    const s = err.statusCode;
    const map: Record<number, [string, ErrorTier, string]> = {
      401: [
        'hub_unauthorized',
        'config',
        'the Hub refused the token (401): set HF_TOKEN to a valid write token',
      ],
      403: ['hub_forbidden', 'config', 'the token may not write there (403)'],
      404: ['hub_not_found', 'config', 'not found on the Hub (404)'],
      409: ['hub_conflict', 'content', 'conflict (409)'],
      412: [
        'hub_branch_moved',
        'content',
        'the branch moved since it was read (412: someone else committed); nothing was overwritten — run publish again',
      ],
      429: ['hub_rate_limited', 'rate-limit', 'rate limited (429)'],
    };
    const [code, tier, text] =
      map[s] ??
      (s >= 500
        ? ['hub_unavailable', 'transient', `Hub error ${s}`]
        : ['hub_error', 'bug', `Hub error ${s}`]);
    return new TelebenchError(code, redact(`${what}: ${text}. ${err.message}`), {
      tier: tier as ErrorTier,
      cause: err,
      context: { status: s, url: redact(err.url) },
    });
  }
  const e = err as Error;
  return new TelebenchError('hub_unreachable', redact(`${what}: ${e.message}`), {
    tier: 'transient',
    cause: err,
  });
}

/** git blob oid of bytes: sha1 of `blob <size>\0<bytes>` (what the Hub reports as `oid`). */
export function gitBlobOid(bytes: Uint8Array): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/** User name of the token. @throws TelebenchError `hub_unauthorized` for a bad token */
export async function hubUser(t: HubTarget): Promise<string> {
  if (!t.accessToken)
    throw new TelebenchError(
      'hub_token_missing',
      'HF_TOKEN is not set: publishing needs a write token',
      { tier: 'config' },
    );
  try {
    return (await hub().whoAmI({ accessToken: t.accessToken, hubUrl: t.hubUrl, fetch: t.fetch }))
      .name;
  } catch (err) {
    throw hubError(err, `checking the token against ${t.hubUrl}`);
  }
}

/**
 * Whether the dataset repository exists (and is visible to the token).
 * @throws TelebenchError from {@link hubError}: `hub_unauthorized` (401), `hub_forbidden` (403),
 *   `hub_rate_limited` (429), `hub_unavailable` (5xx), `hub_unreachable` (network)
 */
export async function datasetRepoExists(t: HubTarget): Promise<boolean> {
  try {
    return await hub().repoExists({
      repo: repoOf(t),
      hubUrl: t.hubUrl,
      accessToken: t.accessToken,
      fetch: t.fetch,
    });
  } catch (err) {
    throw hubError(err, `looking up ${t.repo} on ${t.hubUrl}`);
  }
}

/**
 * Creates the dataset repository.
 * @throws TelebenchError from {@link hubError}: `hub_unauthorized` (401), `hub_forbidden` (403),
 *   `hub_conflict` (409: it exists), `hub_rate_limited` (429), `hub_unavailable` (5xx),
 *   `hub_unreachable` (network)
 */
export async function createDatasetRepo(t: HubTarget, opts: { private: boolean }): Promise<void> {
  try {
    await hub().createRepo({
      repo: repoOf(t),
      accessToken: t.accessToken ?? '',
      hubUrl: t.hubUrl,
      fetch: t.fetch,
      private: opts.private,
    });
  } catch (err) {
    throw hubError(err, `creating dataset repository ${t.repo}`);
  }
}

/**
 * Commit id (40 hex) a branch or tag points to.
 * @throws TelebenchError `hub_bad_response` when the Hub gives no sha; from {@link hubError}:
 *   `hub_not_found` (404: no such repository or revision), `hub_unauthorized` (401),
 *   `hub_forbidden` (403), `hub_rate_limited` (429), `hub_unavailable` (5xx), `hub_unreachable`
 */
export async function revisionCommit(t: HubTarget, revision: string): Promise<string> {
  try {
    const info = await hub().datasetInfo({
      name: t.repo,
      revision,
      hubUrl: t.hubUrl,
      accessToken: t.accessToken,
      fetch: t.fetch,
      additionalFields: ['sha'],
    });
    if (typeof info.sha !== 'string')
      throw new TelebenchError(
        'hub_bad_response',
        `the Hub gave no commit sha for ${t.repo}@${revision}`,
        { tier: 'transient' },
      );
    return info.sha;
  } catch (err) {
    throw hubError(err, `reading ${t.repo}@${revision}`);
  }
}

/**
 * Every file of the repository at a revision, by path (directories left out).
 * @throws TelebenchError from {@link hubError}: `hub_not_found` (404), `hub_unauthorized` (401),
 *   `hub_forbidden` (403), `hub_rate_limited` (429), `hub_unavailable` (5xx), `hub_unreachable`
 */
export async function remoteFiles(
  t: HubTarget,
  revision: string,
): Promise<Map<string, RemoteFile>> {
  const out = new Map<string, RemoteFile>();
  try {
    for await (const f of hub().listFiles({
      repo: repoOf(t),
      revision,
      recursive: true,
      hubUrl: t.hubUrl,
      accessToken: t.accessToken,
      fetch: t.fetch,
    })) {
      if (f.type !== 'file') continue;
      out.set(f.path, {
        path: f.path,
        size: f.size,
        oid: f.oid ?? '',
        ...(f.lfs && { lfsSha256: f.lfs.oid }),
      });
    }
  } catch (err) {
    throw hubError(err, `listing the files of ${t.repo}@${revision}`);
  }
  return out;
}

/**
 * Tags of the repository -> commit id (`GET /api/datasets/<repo>/refs`).
 * @throws TelebenchError `hub_unauthorized` (401, tier config), `hub_error` (other non-2xx; tier
 *   transient for 5xx), `hub_unreachable` (network)
 */
export async function listTags(t: HubTarget): Promise<Map<string, string>> {
  const res = await (t.fetch ?? fetch)(`${t.hubUrl}/api/datasets/${t.repo}/refs`, {
    headers: t.accessToken ? { Authorization: `Bearer ${t.accessToken}` } : {},
  }).catch((err: unknown) => {
    throw hubError(err, `listing the tags of ${t.repo}`);
  });
  if (!res.ok) {
    throw new TelebenchError(
      res.status === 401 ? 'hub_unauthorized' : 'hub_error',
      `listing the tags of ${t.repo}: HTTP ${res.status} ${await res.text()}`,
      {
        tier: res.status === 401 ? 'config' : res.status >= 500 ? 'transient' : 'bug',
      },
    );
  }
  const body = (await res.json()) as { tags?: { name: string; targetCommit: string }[] };
  return new Map((body.tags ?? []).map((x) => [x.name, x.targetCommit]));
}

/**
 * Tags `revision` as `tag` (`POST /api/datasets/<repo>/tag/<revision>`).
 * @throws TelebenchError `hub_tag_exists` (409) or the mapped status error
 */
export async function createTag(
  t: HubTarget,
  args: { revision: string; tag: string; message: string },
): Promise<void> {
  const res = await (t.fetch ?? fetch)(
    `${t.hubUrl}/api/datasets/${t.repo}/tag/${encodeURIComponent(args.revision)}`,
    {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        ...(t.accessToken && { Authorization: `Bearer ${t.accessToken}` }),
      },
      body: JSON.stringify({ tag: args.tag, message: args.message }),
    },
  ).catch((err: unknown) => {
    throw hubError(err, `tagging ${t.repo}`);
  });
  if (res.ok) return;
  const text = await res.text();
  const code =
    res.status === 409 ? 'hub_tag_exists' : res.status === 401 ? 'hub_unauthorized' : 'hub_error';
  throw new TelebenchError(
    code,
    redact(`tagging ${t.repo}@${args.revision} as ${args.tag}: HTTP ${res.status} ${text}`),
    {
      tier:
        res.status === 409
          ? 'content'
          : res.status === 401
            ? 'config'
            : res.status >= 500
              ? 'transient'
              : 'bug',
      context: { status: res.status },
    },
  );
}

/** True when a local file has the same content as the remote one (sha256 for LFS, git oid else). */
export function sameContent(local: LocalFile, remote: RemoteFile): boolean {
  if (remote.lfsSha256) return sha256(local.bytes) === remote.lfsSha256;
  return gitBlobOid(local.bytes) === remote.oid;
}

/**
 * What a commit would change so that the repository holds `local`: adds and updates, and deletes of
 * remote files for which `managed(path)` is true and that `local` lacks (files others added outside
 * the managed folders are never deleted). Pure. Sorted by path.
 */
export function planChanges(
  local: readonly LocalFile[],
  remote: ReadonlyMap<string, RemoteFile>,
  managed: (path: string) => boolean = () => false,
): FileChange[] {
  const out: FileChange[] = [];
  const localPaths = new Set(local.map((f) => f.path));
  for (const f of local) {
    const r = remote.get(f.path);
    out.push({
      path: f.path,
      change: !r ? 'add' : sameContent(f, r) ? 'same' : 'update',
      bytes: f.bytes.length,
    });
  }
  for (const [p, r] of remote)
    if (!localPaths.has(p) && managed(p)) out.push({ path: p, change: 'delete', bytes: r.size });
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * One commit on `branch` whose parent must be `parentCommit`: adds/updates `files`, deletes `deletes`.
 * Small files go inline, large and binary ones through LFS (the Hub's preupload decides; the client
 * does the LFS batch and upload).
 * @returns the new commit id
 * @throws TelebenchError `hub_branch_moved` when the branch is no longer at `parentCommit`
 */
export async function commitFiles(
  t: HubTarget,
  args: {
    branch: string;
    parentCommit: string;
    title: string;
    description: string;
    files: readonly LocalFile[];
    deletes: readonly string[];
  },
): Promise<string> {
  try {
    const out = await hub().commit({
      repo: repoOf(t),
      accessToken: t.accessToken,
      hubUrl: t.hubUrl,
      fetch: t.fetch,
      branch: args.branch,
      parentCommit: args.parentCommit,
      title: args.title,
      description: args.description,
      operations: [
        ...args.files.map((f) => ({
          operation: 'addOrUpdate' as const,
          path: f.path,
          content: new Blob([f.bytes as Uint8Array<ArrayBuffer>]),
        })),
        ...args.deletes.map((p) => ({ operation: 'delete' as const, path: p })),
      ],
    });
    if (!out)
      throw new TelebenchError('hub_bad_response', `the Hub returned no commit for ${t.repo}`, {
        tier: 'transient',
      });
    return out.commit.oid;
  } catch (err) {
    throw hubError(
      err,
      `committing to ${t.repo}@${args.branch} on top of ${args.parentCommit.slice(0, 12)}`,
    );
  }
}
