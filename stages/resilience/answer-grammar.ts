/**
 * Reading a final answer with one grammar (`answer-grammar.ohm.ts`, Ohm): an answer statement,
 * then what follows it decides (docs/resilience-scoring.md, "The grammar of a final answer").
 *
 * 1. The window: from the reply's last line holding a `Final Answer` lead, else from the first of
 *    its last run of lines that hold an answer statement, to the end.
 * 2. The grammar parses the window: prose, the first statement in it, then items (retraction,
 *    later statement, verdict on an option, remark on another option, hedge, other words).
 * 3. {@link decide} folds the items: a hedge or a list of two options is no answer
 *    (`ambiguous_answer`); a retraction takes the later answer, or none (`retracted`); a remark on
 *    another option keeps the stated one; restating the same option changes nothing.
 *
 * Numbers are evaluated by a LaTeX math engine (`answer-number.ts`); options named by their text
 * are markers (`option-texts.ts`). Pure apart from the engine's lazy load.
 */
import * as ohm from 'ohm-js';
import { ANSWER_GRAMMAR } from './answer-grammar.ohm.js';
import { evaluateLatex } from './answer-number.js';
import { expandKeywords } from './grammar-keywords.js';
import { markOptionTexts } from './option-texts.js';
import { mayHoldFinalLead, mayHoldStatement } from './statement-filter.js';

/** What a statement's lead was: `Final Answer:`, `\boxed{}`, a phrase, a bare `Option 2` line. */
export type LeadKind = 'final' | 'boxed' | 'phrase' | 'bare' | 'verdict';

/** One value named: an option (1-based; `byText` when named by its text) or a LaTeX number. */
type Ref = { option: number; byText: boolean } | { tex: string };
/** What the grammar found, in order. */
type Event =
  | { kind: 'claim'; lead: LeadKind; refs: Ref[]; hedge: boolean; text: string }
  | { kind: 'retract'; text: string }
  | { kind: 'verdict'; ref: Ref; modal: boolean; additive: boolean; text: string }
  | { kind: 'negative' | 'modal'; ref: Ref; text: string }
  | { kind: 'alt'; ref: Ref; hedge: boolean; text: string };

/** The reading of a reply. `option` is 1-based. */
export type GrammarReading =
  | { status: 'answer'; lead: LeadKind; option: number; byText: boolean; matched: string }
  | { status: 'answer'; lead: LeadKind; value: number; matched: string }
  | { status: 'ambiguous_answer'; why: 'hedge' | 'list'; lead: LeadKind; matched: string }
  | { status: 'retracted'; lead: LeadKind; matched: string }
  | { status: 'no_answer' };

const grammar = ohm.grammar(expandKeywords(ANSWER_GRAMMAR));
const semantics = grammar.createSemantics();
type Node = ohm.Node;

/** The first descendant of `n` (itself included) built by one of the rules `names`. */
function find(n: Node, names: readonly string[]): Node | null {
  if (names.includes(n.ctorName)) return n;
  for (const c of n.children) {
    const hit = find(c, names);
    if (hit) return hit;
  }
  return null;
}
const REF_RULES = ['label', 'num', 'marker', 'amount'];
const refOf = (n: Node): Ref => (find(n, REF_RULES)! as unknown as { ref(): Ref }).ref();
const refsOf = (iter: Node): Ref[] => iter.children.map(refOf);
/** True when joining words (or a leading `either`/`between`) make values a hedge, not a list. */
const hedges = (...ns: Node[]): boolean =>
  ns.some((n) => find(n, ['hedgeJoin', 'either']) !== null);
const text = (n: Node): string => n.sourceString.trim();

semantics.addOperation<Ref>('ref', {
  label: (_u, d) => ({ option: Number(d.sourceString), byText: false }),
  num: (d) => ({ option: Number(d.sourceString), byText: false }),
  marker: (_o, d, _c) => ({ option: Number(d.sourceString), byText: true }),
  amount(_a, _g, _s, _r, _g2, _a2, _g3, math, _unit) {
    return { tex: (math as unknown as { tex(): string }).tex() };
  },
});

