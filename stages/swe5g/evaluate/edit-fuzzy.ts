/**
 * The `fuzzy` rule of SEARCH/REPLACE application (see `edits.ts`): the window of the SEARCH
 * text's length whose whitespace-normalised text is most similar to it, similarity
 * `1 - (inserted + deleted characters) / (both lengths)` from the `diff` package's character diff
 * (i.e. 2·LCS/(|a|+|b|)), accepted at `threshold` or above when no other non-overlapping window
 * comes within `margin` of it.
 */
import type * as jsdiffTypes from 'diff';
import { lazy } from '../../../pipeline/lazy.js';
import { normLine } from './edit-lines.js';

const jsdiff = lazy<typeof jsdiffTypes>('diff');

/** Settings of the fuzzy rule. */
export interface FuzzySettings {
  /** Lowest similarity accepted (0..1). */
  threshold: number;
  /** A second window this close to the best (in similarity) makes the edit ambiguous. */
  margin: number;
}

export const DEFAULT_FUZZY: FuzzySettings = { threshold: 0.85, margin: 0.03 };

/** Character histogram (for the upper bound on the similarity). */
function histogram(s: string): Map<string, number> {
  const h = new Map<string, number>();
  for (const c of s) h.set(c, (h.get(c) ?? 0) + 1);
  return h;
}

/**
 * Similarity of two texts: 1 - (inserted + deleted characters) / (|a| + |b|), from `diff`'s
 * character diff, stopped early (returns 0) when it cannot reach `atLeast`.
 */
export function similarity(a: string, b: string, atLeast = 0): number {
  const total = a.length + b.length;
  if (total === 0) return 1;
  const maxEdit = Math.floor((1 - atLeast) * total) + 1;
  const parts = jsdiff().diffChars(a, b, { maxEditLength: maxEdit });
  if (!parts) return 0;
  let edits = 0;
  for (const p of parts) if (p.added || p.removed) edits += p.value.length;
  return 1 - edits / total;
}

/** The best fuzzy window of `lines` for `search`: its start and similarity, or why none (`no_match` below the threshold, `ambiguous` with a rival within the margin). */
export function fuzzyWindow(
  lines: string[],
  search: string[],
  fz: FuzzySettings,
): { start: number; score: number } | { reason: 'no_match' | 'ambiguous'; detail: string } {
  const target = search.map(normLine).join('\n');
  const tHist = histogram(target);
  const m = search.length;
  const scored: { start: number; score: number }[] = [];
  const normLines = lines.map(normLine);
  for (let s = 0; s + m <= lines.length; s++) {
    const text = normLines.slice(s, s + m).join('\n');
    // upper bound: the LCS cannot exceed the common character multiset
    let common = 0;
    for (const [c, n] of histogram(text)) common += Math.min(n, tHist.get(c) ?? 0);
    const bound = (2 * common) / (text.length + target.length || 1);
    if (bound < fz.threshold) continue;
    const score = similarity(text, target, fz.threshold);
    if (score >= fz.threshold) scored.push({ start: s, score });
  }
  if (scored.length === 0)
    return {
      reason: 'no_match',
      detail: `no window of ${m} lines reaches similarity ${fz.threshold}`,
    };
  scored.sort((a, b) => b.score - a.score || a.start - b.start);
  const best = scored[0]!;
  const rival = scored.find(
    (w) => Math.abs(w.start - best.start) >= m && w.score >= best.score - fz.margin,
  );
  if (rival)
    return {
      reason: 'ambiguous',
      detail: `fuzzy: lines ${best.start + 1} (${best.score.toFixed(3)}) and ${rival.start + 1} (${rival.score.toFixed(3)}) are equally close`,
    };
  return best;
}
