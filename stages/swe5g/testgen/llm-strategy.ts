/**
 * The LLM-written Strategy A step of testgen (`swe5g.testgen.llm`) for Go, C and Python: after
 * the rule-based direct call gave no flipping test, the model writes one (llmtest.ts, with the
 * run outcome fed back), placed by its language's layout (llm-layout.ts) and kept only when it
 * fails at base_commit and passes at merge_commit ({@link checkFlip}).
 */
import type { LlmProvider } from '../../../pipeline/providers/llm/types.js';
import { parseSource } from '../../../pipeline/providers/treesitter/parser.js';
import type { Resolved } from '../types.js';
import type { TestgenSettings } from './config.js';
import type { ReadRepoFile } from './emit.js';
import { checkFlip, type FlipCheck, type TestRunner } from './generate.js';
import { llmLayout } from './llm-layout.js';
import { llmDirectCall, promptNote } from './llmtest.js';
import { listFunctions, type FixSite } from './patterns.js';

/** Text of function `qualified` in `source`, or null. */
async function functionSource(
  language: 'go' | 'c' | 'python',
  source: string,
  qualified: string,
): Promise<string | null> {
  const tree = await parseSource(language, source);
  try {
    return (
      listFunctions(language, tree.rootNode).find((f) => f.qualified === qualified)?.node.text ??
      null
    );
  } finally {
    tree.delete();
  }
}

/** An accepted LLM test (its patch, id and the reason to record), or why none was kept. */
export type LlmStrategyA =
  | { ok: true; patch: string; id: string; reason: string; check?: FlipCheck }
  | { ok: false; reason: string };

/** What {@link llmStrategyA} reads. */
export interface LlmStrategyInput {
  gitDir: string;
  r: Resolved;
  /** The first site's function is the one the model is asked to call. */
  sites: FixSite[];
  settings: TestgenSettings & { llm: NonNullable<TestgenSettings['llm']> };
  runner: TestRunner;
  provider: LlmProvider;
  readFix: ReadRepoFile;
  readBase: ReadRepoFile;
  pythonRoots?: string[];
  signal?: AbortSignal;
}

/**
 * Asks the model for the direct-call test of the first site's function and checks each answer.
 * @returns `ok` with the patch and FAIL_TO_PASS id and the `strategy_reason`; else the reason
 *   (no layout, function not found, every try refused: the last refusal's first line)
 * @throws whatever the provider throws (network, unknown model)
 */
export async function llmStrategyA(input: LlmStrategyInput): Promise<LlmStrategyA> {
  const { r, settings, readFix, readBase } = input;
  const s0 = input.sites[0];
  if (!s0) return { ok: false, reason: 'LLM-written test: no fix site' };
  const layout = llmLayout(r.language, s0, readFix, readBase, input.pythonRoots);
  if (!layout.ok) return { ok: false, reason: `LLM-written test not asked: ${layout.reason}` };
  const fnSource = await functionSource(r.language, readFix(s0.file) ?? '', s0.function);
  if (!fnSource)
    return { ok: false, reason: `LLM-written test not asked: ${s0.function} not found` };
  let lastCheck: FlipCheck | undefined;
  const llm = await llmDirectCall(
    input.provider,
    {
      model: settings.llm.model,
      tries: settings.llm.tries,
      maxTokens: settings.llm.max_tokens,
      ...(input.signal ? { signal: input.signal } : {}),
    },
    r,
    s0,
    layout.profile,
    fnSource,
    async (content, testName) => {
      const { patch, id } = layout.place(content, testName);
      lastCheck = await checkFlip(
        input.gitDir,
        r,
        patch,
        [id],
        settings.test_timeout_s * 1000,
        input.runner,
        input.signal,
      );
      if (lastCheck.ok) return null;
      const log = (lastCheck.fix ?? lastCheck.parent)?.log ?? '';
      return `${lastCheck.reason}\n${log.slice(-1500)}`;
    },
  );
  const note = promptNote(llm.prompt);
  if (!llm.ok)
    return {
      ok: false,
      reason: `LLM-written test (${llm.tries} tries${note ? `, ${note}` : ''}) rejected: ${llm.reason.split('\n')[0]}`,
    };
  const { patch, id } = layout.place(llm.content, llm.testName);
  return {
    ok: true,
    patch,
    id,
    reason: `A (LLM-written by ${settings.llm.model}, try ${llm.tries} of ${settings.llm.tries}): calls ${s0.function}; fails at base_commit and passes after the fix${note ? `; ${note}` : ''}`,
    ...(lastCheck ? { check: lastCheck } : {}),
  };
}
