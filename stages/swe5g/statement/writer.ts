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

/** The outcome: a statement with every attempt's verdict, or the last refusal's reason. */
export type Written =
  | { ok: true; statement: string; attempts: { ok: boolean; reason?: string }[] }
  | { ok: false; reason: string; attempts: { ok: boolean; reason?: string }[] };

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
 * Asks `llm` for a statement and leak-checks each answer against `patch`.
 * @returns the accepted statement, or the last reason after `maxAttempts` refusals
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
    signal?: AbortSignal;
  },
  c: StatementContext,
  patch: string,
): Promise<Written> {
  const messages: { role: 'system' | 'user' | 'assistant'; content: string }[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: promptOf(c) },
  ];
  const attempts: { ok: boolean; reason?: string }[] = [];
  let reason = 'no answer';
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
    const v =
      statement.length < 20
        ? { ok: false as const, reason: `the answer is too short (${statement.length} characters)` }
        : leakCheck(statement, patch, c.buggyCode, opts.ngram);
    if (v.ok) {
      attempts.push({ ok: true });
      return { ok: true, statement, attempts };
    }
    reason = v.reason;
    attempts.push({ ok: false, reason });
    messages.push({ role: 'assistant', content: res.content });
    messages.push({
      role: 'user',
      content:
        'That issue was refused: it contains code of the fix or is too short. Rewrite it describing only the symptom, in plain words, with no code.',
    });
  }
  return { ok: false, reason, attempts };
}
