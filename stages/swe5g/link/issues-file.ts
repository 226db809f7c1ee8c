/**
 * `--issues-from FILE` / `swe5g.mining.issues_from`: JSON Lines of GitHub REST issue objects obtained
 * elsewhere (an export, another machine with network), used to complete git-only candidates with
 * the issue text. Only the fields below are read; the repository comes from `repository_url`
 * (`https://api.github.com/repos/free5gc/free5gc`) or `html_url`.
 */
import { readFileSync, existsSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../../../pipeline/errors.js';
import type { LinkedIssue } from '../types.js';

const issueLineSchema = z.object({
  number: z.number().int().positive(),
  title: z.string(),
  body: z.string().nullable().optional(),
  state: z.enum(['open', 'closed']),
  created_at: z.string(),
  labels: z
    .array(z.union([z.string(), z.object({ name: z.string().nullable().optional() })]))
    .default([]),
  repository_url: z.string().optional(),
  html_url: z.string().optional(),
  pull_request: z.unknown().optional(),
});

/** Title and body of a pull request row (the issues endpoint also lists PRs, with `pull_request`). */
export interface PullRow {
  title: string;
  body: string;
}

/** Contents of an issues file: issues and PR rows, both keyed `owner/name#N`. */
export interface IssuesData {
  issues: Map<string, LinkedIssue>;
  pulls: Map<string, PullRow>;
}

/**
 * Reads the file into a map `owner/name#N` -> issue. Pull-request rows are left out (see
 * {@link loadIssuesData}).
 * @throws ConfigError as {@link loadIssuesData}
 */
export function loadIssuesFile(file: string): Map<string, LinkedIssue> {
  return loadIssuesData(file).issues;
}

/**
 * Reads the file: issues, and the rows that are pull requests (their title and body carry the
 * closing references a git-only candidate lacks, e.g. "Fixes free5gc/free5gc#641").
 * @throws ConfigError naming the file and line of the first invalid row (bad JSON, missing field,
 *   no repository_url/html_url)
 */
export function loadIssuesData(file: string): IssuesData {
  if (!existsSync(file)) throw new ConfigError(`issues file not found: ${file}`, { file });
  const out = new Map<string, LinkedIssue>();
  const pulls = new Map<string, PullRow>();
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.forEach((text, i) => {
    if (text.trim() === '') return;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new ConfigError(`${file}:${i + 1}: not JSON: ${(err as Error).message}`, {
        file,
        line: i + 1,
      });
    }
    const r = issueLineSchema.safeParse(raw);
    if (!r.success) {
      const first = r.error.issues[0]!;
      throw new ConfigError(
        `${file}:${i + 1}: not a GitHub issue object: ${first.path.join('.') || '(row)'}: ${first.message}`,
        { file, line: i + 1, path: first.path.join('.') },
      );
    }
    const v = r.data;
    const m =
      /\/repos\/([^/]+)\/([^/]+)$/.exec(v.repository_url ?? '') ??
      /github\.com\/([^/]+)\/([^/]+)\/(?:issues|pull)\/\d+/.exec(v.html_url ?? '');
    if (!m)
      throw new ConfigError(
        `${file}:${i + 1}: issue #${v.number} has neither repository_url nor an issue html_url, so its repository is unknown`,
        { file, line: i + 1 },
      );
    const repo = `${m[1]}/${m[2]}`;
    if (v.pull_request !== undefined) {
      pulls.set(`${repo}#${v.number}`, { title: v.title, body: v.body ?? '' });
      return;
    }
    out.set(`${repo}#${v.number}`, {
      repo,
      number: v.number,
      title: v.title,
      body: v.body ?? '',
      labels: v.labels.map((l) => (typeof l === 'string' ? l : (l.name ?? ''))).filter(Boolean),
      state: v.state,
      created_at: v.created_at,
    });
  });
  return { issues: out, pulls };
}
