/**
 * The mining part of the SWE-Bench 5G branch for the composition root (`stages/index.ts`): its
 * stages and the funnel report (mined, linked, kept, and counts per reject reason), per repository.
 */
import type { Stage, StageContext } from '../../pipeline/stage.js';
import { swe5gMine } from './mine/mine.js';
import { swe5gLink } from './link/link.js';
import { swe5gFilter } from './filter/filter.js';
import type { LinkedPR } from './types.js';
import { swe5gSettings, type HasSwe5g } from './config.js';
import { addCounts } from './report-counts.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const swe5gMiningStages: Stage<any, any, any>[] = [swe5gMine, swe5gLink, swe5gFilter];

/** Funnel counts of one repository (or `total`). */
export interface FunnelRow {
  repo: string;
  source: string;
  mined: number;
  linked: number;
  /** Linked PRs with at least one closed issue / with only open issues (issue text known). */
  issue_closed: number;
  issue_open_only: number;
  kept: number;
  incomplete: number;
  rejected: Record<string, number>;
}

/** A funnel row of `repo` (a registry id, or `total`) with every count at zero. */
function emptyRow(repo: string): FunnelRow {
  return {
    repo,
    source: '',
    mined: 0,
    linked: 0,
    issue_closed: 0,
    issue_open_only: 0,
    kept: 0,
    incomplete: 0,
    rejected: {},
  };
}

/**
 * Funnel per repository from the store: `mined` = PRs found by swe5g.mine, `linked` = PRs with at
 * least one issue (text known) or issue reference >= min_link_confidence, of which
 * `issue_closed` / `issue_open_only` by the state of their fetched issues (issue 3: some issues
 * stay open after the fix merged; the funnel counts both), `kept` = swe5g.filter done, `rejected`
 * = swe5g.filter skipped by reason.
 */
export function miningFunnel(ctx: StageContext<HasSwe5g>): FunnelRow[] {
  const minConf = swe5gSettings(ctx.config).filter.min_link_confidence;
  const rows = new Map<string, FunnelRow>();
  const row = (id: string): FunnelRow => {
    let r = rows.get(id);
    if (!r) {
      r = emptyRow(id);
      rows.set(id, r);
    }
    return r;
  };
  for (const { output } of ctx.store.outputs(swe5gMine)) {
    const r = row(output.registry_id);
    r.source = output.source;
    r.mined += output.prs.length;
  }
  for (const rec of ctx.store.items(swe5gLink)) {
    if (rec.state !== 'done') continue;
    const pr = rec.output as LinkedPR;
    const r = row(pr.registry_id);
    if (pr.issues.length > 0 || pr.links.some((l) => l.confidence >= minConf)) r.linked++;
    if (pr.issues.some((i) => i.state === 'closed')) r.issue_closed++;
    else if (pr.issues.length > 0) r.issue_open_only++;
  }
  for (const rec of ctx.store.items(swe5gFilter)) {
    const pr = (rec.input as { pr?: LinkedPR } | null)?.pr;
    if (!pr) continue;
    const r = row(pr.registry_id);
    if (rec.state === 'done') {
      r.kept++;
      if ((rec.output as { incomplete?: boolean }).incomplete) r.incomplete++;
    } else if (rec.state === 'skipped' && rec.skipReason)
      r.rejected[rec.skipReason] = (r.rejected[rec.skipReason] ?? 0) + 1;
  }
  const list = [...rows.values()].sort((a, b) => a.repo.localeCompare(b.repo));
  const total = emptyRow('total');
  for (const r of list) {
    total.mined += r.mined;
    total.linked += r.linked;
    total.issue_closed += r.issue_closed;
    total.issue_open_only += r.issue_open_only;
    total.kept += r.kept;
    total.incomplete += r.incomplete;
    addCounts(total.rejected, r.rejected);
  }
  return [...list, total];
}

