/**
 * Optional LLM-written Strategy A (issue 5: "optionally ask the LLM provider to write the test
 * with compile-and-run feedback (K tries), recorded as such"). For Go only: the model gets the
 * fixed function, the fix diff and the problem statement and answers with one Go test file; the
 * file is compiled and run at base_commit (must fail) and merge_commit (must pass); on failure the
 * outcome (not the fix) is fed back, at most K times.
 */
import type { LlmProvider } from '../../../pipeline/providers/llm/types.js';
import type { Resolved } from '../types.js';
import type { FixSite } from './patterns.js';

/** One accepted LLM test, or why none was accepted. */
export type LlmTest =
  | { ok: true; testName: string; content: string; tries: number }
  | { ok: false; reason: string; tries: number };

/** First fenced code block of an answer (```go ... ```), or the whole answer when it has none. */
export function extractCode(answer: string): string {
  const m = /```[a-zA-Z]*\n([\s\S]*?)```/.exec(answer);
  return (m ? m[1]! : answer).trim() + '\n';
}

/**
 * Asks `provider` for a Go test file and checks it with `check` (compile and run at both commits).
 * @param pkgName package clause of the fixed file; `functionSource` its text at merge_commit
 * @param check returns null when the test fails at the parent and passes after the fix, else the
 *   outcome to feed back (it must not contain the fix)
 * @returns the accepted test, or the last reason after `tries` attempts
 * @throws whatever the provider throws (network, model not found): the caller records it
 */
export async function llmDirectCall(
  provider: LlmProvider,
  opts: { model: string; tries: number; maxTokens: number; signal?: AbortSignal },
  r: Pick<Resolved, 'instance_id' | 'patch' | 'problem_statement'>,
  site: FixSite,
  pkgName: string,
  functionSource: string,
  check: (content: string, testName: string) => Promise<string | null>,
): Promise<LlmTest> {
  const messages: { role: 'system' | 'user' | 'assistant'; content: string }[] = [
    {
      role: 'system',
      content:
        'You write one Go test file that reproduces a crash. Answer with the file only, in one ```go block. ' +
        `Use package ${pkgName} (same package as the function), only the standard library and packages the function's file already imports. ` +
        'The test must call the function directly with inputs that trigger the bug, inside defer/recover, and fail with t.Errorf when it panics. ' +
        'Name the test function TestF2PLLM_<something>. Do not print what the fix changes.',
    },
    {
      role: 'user',
      content: [
        `Function ${site.function} in ${site.file} (after the fix):`,
        '```go',
        functionSource,
        '```',
        'The fix (unified diff):',
        '```diff',
        r.patch.slice(0, 8000),
        '```',
        r.problem_statement ? `Problem statement:\n${r.problem_statement.slice(0, 3000)}` : '',
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
    const name = /^func (Test\w+)\(t \*testing\.T\)/m.exec(content)?.[1];
    if (!/^package \w+/m.test(content) || !name) {
      reason = 'the answer has no package clause or no func TestX(t *testing.T)';
    } else {
      const outcome = await check(content, name);
      if (outcome === null) return { ok: true, testName: name, content, tries: i };
      reason = outcome;
    }
    messages.push({ role: 'assistant', content: res.content });
    messages.push({
      role: 'user',
      content: `That test was rejected: ${reason}. Write a corrected file.`,
    });
  }
  return { ok: false, reason, tries: opts.tries };
}