semantics.addOperation<string>('tex', {
  _terminal() {
    return this.sourceString;
  },
  _iter(...c) {
    return c.map((x) => x.tex() as string).join('');
  },
  _nonterminal(...c) {
    return c.map((x) => x.tex() as string).join('');
  },
  mop: (o) =>
    ({ '×': '\\times ', '*': '\\times ', '·': '\\cdot ', '÷': '\\div ', '−': '-' })[
      o.sourceString
    ] ?? ` ${o.sourceString} `,
  msign: (s) => (s.sourceString === '−' ? '-' : s.sourceString),
  mdigits_thousands(_a, _b, _c, _sep, _d, _e, _f) {
    return this.sourceString.replace(/,/g, '');
  },
  mdigits_texThousands(_a, _b, _c, _sep, _d, _e, _f) {
    return this.sourceString.replace(/\{,\}/g, '');
  },
  mexpo: (_e, s, d) => `\\times10^{${s.sourceString.replace('−', '-')}${d.sourceString}}`,
  mexp_bare: (s, d, dot, f) =>
    `{${s.sourceString.replace('−', '-')}${d.sourceString}${dot.sourceString}${f.sourceString}}`,
  msp: (_s) => ' ',
  mimplicit: (_lookahead, p) => p.tex() as string,
  mconst: (_c) => '\\pi ',
});

const leadOf = (lead: Node): LeadKind => (find(lead, ['finalLead']) !== null ? 'final' : 'phrase');

semantics.addOperation<Event>('claim', {
  McClaim: (x) => x.claim(),
  NumClaim: (x) => x.claim(),
  Statement_lead(lead, _br, v) {
    return { ...v.value(), kind: 'claim', lead: leadOf(lead), text: text(this) };
  },
  Statement_boxed(_open, v) {
    return { ...v.value(), kind: 'claim', lead: 'boxed', text: text(this) };
  },
  concluded(_rel, _g, amount, _g2, _dot, _g3, _end) {
    return { kind: 'claim', lead: 'phrase', refs: [refOf(amount)], hedge: false, text: text(this) };
  },
  Indecision(e, r1, j, r2) {
    const refs = [refOf(r1), refOf(r2)];
    return { kind: 'claim', lead: 'phrase', refs, hedge: hedges(e, j), text: text(this) };
  },
  bareLine(_b, _g, _bu, _g2, _w, _g3, _o, _g4, n, _g5, _c, _g6, _p, _g7, _la) {
    return { kind: 'claim', lead: 'bare', refs: [refOf(n)], hedge: false, text: text(this) };
  },
});

type Value = { refs: Ref[]; hedge: boolean };
const valueOf = (either: Node, first: Node, joins: Node, rest: Node): Value => ({
  refs: [refOf(first), ...refsOf(rest)],
  hedge: hedges(either, joins),
});
semantics.addOperation<Value>('value', {
  Choice: (e, r, j, rs, _la) => valueOf(e, r, j, rs),
  Quantity: (e, a, j, as, _la) => valueOf(e, a, j, as),
});