/** What the git source did not take, per repository (the "why not" of the funnel). */
export interface MiningNotes {
  repo: string;
  /** Number of `refs/pull/N/head` in the mirror (null: API source). */
  pull_refs: number | null;
  /** Landings found by kind (`merge`, `squash`, `rebase`). */
  landings: Record<string, number>;
  /** Skipped commits by reason. */
  skipped: Record<string, number>;
  /** Up to three skipped commits per reason: `abc1234 subject: detail`. */
  examples: string[];
  warnings: string[];
}

/**
 * Per repository: how the git source read the history (landings by merge style), the commits it
 * did not take as PR landings with their reasons, and warnings (a mirror without `refs/pull/*`).
 */
export function miningNotes(ctx: StageContext<HasSwe5g>): MiningNotes[] {
  const out: MiningNotes[] = [];
  for (const { output } of ctx.store.outputs(swe5gMine)) {
    const landings: Record<string, number> = {};
    for (const p of output.prs) landings[p.merge_style] = (landings[p.merge_style] ?? 0) + 1;
    const skipped: Record<string, number> = {};
    const examples: string[] = [];
    for (const c of output.skipped_commits ?? []) {
      skipped[c.reason] = (skipped[c.reason] ?? 0) + 1;
      if (skipped[c.reason]! <= 3)
        examples.push(`${c.reason}: ${c.commit.slice(0, 7)} "${c.subject}": ${c.detail}`);
    }
    out.push({
      repo: output.registry_id,
      pull_refs: output.pull_refs ?? null,
      landings,
      skipped,
      examples,
      warnings: output.warnings ?? [],
    });
  }
  return out.sort((a, b) => a.repo.localeCompare(b.repo));
}

/**
 * Markdown funnel table of {@link miningFunnel}, then the registry's repositories that were not
 * mined (skip reason or error code, with their ids), then the git source's notes
 * ({@link miningNotes}).
 */
export function miningFunnelMarkdown(ctx: StageContext<HasSwe5g>): string {
  const rows = miningFunnel(ctx);
  const out = [
    '## SWE-Bench 5G mining funnel',
    '',
    '| repository | source | mined PRs | linked | issue closed | issue open only | kept | of which incomplete | rejected by reason |',
    '|---|---|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    const rej = Object.entries(r.rejected)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    out.push(
      `| ${r.repo} | ${r.source} | ${r.mined} | ${r.linked} | ${r.issue_closed} | ${r.issue_open_only} | ${r.kept} | ${r.incomplete} | ${rej} |`,
    );
  }
  // repositories of the registry with no row above: skipped (no mirror, ...) or failed
  const notMined = new Map<string, string[]>();
  for (const r of ctx.store.items(swe5gMine)) {
    if (r.state !== 'skipped' && r.state !== 'failed') continue;
    const why =
      r.state === 'skipped'
        ? (r.skipReason ?? 'skipped')
        : `failed: ${String(r.error?.code ?? 'unknown')}`;
    notMined.set(why, [...(notMined.get(why) ?? []), r.key]);
  }
  if (notMined.size > 0) {
    const n = [...notMined.values()].reduce((a, l) => a + l.length, 0);
    out.push('', `Not mined (${n} repositories of the registry, not in the table):`, '');
    for (const [why, keys] of notMined)
      out.push(`- ${why} ${keys.length}: ${keys.sort().join(', ')}`);
  }
  const notes = miningNotes(ctx).filter((n) => n.pull_refs !== null);
  if (notes.length > 0) {
    const counts = (m: Record<string, number>): string =>
      Object.entries(m)
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
    out.push(
      '',
      '### Git history: landings and commits not taken',
      '',
      '| repository | refs/pull heads | landings by style | commits not taken, by reason |',
      '|---|---:|---|---|',
    );
    for (const n of notes)
      out.push(
        `| ${n.repo} | ${n.pull_refs} | ${counts(n.landings)} | ${counts(n.skipped) || 'none'} |`,
      );
    const details = notes.flatMap((n) => [
      ...n.warnings.map((w) => `- ${n.repo}: warning: ${w}`),
      ...n.examples.map((e) => `- ${n.repo}: ${e}`),
    ]);
    if (details.length > 0) out.push('', ...details);
  }
  return out.join('\n') + '\n';
}
