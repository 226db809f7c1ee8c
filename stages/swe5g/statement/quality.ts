/**
 * The quality check of a model-written problem statement (issue 31), run after the leak check: a
 * statement must let a solver find the bug. The leak check keeps the fix out; this keeps filler
 * out (SmolLM2-135M's "The bug is not being reported because the bug is not being reported.",
 * repeated to the token budget, passed the leak check). Deterministic and explainable: the first
 * rule that fails refuses the statement and names itself. Rules, in order:
 *
 * 1. `too_short` / `too_long`: fewer than `min_words` or more than `max_words` words.
 * 2. `repetitive` (after Gopher's repetition filters, Rae et al. 2021, "Scaling Language Models",
 *    appendix A, which drop a document whose duplicate lines or duplicate n-grams cover too much
 *    of it): sentences occurring more than once cover more than `max_repeated` of the characters,
 *    or word 5-grams occurring more than once do (Gopher: 0.15 for 5-grams over web pages; an issue
 *    of 40 words that repeats one 5-word phrase is at 0.25, so the default is 0.3).
 * 3. `boilerplate`: sentences made only of stop words and generic bug-report words ("the issue
 *    is that the code is not working correctly") cover more than `max_boilerplate` of it.
 * 4. `hedged`: sentences hedging ("might", "maybe", "something", "in some cases") cover more than
 *    `max_hedged` of it.
 * 5. `restates_test`: the only anchor it names is a failing test's name (anchors.ts), which the
 *    solver does not see.
 * 6. `ungrounded`: it names no anchor: no identifier of the buggy code, no changed file, no error
 *    text of the failing output.
 * 7. `no_symptom`: it names no observable behaviour: neither the failing output's error text nor a
 *    symptom word (panic, crash, segfault, exception, hang, returns ..., instead of, rejects, ...).
 *
 * SWE-bench Verified's annotation asks the same of a real issue (is it clear what the problem is
 * and what a solution must do); SWE-smith's and R2E-Gym's writers are told to name the observed
 * behaviour and how to trigger it, never the fix.
 */
import { eng as STOPWORDS } from 'stopword';
import { nGram } from 'n-gram';
import { anchorsOf, groundingOf, words, type Grounding, type GroundingInput } from './anchors.js';

/** Thresholds (config `swe5g.problem_statements.model_written.quality`). */
export interface QualitySettings {
  min_words: number;
  max_words: number;
  /** Share of characters in repeated sentences or repeated word 5-grams, 0-1. */
  max_repeated: number;
  /** Share of characters in boilerplate sentences, 0-1. */
  max_boilerplate: number;
  /** Share of characters in hedging sentences, 0-1. */
  max_hedged: number;
}

export const QUALITY_DEFAULTS: QualitySettings = {
  min_words: 10,
  max_words: 800,
  max_repeated: 0.3,
  max_boilerplate: 0.5,
  max_hedged: 0.5,
};

export type QualityRule =
  | 'too_short'
  | 'too_long'
  | 'repetitive'
  | 'boilerplate'
  | 'hedged'
  | 'restates_test'
  | 'ungrounded'
  | 'no_symptom';

/** Accepted with what it names, or refused by one rule with the reason in words. */
export type QualityVerdict =
  { ok: true; grounding: Grounding } | { ok: false; rule: QualityRule; reason: string };

/** Generic bug-report words: a sentence of only these and stop words says nothing of this bug. */
const GENERIC = new Set(
  (
    'bug bugs issue issues problem problems error errors code codes program software application ' +
    'system feature function functions method behavior behaviour work works working worked ' +
    'correct correctly properly fine right wrong fix fixed fixes fixing report reported reports ' +
    'reporting reason happen happens happened occur occurs occurred cause causes caused please ' +
    'need needs needed look check thing things case cases not no being also just really still ' +
    'currently expected expect should would will can does do did result results output value ' +
    'way part place time seem seems like make makes sure know known title description summary ' +
    'steps reproduce actual observed there here this that it ' +
    // function words the stop-word list lacks
    'so when then if as all any some one get gets got very too much many more again already now ' +
    'yet even anyway therefore however'
  ).split(' '),
);

const HEDGE =
  /\b(may|might|could|perhaps|maybe|possibly|probably|presumably|seems?|seemingly|appears? to|apparently|somewhere|something|somehow|some cases|not sure|unsure|unclear|potential(ly)?|likely|i think|i guess)\b/i;

/** Observable behaviour a user reports (the symptom, not the cause or the fix). */
const SYMPTOM =
  /\b(panic\w*|crash\w*|segfault\w*|segmentation fault|sigsegv|sigabrt|abort\w*|core dump\w*|nil pointer|null pointer|dereferenc\w*|exceptions?|traceback|raise[sd]?|throw[sn]?|hangs?|hung|deadlock\w*|times? out|timeout|leak\w*|overflow\w*|out of (range|bounds)|returns?|returned|returning|instead of|but got|rejects?|rejected|refuses?|refused|ignores?|ignored|drops?|dropped|incorrect\w*|invalid|missing|empty|unexpected\w*|infinite|stuck|never|silently)\b/i;

const STOP = new Set(STOPWORDS);