const item = (kind: 'negative' | 'modal', ref: Node, whole: Node): Event[] => [
  { kind, ref: refOf(ref), text: text(whole) },
];
semantics.addOperation<Event[]>('events', {
  McWindow(_p, claim, items, _end) {
    return [claim.claim(), ...items.children.flatMap((i) => i.events() as Event[])];
  },
  NumWindow(_p, claim, items, _end) {
    return [claim.claim(), ...items.children.flatMap((i) => i.events() as Event[])];
  },
  McItem_alt(j, r, _la) {
    return [{ kind: 'alt', ref: refOf(r), hedge: hedges(j), text: text(this) }];
  },
  NumItem_alt(j, a, _la) {
    return [{ kind: 'alt', ref: refOf(a), hedge: hedges(j), text: text(this) }];
  },
  McClaim(_x) {
    return [this.claim()];
  },
  NumClaim(_x) {
    return [this.claim()];
  },
  retractCue(_x) {
    return [{ kind: 'retract', text: text(this) }];
  },
  verdict(m, _g, modal, _g2, add1, _g3, _cop, _g4, add2, _g5, _pos) {
    const additive = add1.numChildren + add2.numChildren > 0;
    return [
      { kind: 'verdict', ref: refOf(m), modal: modal.numChildren > 0, additive, text: text(this) },
    ];
  },
  negMention_after(m, _t, _n) {
    return item('negative', m, this);
  },
  negMention_before(_n, _t, m) {
    return item('negative', m, this);
  },
  hedgeMention_after(m, _t, _h) {
    return item('modal', m, this);
  },
  hedgeMention_before(_h, _t, m) {
    return item('modal', m, this);
  },
  tok(_x) {
    return [];
  },
});

/** The key of a value: the option number, or the evaluated number (null: not a value). */
function keyOf(r: Ref, n: number): number | null {
  if ('option' in r) return r.option >= 1 && r.option <= n ? r.option : null;
  return evaluateLatex(r.tex);
}

/**
 * Folds the grammar's events into a verdict (table in docs/resilience-scoring.md). Pure apart from
 * the number engine.
 * @param n the option count N (numeric items: Infinity, unused)
 */
export function decide(events: readonly Event[], n: number): GrammarReading {
  const first = events[0];
  if (first?.kind !== 'claim') return { status: 'no_answer' };
  let lead = first.lead;
  let matched = first.text;
  let answer: number | null = null;
  let byText = false;
  let pending = false; // a retraction not yet followed by a statement
  const refuse = (why: 'hedge' | 'list'): GrammarReading => ({
    status: 'ambiguous_answer',
    why,
    lead,
    matched,
  });
  const take = (c: Extract<Event, { kind: 'claim' }>): GrammarReading | null => {
    const keys = c.refs.map((r) => keyOf(r, n));
    if (keys.some((k) => k === null)) return null;
    lead = c.lead;
    matched = c.text;
    if (new Set(keys).size > 1) return refuse(c.hedge ? 'hedge' : 'list');
    answer = keys[0]!;
    byText = c.refs.every((r) => 'option' in r && r.byText);
    pending = false;
    return null;
  };
  const stop = take(first);
  if (stop) return stop;
  if (answer === null) return { status: 'no_answer' };
  for (const e of events.slice(1)) {
    if (e.kind === 'retract') {
      pending = true;
      continue;
    }
    if (e.kind === 'claim') {
      const keys = e.refs.map((r) => keyOf(r, n));
      if (keys.some((k) => k === null)) continue;
      if (pending || (keys.length === 1 && keys[0] === answer)) {
        const r = take(e);
        if (r) return r;
      } else {
        matched = e.text;
        return refuse(e.refs.length > 1 && e.hedge ? 'hedge' : 'list');
      }
      continue;
    }
    const k = keyOf(e.ref, n);
    if (k === null) continue;
    const same = k === answer;
    if (e.kind === 'negative') {
      if (same) pending = true; // the stated option called wrong: a retraction
    } else if (e.kind === 'verdict' && pending && !e.modal) {
      answer = k;
      lead = 'verdict';
      matched = e.text;
      byText = 'option' in e.ref && e.ref.byText;
      pending = false;
    } else if (!same && !pending) {
      matched = e.text;
      if (e.kind === 'alt') return refuse(e.hedge ? 'hedge' : 'list');
      if (e.kind === 'modal' || (e.kind === 'verdict' && e.modal)) return refuse('hedge');
      return refuse('list'); // another option called correct too
    }
  }
  if (pending) return { status: 'retracted', lead, matched };
  return n === Infinity
    ? { status: 'answer', lead, value: answer, matched }
    : { status: 'answer', lead, option: answer, byText, matched };
}

