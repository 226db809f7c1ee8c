/**
 * Per-instance classification (SWE-Bench 5G paper, Table IV categories): bug category by rules over
 * the fix diff and the issue/PR text, and the 3GPP specification references cited in the issue,
 * PR and commit messages ("TS 29.514", "TS 23.502 §4.3.2", "3GPP TS 38.413").
 */
import type { FixSite } from './patterns.js';
import type { BugCategory } from '../types.js';

/** Bug categories of the contract (TestGen.bug_category): the released row schema's enum. */
export type { BugCategory };

const TEXT_RULES: [BugCategory, RegExp][] = [
  [
    'nil_pointer',
    /\b(nil[- ]pointer|null[- ]pointer|nil dereference|null dereference|segmentation (fault|violation)|SIGSEGV|invalid memory address|NoneType|nullptr|panic: runtime error: invalid memory)/i,
  ],
  [
    'concurrency',
    /\b(race condition|data race|deadlock|concurrent map|mutex|goroutine leak|lock(ed|ing)? order|atomic)\b/i,
  ],
  [
    'resource_leak',
    /\b(memory leak|leak(s|ed|ing)?|not (freed|released|closed)|file descriptor|fd leak|unclosed)\b/i,
  ],
  [
    'missing_validation',
    /\b(validat(e|ion)|out of range|index out of range|bounds check|invalid (value|input|length|parameter|ie)|malformed|overflow|mandatory|optional (ie|field)|not check(ed)?|missing check)\b/i,
  ],
];

/**
 * Bug category from rules, diff first: added nil/NULL/None guards → nil_pointer; added lock/unlock
 * or atomic calls → concurrency; added close/free/release calls when the issue/PR text speaks
 * of a leak (or of something not closed/freed/released, exhaustion) → resource_leak; added length or
 * range checks → missing_validation; then keywords of the issue/PR text; else logic when the fix
 * changes code, other when it does not.
 * @param patch the fix diff (unified); `text` issue title/body, PR title/body, commit messages
 */
export function bugCategory(patch: string, text: string, sites: FixSite[]): BugCategory {
  const added = patch
    .split('\n')
    .filter((l) => l.startsWith('+') && !l.startsWith('+++'))
    .join('\n');
  if (sites.some((s) => s.pattern.kind === 'null_check')) return 'nil_pointer';
  if (
    /\b(\w+\.)?(Lock|Unlock|RLock|RUnlock|pthread_mutex_\w+|ogs_thread_mutex_\w+)\(|\batomic\.|\bsync\.(Mutex|RWMutex|Once|Map)\b|\bthreading\.Lock\b/.test(
      added,
    )
  )
    return 'concurrency';
  if (
    /\b(\w+\.)?(Close|close|free|Free|release|Release|ogs_free|ogs_pkbuf_free|talloc_free)\(/.test(
      added,
    ) &&
    /\b(leak\w*|not (closed|freed|released)|exhaust\w*|too many open files)/i.test(text)
  )
    return 'resource_leak';
  if (sites.some((s) => s.pattern.kind === 'length_check' || s.pattern.kind === 'comparison'))
    return 'missing_validation';
  for (const [cat, re] of TEXT_RULES) if (re.test(text)) return cat;
  if (/!= nil|== nil|!= NULL|== NULL|is None|is not None/.test(added)) return 'nil_pointer';
  return added.trim() === '' ? 'other' : 'logic';
}

const SPEC_RE =
  /\b(?:3GPP\s+)?(TS|TR)\s?(\d{2})[.\s](\d{3})(?:\s*(?:§|(?:section|clause|sec\.)\s*)\s*(\d+(?:\.\d+)*))?/gi;

/**
 * 3GPP specification references in `texts`, normalised to `TS 29.514` or `TS 23.502 §4.3.2`
 * (clause kept when written with §, "section" or "clause"), unique, in order of first appearance.
 */
export function specRefs(...texts: (string | null | undefined)[]): string[] {
  const out: string[] = [];
  for (const t of texts) {
    if (!t) continue;
    for (const m of t.matchAll(SPEC_RE)) {
      const ref = `${m[1]!.toUpperCase()} ${m[2]}.${m[3]}${m[4] ? ` §${m[4]}` : ''}`;
      if (!out.includes(ref)) out.push(ref);
    }
  }
  return out;
}