/** Sentences of `s`: its lines, each split by `Intl.Segmenter` (blank ones dropped). */
export function sentences(s: string): string[] {
  const seg = new Intl.Segmenter('en', { granularity: 'sentence' });
  return s
    .split('\n')
    .flatMap((l) => [...seg.segment(l)].map((x) => x.segment.trim()))
    .filter((x) => x !== '');
}

/** Share (0-1) of the sentences' characters in those for which `pred` holds. */
function share(ss: string[], pred: (s: string) => boolean): number {
  const total = ss.reduce((n, s) => n + s.length, 0);
  return total === 0 ? 0 : ss.filter(pred).reduce((n, s) => n + s.length, 0) / total;
}

/**
 * Gopher's two repetition measures for `s`: the share of characters in sentences that occur more
 * than once, and the share of word characters covered by word n-grams that occur more than once.
 */
export function repetition(s: string, n = 5): { sentences: number; ngrams: number } {
  const ss = sentences(s).map((x) => x.toLowerCase());
  const count = new Map<string, number>();
  for (const x of ss) count.set(x, (count.get(x) ?? 0) + 1);
  const ws = words(s).map((w) => w.toLowerCase());
  // n-gram's types give an array of the input's type; for an array input it returns arrays of it
  const grams = (nGram(n)(ws) as unknown as string[][]).map((g) => g.join(' '));
  const seen = new Map<string, number>();
  for (const g of grams) seen.set(g, (seen.get(g) ?? 0) + 1);
  const covered = new Set<number>();
  grams.forEach((g, i) => {
    if ((seen.get(g) ?? 0) > 1) for (let j = i; j < i + n; j++) covered.add(j);
  });
  const chars = ws.reduce((k, w) => k + w.length, 0);
  return {
    sentences: share(ss, (x) => (count.get(x) ?? 0) > 1),
    ngrams: chars === 0 ? 0 : [...covered].reduce((k, i) => k + ws[i]!.length, 0) / chars,
  };
}

/** A sentence of stop words and generic bug-report words only. */
export const isBoilerplate = (s: string): boolean =>
  words(s).every((w) => STOP.has(w.toLowerCase()) || GENERIC.has(w.toLowerCase()));

const pct = (x: number) => `${Math.round(x * 100)}%`;
const list = (xs: Iterable<string>, k = 3) => [...xs].slice(0, k).join(', ') || 'none';

/** Rules 1-4: the text alone. */
function textRule(statement: string, q: QualitySettings): QualityVerdict | null {
  const n = words(statement).length;
  if (n < q.min_words)
    return { ok: false, rule: 'too_short', reason: `has ${n} words (at least ${q.min_words})` };
  if (n > q.max_words)
    return { ok: false, rule: 'too_long', reason: `has ${n} words (at most ${q.max_words})` };
  const r = repetition(statement);
  if (Math.max(r.sentences, r.ngrams) > q.max_repeated)
    return {
      ok: false,
      rule: 'repetitive',
      reason: `repeats itself: ${pct(r.sentences)} of it in repeated sentences, ${pct(r.ngrams)} in repeated 5-word runs (at most ${pct(q.max_repeated)})`,
    };
  const ss = sentences(statement);
  const b = share(ss, isBoilerplate);
  if (b > q.max_boilerplate)
    return {
      ok: false,
      rule: 'boilerplate',
      reason: `is ${pct(b)} boilerplate: sentences such as "${ss.find(isBoilerplate)}" say nothing about this bug (at most ${pct(q.max_boilerplate)})`,
    };
  const h = share(ss, (s) => HEDGE.test(s));
  if (h > q.max_hedged)
    return {
      ok: false,
      rule: 'hedged',
      reason: `hedges in ${pct(h)} of it ("${ss.find((s) => HEDGE.test(s))}"; at most ${pct(q.max_hedged)})`,
    };
  return null;
}

/**
 * Checks `statement` against what the writer was shown.
 * @param c the writer's inputs: buggy code, failing output, changed files, FAIL_TO_PASS
 * @param q thresholds (defaults {@link QUALITY_DEFAULTS})
 * @returns `{ok: true, grounding}` naming what the statement anchors on, or `{ok: false, rule,
 *   reason}` for the first rule (in the order above) it fails
 */
export function qualityCheck(
  statement: string,
  c: GroundingInput,
  q: QualitySettings = QUALITY_DEFAULTS,
): QualityVerdict {
  const t = textRule(statement, q);
  if (t) return t;
  const a = anchorsOf(c);
  const g = groundingOf(statement, a);
  const anchored = g.code.length + g.files.length + g.output.length > 0;
  if (!anchored && g.tests.length > 0)
    return {
      ok: false,
      rule: 'restates_test',
      reason: `names only the failing test (${list(g.tests)}), which the solver does not see, and no function, file or error text of the bug`,
    };
  if (!anchored)
    return {
      ok: false,
      rule: 'ungrounded',
      reason: `names nothing a solver could look for: no identifier of the buggy code (such as ${list(a.code)}), no changed file (${list(c.files)}), no error text of the failing output`,
    };
  if (g.output.length === 0 && !SYMPTOM.test(statement))
    return {
      ok: false,
      rule: 'no_symptom',
      reason: `names ${list([...g.code, ...g.files])} but no observable behaviour (a panic, crash, error, wrong or missing result)`,
    };
  return { ok: true, grounding: g };
}
