/**
 * The optional LLM-judge pass of the quality check (issue 31): when a judge model is configured
 * (`model_written.quality.judge`), a statement the deterministic rules (quality.ts) accept is
 * shown to the judge with the buggy code and the failing output — never the gold patch, because
 * the judge's reason goes back to the writer in the retry — and the judge answers whether a
 * developer who reads only this issue and the repository could find and reproduce the bug (SWE-bench
 * Verified's "well-specified" question). It answers one JSON object
 * `{"verdict": "informative" | "uninformative", "reason": "..."}`; `uninformative` refuses the
 * statement with rule `judge` and the judge's reason. Temperature 0, one call per statement.
 */
import type { LlmProvider } from '../../../pipeline/providers/llm/types.js';
import type { GroundingInput } from './anchors.js';

/** The judge's model and call settings (the provider is built by the stage). */
export interface JudgeOptions {
  model: string;
  maxTokens: number;
  signal?: AbortSignal;
}

/** The judge's verdict. */
export type JudgeVerdict = { ok: true } | { ok: false; reason: string };

const SYSTEM =
  'You review GitHub issues written for a bug before it was fixed. You get the buggy code, the output of the failing test and the issue. ' +
  'Decide whether a developer who reads only the issue and the repository could find the bug and reproduce it: the issue must say where (a function, file or message) and what goes wrong (the observable behaviour), and be about this code. ' +
  'Answer with one JSON object and nothing else: {"verdict": "informative" or "uninformative", "reason": "one sentence"}.';

/** The judge's prompt: what the writer was shown of the bug, and the statement. */
export function judgePrompt(statement: string, c: GroundingInput): string {
  return [
    `Buggy code:\n\`\`\`\n${c.buggyCode}\n\`\`\``,
    `Output of the failing test(s):\n\`\`\`\n${c.testOutput || '(none)'}\n\`\`\``,
    `The issue:\n"""\n${statement}\n"""`,
  ].join('\n\n');
}

/**
 * Reads the judge's answer: the first `{...}` object with a `verdict` field.
 * @throws Error naming the answer when it holds no such object (a judge that cannot answer is a
 *   fault of the run, not of the statement)
 */
export function parseJudge(answer: string): JudgeVerdict {
  const v = firstObject(answer);
  const verdict = typeof v?.verdict === 'string' ? v.verdict.toLowerCase() : '';
  if (verdict !== 'informative' && verdict !== 'uninformative')
    throw new Error(
      `statement judge: the answer holds no {"verdict": "informative" | "uninformative"} object: ${JSON.stringify(answer.slice(0, 200))}`,
    );
  if (verdict === 'informative') return { ok: true };
  const reason = typeof v?.reason === 'string' && v.reason.trim() ? v.reason.trim() : 'no reason';
  return { ok: false, reason };
}

/** The outermost `{...}` of `s` parsed as JSON, or null. */
function firstObject(s: string): { verdict?: unknown; reason?: unknown } | null {
  const m = /\{[\s\S]*\}/.exec(s);
  if (!m) return null;
  try {
    const v: unknown = JSON.parse(m[0]);
    return v && typeof v === 'object' ? (v as { verdict?: unknown; reason?: unknown }) : null;
  } catch {
    return null;
  }
}

/**
 * Asks `llm` whether `statement` lets a solver find the bug.
 * @returns `{ok: true}` or `{ok: false, reason}` with the judge's reason
 * @throws what the provider throws, or {@link parseJudge}'s error
 */
export async function judgeStatement(
  llm: LlmProvider,
  opts: JudgeOptions,
  statement: string,
  c: GroundingInput,
): Promise<JudgeVerdict> {
  const res = await llm.chat(
    {
      model: opts.model,
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: judgePrompt(statement, c) },
      ],
      maxTokens: opts.maxTokens,
      temperature: 0,
      seed: 1,
    },
    opts.signal ? { signal: opts.signal } : {},
  );
  return parseJudge(res.content);
}