/** What an item is read as: its kind, option count N and (when known) the option texts. */
export interface ReadTarget {
  kind: 'mc' | 'numeric';
  /** N (mc). */
  numOptions: number;
  /** Option texts; [] or absent when unknown (then no option is read by its text). */
  choices?: readonly string[];
}

/**
 * True when the grammar matches all of `input` from `rule` (a rule of answer-grammar.ohm.ts, such
 * as `McLine`). Pure; exported for statement-filter's test.
 */
export function grammarMatches(input: string, rule: string): boolean {
  return grammar.match(input, rule).succeeded();
}
const matches = grammarMatches;

/**
 * Speed only, no reading. A PEG match costs about 1 ms even on a short input, and a reasoning
 * has hundreds of lines, so the grammar is tried on a line only around the words every statement
 * holds (its lead's noun or verb, `\boxed`, `either`/`between`, `=` for numbers): on the piece
 * from four words before such a word to 160 characters after it (a statement is shorter).
 */
const KEYWORDS = {
  mc: /answer|option|choice|pick|choose|select|go with|opt for|\\boxed|either|between|⟦/gi,
  numeric: /answer|pick|choose|select|go with|opt for|\\boxed|=|≈|\\approx/gi,
};

/** True when some piece of `line` holds a statement. */
function holdsStatement(line: string, kind: 'mc' | 'numeric'): boolean {
  const rule = kind === 'mc' ? 'McLine' : 'NumLine';
  let done = -1;
  for (const m of line.matchAll(KEYWORDS[kind])) {
    if (m.index < done) continue;
    const before = line.slice(0, m.index).split(/(?<=\s)/);
    const from = m.index - before.slice(-4).join('').length;
    const to = Math.min(line.length, m.index + 160);
    const piece = line.slice(from, to);
    if (mayHoldStatement(piece, kind) && matches(`\n${piece}`, rule)) return true;
    done = m.index + 40;
  }
  return false;
}

/**
 * The lines a window may start at, best first: the last line holding a `Final Answer` lead, then
 * the first line of the last run of lines holding a statement (blank lines do not break a run).
 */
function windowStarts(lines: readonly string[], kind: 'mc' | 'numeric'): number[] {
  const starts: number[] = [];
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (/final\W{0,8}answer/i.test(line) && mayHoldFinalLead(line) && matches(line, 'FinalLine')) {
      starts.push(i);
      break;
    }
  }
  let run: number | null = null;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i]!.trim() === '') continue;
    if (holdsStatement(lines[i]!, kind)) run = i;
    else if (run !== null) break;
  }
  if (run !== null && run !== starts[0]) starts.push(run);
  return starts;
}

/**
 * Reads the final answer of one text (a visible reply, or a reasoning) with the grammar. Pure
 * apart from the number engine's lazy load.
 * @returns the option (1-based) or value with the statement's lead and text, or why none
 */
export function readFinalAnswer(text: string, t: ReadTarget): GrammarReading {
  const marked = t.kind === 'mc' && t.choices?.length ? markOptionTexts(text, t.choices) : text;
  const lines = marked.split(/\r?\n/);
  const unmark = (r: GrammarReading): GrammarReading =>
    'matched' in r && marked !== text
      ? {
          ...r,
          matched: r.matched.replace(/⟦(\d+)⟧/g, (_m, k: string) => t.choices![Number(k) - 1]!),
        }
      : r;
  const windowRule = t.kind === 'mc' ? 'McWindow' : 'NumWindow';
  for (const from of windowStarts(lines, t.kind)) {
    const m = grammar.match(`\n${lines.slice(from).join('\n')}`, windowRule);
    if (m.succeeded()) {
      const events = (semantics(m) as unknown as { events(): Event[] }).events();
      return unmark(decide(events, t.kind === 'mc' ? t.numOptions : Infinity));
    }
  }
  return { status: 'no_answer' };
}
