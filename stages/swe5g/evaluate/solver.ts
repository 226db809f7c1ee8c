/**
 * The solver loop (SWE-Bench 5G paper, "Agent paradigms"):
 * - `single`: one prompt (problem statement, optional skill, source context), one answer; its
 *   SEARCH/REPLACE blocks are applied and that is the patch.
 * - `multi`: up to K turns of answer -> apply -> compile and run the tests in a fresh sandbox ->
 *   when they fail, feed back the outcome at the configured level (`compile` | `names` | `full`),
 *   trimmed to a token budget. Edits accumulate: a turn edits the files as the previous turns left
 *   them. The loop stops early when the tests pass.
 * The solver sees no test source: the hidden tests run inside the sandbox and only their outcome
 * (per level) comes back. The sandbox is the instance image (only `base_commit` in its history,
 * no network).
 */
import type {
  ChatMessage,
  ChatRequest,
  LlmProvider,
} from '../../../pipeline/providers/llm/types.js';
import { countCl100k } from '../../../pipeline/providers/tokenizer/cl100k.js';
import { toGitPatch } from '../testgen/patchfile.js';
import { applyEdits, parseEditBlocks, type EditOutcome, type FuzzySettings } from './edits.js';
import type { GradedRun } from './grade.js';
import { feedbackMessage, PROMPT_VERSION, systemPrompt, taskPrompt } from './prompt.js';

/** One turn of the loop. */
export interface TurnRecord {
  turn: number;
  /** Blob digest of the answer text. */
  answer: string;
  prompt_tokens: number | null;
  output_tokens: number | null;
  done_reason: string;
  /** Well-formed blocks and malformed ones found in the answer. */
  blocks: number;
  edits: EditOutcome[];
  /** The cumulative patch after this turn (git diff against base_commit). */
  patch: string;
  /** Multi-turn: the test run after this turn (null when none ran: single-turn or the last turn). */
  run: {
    resolved: boolean;
    patch_applied: boolean;
    build_failures: string[];
    failing: string[];
    log: string;
    /**
     * The turn whose sandbox run this is: this turn, or an earlier turn with the same cumulative
     * patch (a turn that changed nothing, e.g. an answer without a well-formed block, is not run
     * again: the same patch on the same image gives the same result).
     */
    from_turn?: number;
  } | null;
  /** cl100k tokens of the feedback message sent after this turn (0: none). */
  feedback_tokens: number;
}

/** What a solve produced. */
export interface SolveResult {
  mode: 'single' | 'multi';
  feedback_level: 'compile' | 'names' | 'full' | 'none';
  prompt_version: string;
  turns: TurnRecord[];
  /** The final patch (SWE-bench `model_patch`). */
  model_patch: string;
  tokens: { prompt: number; output: number };
  /** Why the loop ended: `single`, `tests_pass`, `turns_exhausted`, `budget_exhausted`. */
  stop: string;
}

/** What the loop needs. */
export interface SolveDeps {
  provider: LlmProvider;
  /** The request without messages (model, budget, temperature, ...). */
  request: Omit<ChatRequest, 'messages'>;
  /** Reads a file at base_commit (null when absent). */
  readBase: (path: string) => string | null;
  /** Runs the hidden tests on a patch in a fresh sandbox (multi-turn only). */
  runTests: (patch: string, step: string) => Promise<GradedRun>;
  /** Stores an answer; returns its digest. */
  saveAnswer: (turn: number, text: string) => string;
  signal?: AbortSignal;
}

/**
 * Runs the loop for one instance.
 * @throws what the provider throws (rate-limit, transient, config, content tiers) and what
 *   `runTests` throws (infra)
 */
export async function solve(
  args: {
    mode: 'single' | 'multi';
    turns: number;
    feedback: 'compile' | 'names' | 'full';
    feedbackTokens: number;
    fuzzy: FuzzySettings;
    language: string;
    recipe: string;
    problem: string;
    context: string;
    skill?: string;
  },
  deps: SolveDeps,
): Promise<SolveResult> {
  const messages: ChatMessage[] = [
    { role: 'system', content: systemPrompt(args.language) },
    {
      role: 'user',
      content: taskPrompt({
        problem: args.problem,
        context: args.context,
        ...(args.skill ? { skill: args.skill } : {}),
      }),
    },
  ];
  const working = new Map<string, { before: string | null; after: string }>();
  const read = (p: string): string | null => working.get(p)?.after ?? deps.readBase(p);
  const turns: TurnRecord[] = [];
  const tokens = { prompt: 0, output: 0 };
  const maxTurns = args.mode === 'single' ? 1 : args.turns;
  let stop = args.mode === 'single' ? 'single' : 'turns_exhausted';
  let patch = '';
  // sandbox runs by cumulative patch: an unchanged patch reuses its run
  const runs = new Map<string, { run: GradedRun; turn: number }>();
  for (let t = 1; t <= maxTurns; t++) {
    const chat = await deps.provider.chat({ ...deps.request, messages }, { signal: deps.signal });
    tokens.prompt += chat.promptTokens ?? chat.promptTokensLocal ?? 0;
    tokens.output += chat.outputTokens ?? 0;
    const parsed = parseEditBlocks(chat.content);
    const applied = applyEdits(read, parsed, args.fuzzy);
    for (const [p, f] of applied.files) {
      const prev = working.get(p);
      working.set(p, { before: prev ? prev.before : f.before, after: f.after });
    }
    patch = toGitPatch(
      [...working.entries()]
        .filter(([, f]) => f.before !== f.after)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([path, f]) => ({ path, before: f.before, content: f.after })),
    );
    if (patch.trim() === '') patch = '';
    const record: TurnRecord = {
      turn: t,
      answer: deps.saveAnswer(t, chat.content),
      prompt_tokens: chat.promptTokens ?? chat.promptTokensLocal ?? null,
      output_tokens: chat.outputTokens,
      done_reason: chat.doneReason,
      blocks: parsed.blocks.length + parsed.malformed.length,
      edits: applied.outcomes,
      patch,
      run: null,
      feedback_tokens: 0,
    };
    turns.push(record);
    if (t === maxTurns) break;
    let known = runs.get(patch);
    if (!known) {
      known = { run: await deps.runTests(patch, `turn_${t}`), turn: t };
      runs.set(patch, known);
    }
    const run = known.run;
    record.run = {
      from_turn: known.turn,
      resolved: run.grade.resolved,
      patch_applied: run.grade.patch_applied,
      build_failures: run.grade.build_failures,
      failing: [
        ...Object.entries(run.grade.FAIL_TO_PASS),
        ...Object.entries(run.grade.PASS_TO_PASS),
      ]
        .filter(([, s]) => s !== 'pass')
        .map(([id]) => id),
      log: run.grade.log,
    };
    if (run.grade.resolved) {
      stop = 'tests_pass';
      break;
    }
    const fb = feedbackMessage({
      level: args.feedback,
      budget: args.feedbackTokens,
      outcomes: applied.outcomes,
      grade: run.grade,
      result: run.result,
      parsed: run.parsed,
      recipe: args.recipe,
      patch,
    });
    record.feedback_tokens = countCl100k(fb);
    messages.push({ role: 'assistant', content: chat.content }, { role: 'user', content: fb });
  }
  return {
    mode: args.mode,
    feedback_level: args.mode === 'single' ? 'none' : args.feedback,
    prompt_version: PROMPT_VERSION,
    turns,
    model_patch: patch,
    tokens,
    stop,
  };
}
