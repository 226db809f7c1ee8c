/**
 * A bare `#N` that could name an issue in more than one repository (free5GC: an NF repository's
 * PR says `Fixes #N`, and issues are filed centrally in `free5gc/free5gc`) records every candidate
 * (`LinkEvidence.candidates`, `refs.ts`). Issue 21, "Linking": the link stage takes the candidate
 * that the issue data holds (the `--issues-from` file, or the GitHub API) and says which.
 */
import type { LinkEvidence } from '../types.js';

/**
 * Picks, for each evidence with several candidates, the first candidate that `exists` confirms
 * (candidates are in preference order: `issues_repo` first). Evidence without candidates, or whose
 * candidates none exist, is returned unchanged.
 * @param evidence the PR's evidence
 * @param exists   whether `owner/name#N` is an issue in the issue data (memoised by the caller)
 * @param source   what `exists` asks, for the note (`the issues file`, `the GitHub API`)
 * @returns the evidence, with `issue` set to the confirmed candidate and `note` saying which and why
 */
export async function resolveCandidates(
  evidence: readonly LinkEvidence[],
  exists: (issue: string) => Promise<boolean>,
  source: string,
): Promise<LinkEvidence[]> {
  const out: LinkEvidence[] = [];
  for (const e of evidence) {
    if (!e.candidates || e.candidates.length < 2) {
      out.push(e);
      continue;
    }
    const found: string[] = [];
    for (const cand of e.candidates) if (await exists(cand)) found.push(cand);
    if (found.length === 0) {
      out.push({
        ...e,
        note: `${e.note ? `${e.note}; ` : ''}${source} holds none of ${e.candidates.join(', ')}`,
      });
      continue;
    }
    const chosen = found[0]!;
    const others = e.candidates.filter((x) => x !== chosen);
    const why =
      found.length === 1
        ? `${chosen} taken: ${source} holds it and not ${others.join(', ')}`
        : `${chosen} taken (issues_repo first): ${source} holds both (${found.join(', ')})`;
    out.push({ ...e, issue: chosen, note: `${e.note ? `${e.note}; ` : ''}${why}` });
  }
  return out;
}
