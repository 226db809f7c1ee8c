/**
 * Optional LLM-written Strategy A (issue 5: "optionally ask the LLM provider to write the test
 * with compile-and-run feedback (K tries), recorded as such"; issue 30: Go, C and Python). The
 * model gets the fixed function, the fix diff and the problem statement and answers with one test
 * file in the shape its language's {@link LlmTestProfile} asks (llm-layout.ts: a Go test file, a
 * pytest module, a C case function telebench runs in a forked child); the file is run at
 * base_commit (must fail) and merge_commit (must pass); on failure the outcome (not the fix) is
 * fed back, at most K times.
 *
 * Prompt budget: the fix diff is cut to {@link PROMPT_PATCH_CHARS} characters and the
 * problem_statement to {@link PROMPT_PROBLEM_CHARS}; every result carries {@link PromptInfo}
 * (`prompt_truncated` with the original and kept lengths) so the caller records what the model saw.
 */
import type { LlmProvider } from '../../../pipeline/providers/llm/types.js';
import type { Resolved } from '../types.js';
import type { FixSite } from './patterns.js';

/** Characters of the fix diff put into the prompt. */
export const PROMPT_PATCH_CHARS = 8000;
/** Characters of the problem_statement put into the prompt. */
export const PROMPT_PROBLEM_CHARS = 3000;

/** What the prompt kept of the inputs (lengths in UTF-16 characters). */
export interface PromptInfo {
  /** True when the diff or the problem_statement was cut. */
  prompt_truncated: boolean;
  patch_chars: { original: number; kept: number };
  problem_statement_chars: { original: number; kept: number };
}

/** One accepted LLM test, or why none was accepted; `prompt` says what the model was shown. */
export type LlmTest =
  | { ok: true; testName: string; content: string; tries: number; prompt: PromptInfo }
  | { ok: false; reason: string; tries: number; prompt: PromptInfo };

/**
 * One-line note for `strategy_reason` when the prompt was cut, e.g.
 * `prompt_truncated: true (patch 12000 -> 8000 chars)`; '' when nothing was cut.
 */
export function promptNote(p: PromptInfo): string {
  if (!p.prompt_truncated) return '';
  const parts: string[] = [];
  if (p.patch_chars.kept < p.patch_chars.original)
    parts.push(`patch ${p.patch_chars.original} -> ${p.patch_chars.kept} chars`);
  if (p.problem_statement_chars.kept < p.problem_statement_chars.original)
    parts.push(
      `problem_statement ${p.problem_statement_chars.original} -> ${p.problem_statement_chars.kept} chars`,
    );
  return `prompt_truncated: true (${parts.join(', ')})`;
}

/** What the model is asked for in one language, and how its answer is read. */
export interface LlmTestProfile {
  /** Code fence language of the prompt and the answer (`go`, `python`, `c`). */
  fence: string;
  /** The system message: the file's shape, what it may import, how it fails. */
  system: string;
  /** The test's name in an answer's code, or null when the answer is not such a file. */
  nameOf(content: string): string | null;
  /** Feedback when {@link nameOf} finds no test (fed back to the model). */
  shapeError: string;
}

/** The Go profile: one `_test.go` file of package `pkgName` with `func TestF2PLLM_X(t *testing.T)`. */
export function goProfile(pkgName: string): LlmTestProfile {
  return {
    fence: 'go',
    system:
      'You write one Go test file that reproduces a crash. Answer with the file only, in one ```go block. ' +
      `Use package ${pkgName} (same package as the function), only the standard library and packages the function's file already imports. ` +
      'The test must call the function directly with inputs that trigger the bug, inside defer/recover, and fail with t.Errorf when it panics. ' +
      'Name the test function TestF2PLLM_<something>. Do not print what the fix changes.',
    nameOf: (content) =>
      /^package \w+/m.test(content)
        ? (/^func (Test\w+)\(t \*testing\.T\)/m.exec(content)?.[1] ?? null)
        : null,
    shapeError: 'the answer has no package clause or no func TestX(t *testing.T)',
  };
}

/** First fenced code block of an answer (```go ... ```), or the whole answer when it has none. */
export function extractCode(answer: string): string {
  const m = /```[a-zA-Z]*\n([\s\S]*?)```/.exec(answer);
  return (m ? m[1]! : answer).trim() + '\n';
}

/**
 * Asks `provider` for a test file and checks it with `check` (build and run at both commits).
 * @param profile the language's prompt and answer shape ({@link goProfile}, llm-layout.ts);
 *   `functionSource` the fixed function's text at merge_commit
 * @param check returns null when the test fails at the parent and passes after the fix, else the
 *   outcome to feed back (it must not contain the fix)
 * @returns the accepted test, or the last reason after `tries` attempts; both with
 *   {@link PromptInfo} (the diff is cut to {@link PROMPT_PATCH_CHARS} characters, the
 *   problem_statement to {@link PROMPT_PROBLEM_CHARS})
 * @throws whatever the provider throws (network, model not found): the caller records it
 */
export async function llmDirectCall(
  provider: LlmProvider,
  opts: { model: string; tries: number; maxTokens: number; signal?: AbortSignal },
  r: Pick<Resolved, 'instance_id' | 'patch' | 'problem_statement'>,
  site: FixSite,
  profile: LlmTestProfile,
  functionSource: string,
  check: (content: string, testName: string) => Promise<string | null>,
): Promise<LlmTest> {
  const patch = r.patch.slice(0, PROMPT_PATCH_CHARS);
  const problem = (r.problem_statement ?? '').slice(0, PROMPT_PROBLEM_CHARS);
  const prompt: PromptInfo = {
    prompt_truncated:
      patch.length < r.patch.length || problem.length < (r.problem_statement ?? '').length,
    patch_chars: { original: r.patch.length, kept: patch.length },
    problem_statement_chars: { original: (r.problem_statement ?? '').length, kept: problem.length },
  };
  const messages: { role: 'system' | 'user' | 'assistant'; content: string }[] = [
    { role: 'system', content: profile.system },
    {
      role: 'user',
      content: [
        `Function ${site.function} in ${site.file} (after the fix):`,
        '```' + profile.fence,
        functionSource,
        '```',
        'The fix (unified diff):',
        '```diff',
        patch,
        '```',
        problem ? `Problem statement:\n${problem}` : '',
        'Write the test so that it fails before the fix and passes after it.',
      ]
        .filter(Boolean)
        .join('\n'),
    },
  ];
  let reason = 'no answer';
  for (let i = 1; i <= opts.tries; i++) {
    const res = await provider.chat(
      { model: opts.model, messages, maxTokens: opts.maxTokens, temperature: 0, seed: 1 },
      opts.signal ? { signal: opts.signal } : {},
    );
    const content = extractCode(res.content);
    const name = profile.nameOf(content);
    if (!name) {
      reason = profile.shapeError;
    } else {
      const outcome = await check(content, name);
      if (outcome === null) return { ok: true, testName: name, content, tries: i, prompt };
      reason = outcome;
    }
    messages.push({ role: 'assistant', content: res.content });
    messages.push({
      role: 'user',
      content: `That test was rejected: ${reason}. Write a corrected file.`,
    });
  }
  return { ok: false, reason, tries: opts.tries, prompt };
}
