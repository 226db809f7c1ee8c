/**
 * What `swe5g.link` reads around one PR, taken from everything the state has mined of its
 * repository rather than from the current mining window (issue 32: a refresh mines only what
 * landed at or after the last release's cutoff, and the PR at the cutoff again). A PR's link input
 * must be the one a whole-history run gives it, so that
 * - the PR numbers that are not issues (a `#N` naming another PR is dropped) and
 * - `other_prs` (the repository's other PRs referencing one of its issues)
 * are facts about the repository, not about the window, and a refresh re-links no PR it has linked
 * before. History = the PRs of the current `swe5g.mine` output, plus the PRs earlier runs of this
 * state linked (every `swe5g.link` record, orphaned ones too, of the same registry entry), plus the
 * closed-unmerged PRs every mining of the entry listed ({@link CLOSED_UNMERGED_KV}). Knowing more
 * history never makes a link wrong: a PR number stays a PR, a reference stays a reference.
 */
import type { KeyValue } from '../../../pipeline/store/store.js';
import type { StoreReader } from '../../../pipeline/stage.js';
import { hashJson } from '../../../pipeline/hash.js';
import type { LinkEvidence, LinkedIssue, MinedPR } from '../types.js';
import type { UnmergedPR } from '../mine/mine.js';

/**
 * Key-value namespace of the closed-unmerged PRs each mining of a registry entry listed (key =
 * registry id, value = {@link UnmergedPR}[] by number): the API source lists them only inside its
 * window, and a closed PR referencing an issue stays one.
 */
export const CLOSED_UNMERGED_KV = 'swe5g.closed-unmerged';

/**
 * Adds `listed` to the closed-unmerged PRs recorded for `registryId` (a newer listing of the same
 * number replaces the older). Called by `swe5g.mine` after each item.
 */
export function recordClosedUnmerged(
  kv: KeyValue,
  registryId: string,
  listed: readonly UnmergedPR[],
): void {
  if (listed.length === 0) return;
  const byNumber = new Map(
    (kv.get<UnmergedPR[]>(CLOSED_UNMERGED_KV, registryId) ?? []).map((u) => [u.number, u]),
  );
  for (const u of listed) byNumber.set(u.number, u);
  kv.set(
    CLOSED_UNMERGED_KV,
    registryId,
    [...byNumber.values()].sort((a, b) => a.number - b.number),
  );
}

/**
 * The PRs earlier runs of this state linked, by registry id and instance id: the `pr` of every
 * `swe5g.link` record (any state, orphaned included: a refresh by an earlier version orphaned the
 * PRs outside its window; inputs.ts `linkInputsOf` plans them again, which restores them). Records
 * whose input has no `pr` (an unknown older shape) are passed over.
 */
export function linkedBefore(store: StoreReader): Map<string, Map<string, MinedPR>> {
  const out = new Map<string, Map<string, MinedPR>>();
  for (const r of store.items('swe5g.link')) {
    const pr = (r.input as { pr?: MinedPR } | null)?.pr;
    if (!pr?.registry_id || !pr.instance_id) continue;
    const m = out.get(pr.registry_id) ?? new Map<string, MinedPR>();
    m.set(pr.instance_id, pr);
    out.set(pr.registry_id, m);
  }
  return out;
}

/**
 * The merged PRs of one registry entry to read evidence from: `current` (this mining; they win
 * for an instance id mined again) plus the ones `earlier` holds that it does not. Pure.
 */
export function historyPrs(
  current: readonly MinedPR[],
  earlier: ReadonlyMap<string, MinedPR> | undefined,
): MinedPR[] {
  const ids = new Set(current.map((p) => p.instance_id));
  return [...current, ...[...(earlier?.values() ?? [])].filter((p) => !ids.has(p.instance_id))];
}

/** The closed-unmerged PRs of one entry: this mining's plus the recorded ones, by number. Pure. */
export function historyClosed(
  current: readonly UnmergedPR[],
  recorded: readonly UnmergedPR[] | undefined,
): UnmergedPR[] {
  const byNumber = new Map((recorded ?? []).map((u) => [u.number, u]));
  for (const u of current) byNumber.set(u.number, u);
  return [...byNumber.values()].sort((a, b) => a.number - b.number);
}

/**
 * The part of the issues file one PR's link reads, as a digest: for each issue its evidence names
 * (each `issue` and every `candidate`), the file's row or null. A new issues file re-links exactly
 * the PRs whose issues it adds, changes or drops (before: any change to the file re-linked every
 * git-source PR, the release's PR at the cutoff too).
 * @param issues the issues file's rows by `owner/name#N`
 * @returns sha256 hex of the canonical JSON of the sorted `[issue, row|null]` pairs
 */
export function issuesRowsDigest(
  evidence: readonly LinkEvidence[],
  issues: ReadonlyMap<string, LinkedIssue>,
): string {
  const keys = new Set<string>();
  for (const e of evidence) {
    keys.add(e.issue);
    for (const c of e.candidates ?? []) keys.add(c);
  }
  return hashJson([...keys].sort().map((k) => [k, issues.get(k) ?? null]));
}
