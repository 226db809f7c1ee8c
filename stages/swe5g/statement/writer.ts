/**
 * Writes an issue-style problem statement for a fix without a linked issue (issue 31, after
 * SWE-smith and R2E-Gym, which write statements for synthetic or unlinked fixes with a model).
 * The model sees the buggy code (the functions the fix changes, at base_commit), the failing
 * test's output at the parent (validation's step 1) and the commit's context (title, messages,
 * files) — never the gold patch. Each answer goes through the leak check (leak.ts); a refused one
 * is asked again with the reason (in words, not the quoted text), at most `maxAttempts` times.
 */
import type { LlmProvider } from '../../../pipeline/providers/llm/types.js';
import type { SourceLanguage } from '../../../pipeline/providers/treesitter/parser.js';
import { parseSource } from '../../../pipeline/providers/treesitter/parser.js';
import { languageOfPath } from '../testgen/diffinfo.js';
import { listFunctions } from '../testgen/patterns.js';
import { leakCheck } from './leak.js';
import {
  QUALITY_DEFAULTS,
  qualityCheck,
  type QualityRule,
  type QualitySettings,
} from './quality.js';
import { judgeStatement } from './judge.js';

/** What the writer is shown. */
export interface StatementContext {
  /** `owner/name`. */
  repo: string;
  /** The buggy functions (or hunks' surroundings) at base_commit, each headed by its file. */
  buggyCode: string;
  /** The failing tests' output at the parent, cut. */
  testOutput: string;
  /** PR title and commit messages. */
  commitText: string;
  /** Files the fix changes. */
  files: string[];
  FAIL_TO_PASS: string[];
}

/**
 * One check's verdict on an answer: accepted, or refused by the leak check (`leak`: it quotes the
 * fix) or the quality check (`quality`: it would not let a solver find the bug; `rule` names the
 * rule of quality.ts, or `judge` for the optional LLM judge, judge.ts).
 */
export type Checked =
  | { ok: true }
  | { ok: false; check: 'leak' }
  | { ok: false; check: 'quality'; rule: QualityRule | 'judge' };
/** One attempt as recorded: the verdict and, when refused, the reason in words. */
export type Attempt = Checked & { reason?: string };

/** The outcome: a statement with every attempt's verdict, or the last refusal's reason. */
export type Written =
  | { ok: true; statement: string; attempts: Attempt[] }
  | { ok: false; reason: string; check: 'leak' | 'quality'; attempts: Attempt[] };

/** Old-side line ranges (1-based, inclusive) of each file's hunks in a unified diff. */
export function hunkRanges(patch: string): Map<string, [number, number][]> {
  const out = new Map<string, [number, number][]>();
  let file: string | null = null;
  for (const l of patch.split('\n')) {
    const h = /^--- (?:a\/)?(.+)$/.exec(l);
    if (h) {
      file = h[1] === '/dev/null' ? null : h[1]!;
      continue;
    }
    const m = /^@@ -(\d+)(?:,(\d+))? \+/.exec(l);
    if (m && file) {
      const start = Number(m[1]);
      const len = m[2] === undefined ? 1 : Number(m[2]);
      out.set(file, [...(out.get(file) ?? []), [start, Math.max(start, start + len - 1)]]);
    }
  }
  return out;
}

/**
 * The buggy code the writer sees: for each changed source file, the functions at base_commit that
 * the fix's hunks touch (tree-sitter), else the hunk's old lines with 10 lines around; cut at
 * `maxChars`.
 * @param read the file's text at base_commit (null when it does not exist there)
 */
export async function buggyCodeOf(
  patch: string,
  read: (path: string) => string | null,
  maxChars: number,
): Promise<string> {
  const parts: string[] = [];
  for (const [path, ranges] of hunkRanges(patch)) {
    const lang = languageOfPath(path);
    const src = read(path);
    if (!lang || src === null) continue;
    const lines = src.split('\n');
    const fns = await touchedFunctions(lang, src, ranges);
    const text = fns.length
      ? fns.join('\n\n')
      : ranges
          .map(([a, b]) =>
            lines.slice(Math.max(0, a - 11), Math.min(lines.length, b + 10)).join('\n'),
          )
          .join('\n...\n');
    parts.push(`// ${path}\n${text}`);
  }
  const all = parts.join('\n\n');
  return all.length > maxChars ? `${all.slice(0, maxChars)}\n... (cut)` : all;
}

/** Text of the functions of `src` overlapping any of `ranges` (1-based lines). */
async function touchedFunctions(
  lang: SourceLanguage,
  src: string,
  ranges: [number, number][],
): Promise<string[]> {
  const tree = await parseSource(lang, src);
  try {
    return listFunctions(lang, tree.rootNode)
      .filter((f) => ranges.some(([a, b]) => f.startRow + 1 <= b && f.endRow + 1 >= a))
      .map((f) => f.node.text);
  } finally {
    tree.delete();
  }
}

/**
 * The lines of a test log about the failing tests: each line naming one of `tests` (the name
 * after `::`) and the 12 lines after it, else the lines with FAIL / panic / Error / assert; cut
 * at `maxChars`.
 */
export function failingOutput(log: string, tests: string[], maxChars: number): string {
  const lines = log.split('\n');
  const names = tests.map((t) => t.split('::').pop()!).filter(Boolean);
  const keep = new Set<number>();
  lines.forEach((l, i) => {
    if (names.some((n) => l.includes(n)))
      for (let j = i; j < Math.min(lines.length, i + 13); j++) keep.add(j);
  });
  if (keep.size === 0)
    lines.forEach((l, i) => {
      if (/FAIL|panic|Error|assert|Traceback/i.test(l)) keep.add(i);
    });
  const out = [...keep]
    .sort((a, b) => a - b)
    .map((i) => lines[i])
    .join('\n');
  return out.length > maxChars ? `${out.slice(0, maxChars)}\n... (cut)` : out;
}

const SYSTEM =
  'You write the GitHub issue a user would have filed for a bug, before anyone fixed it. ' +
  'Write a title line, then 3 to 8 sentences: what goes wrong, how to trigger it, what was expected. ' +
  'Describe the symptom in plain words. Do not propose a fix, do not write code that fixes it, and do not mention tests that were added.';

/** The first user message: the buggy code, the failing output and the commit's context. */
export function promptOf(c: StatementContext): string {
  return [
    `Repository: ${c.repo}`,
    `Files involved: ${c.files.join(', ')}`,
    `Commit context:\n${c.commitText.trim()}`,
    `The code as it is now (with the bug):\n\`\`\`\n${c.buggyCode}\n\`\`\``,
    `Output of the failing test(s) ${c.FAIL_TO_PASS.join(', ')}:\n\`\`\`\n${c.testOutput}\n\`\`\``,
    'Write the issue.',
  ].join('\n\n');
}

/** An answer without code fences and surrounding blanks ('' when only a fence remains). */
const clean = (s: string) => s.replace(/```[a-z]*\n?/gi, '').trim();

/**
 * The two checks of an answer, in order: the leak check against `patch` (leak.ts), then, unless
 * `quality` is false, the quality check against what the writer was shown (quality.ts).
 * @returns the first refusal with its check, rule and reason, or `{ok: true}`
 */
export function checkStatement(
  statement: string,
  c: StatementContext,
  patch: string,
  opts: { ngram: number; quality: QualitySettings | false },
): Attempt {
  const leak = leakCheck(statement, patch, c.buggyCode, opts.ngram);
  if (!leak.ok) return { ok: false, check: 'leak', reason: leak.reason };
  if (opts.quality === false)
    return statement.length < 20
      ? { ok: false, check: 'quality', rule: 'too_short', reason: 'is empty or nearly so' }
      : { ok: true };
  const q = qualityCheck(statement, c, opts.quality);
  return q.ok ? { ok: true } : { ok: false, check: 'quality', rule: q.rule, reason: q.reason };
}

/** What the writer is told after a refusal: the reason in words, never the quoted fix. */
function retryMessage(a: Attempt): string {
  if (a.ok || a.check === 'leak')
    return 'That issue was refused: it contains code of the fix. Rewrite it describing only the symptom, in plain words, with no code of a fix.';
  return (
    `That issue was refused: it ${a.reason}. Rewrite it so that a developer can find the bug: ` +
    'name the function or file involved and what goes wrong (the error, panic or wrong result, and when), in plain words, without proposing a fix.'
  );
}

/**
 * Asks `llm` for a statement and checks each answer (leak, then quality: {@link checkStatement};
 * then, when `opts.judge` is given, the LLM judge of judge.ts).
 * @param opts.quality thresholds of the quality check, or false to run the leak check alone
 * @returns the accepted statement, or the last refusal's check and reason after `maxAttempts`
 * @throws whatever the provider throws (network, unknown model): the stage records it
 */
export async function writeStatement(
  llm: LlmProvider,
  opts: {
    model: string;
    maxTokens: number;
    numCtx?: number;
    maxAttempts: number;
    ngram: number;
    quality?: QualitySettings | false;
    /** The optional LLM judge, asked after the deterministic checks accept (judge.ts). */
    judge?: { llm: LlmProvider; model: string; maxTokens: number };
    signal?: AbortSignal;
  },
  c: StatementContext,
  patch: string,
): Promise<Written> {
  const messages: { role: 'system' | 'user' | 'assistant'; content: string }[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: promptOf(c) },
  ];
  const attempts: Attempt[] = [];
  for (let i = 1; i <= opts.maxAttempts; i++) {
    const res = await llm.chat(
      {
        model: opts.model,
        messages,
        maxTokens: opts.maxTokens,
        temperature: i === 1 ? 0 : 0.7,
        seed: i,
        ...(opts.numCtx ? { numCtx: opts.numCtx } : {}),
      },
      opts.signal ? { signal: opts.signal } : {},
    );
    const statement = clean(res.content);
    let v = checkStatement(statement, c, patch, {
      ngram: opts.ngram,
      quality: opts.quality ?? QUALITY_DEFAULTS,
    });
    if (v.ok && opts.judge) {
      const j = opts.judge;
      const d = await judgeStatement(
        j.llm,
        { model: j.model, maxTokens: j.maxTokens, ...(opts.signal ? { signal: opts.signal } : {}) },
        statement,
        c,
      );
      if (!d.ok)
        v = {
          ok: false,
          check: 'quality',
          rule: 'judge',
          reason: `was judged uninformative by ${j.model}: ${d.reason}`,
        };
    }
    attempts.push(v);
    if (v.ok) return { ok: true, statement, attempts };
    messages.push({ role: 'assistant', content: res.content });
    messages.push({ role: 'user', content: retryMessage(v) });
  }
  const last = attempts.at(-1);
  if (!last || last.ok) return { ok: false, reason: 'no answer', check: 'quality', attempts };
  return { ok: false, reason: last.reason ?? '', check: last.check, attempts };
}
