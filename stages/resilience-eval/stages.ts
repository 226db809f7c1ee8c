/**
 * The evaluation stages (issue 10):
 *
 *   resilience-eval.instances -> resilience-eval.continue -> resilience-eval.score
 *
 * - `instances`: one item; reads the instances to evaluate (this project's construction output,
 *   or files in our schema or the published one) into {@link EvalInstance}s.
 * - `continue`: one item per (target, sample_id); the target model continues the half trace with
 *   the paper's continuation template (Appendix A) through the project's providers, response
 *   cache and truncation checks; the reply is parsed in the three modes and given an outcome per
 *   mode. `paper`: the published run's conditions (num_ctx 2048, context shift, an over-long
 *   prompt cut as Ollama cut it), every affected row flagged (`prompt_truncated`,
 *   `context_shifted`) and scored. `default`: every failure to get a usable reply is an `excluded`
 *   outcome with its reason (`prompt_too_long`, `prompt_truncated`, `budget_exhausted`), counted
 *   (an OpenAI-compatible server cannot cut, so a `paper` prompt over its window is excluded as
 *   `prompt_too_long` there too); a provider failure
 *   (after the provider's retries) fails the item, so `--retry-failed` runs it again. VRAM is
 *   measured after each reply (see vram.ts).
 * - `score`: one item per target; the metrics of each mode (metrics.ts).
 */
import { join, resolve, dirname } from 'node:path';
import { defineStage, type StageContext } from '../../pipeline/stage.js';
import { TelebenchError } from '../../pipeline/errors.js';
import { createProvider, stageLlmDeps } from '../../pipeline/providers/llm/config.js';
import { hasWarning, type LlmProvider } from '../../pipeline/providers/llm/types.js';
import { chatRequestOf, type GenerationRequest } from '../resilience/request.js';
import { countCl100k } from '../../pipeline/providers/tokenizer/cl100k.js';
import { hashJson } from '../../pipeline/hash.js';
import { downloadHubFile } from '../../pipeline/providers/hub/download.js';
import { chooseNumCtx } from '../resilience/generate.js';
import {
  loadPromptTemplates,
  renderOptions,
  renderTemplate,
  requireTemplate,
} from '../resilience/prompts.js';
import {
  evalSettings,
  PAPER_EVAL_PROFILE,
  targetName,
  type HasResilienceEval,
  type TargetConfig,
} from './config.js';
import { readEvalInstances, toEvalInstance, type EvalInstance } from './eval-instance.js';
import {
  NO_ANSWER,
  PARSE_MODES,
  parseInMode,
  type ModeParse,
  type ParseMode,
} from './parse-modes.js';
import { classifyOutcome, modeMetrics, type ModeMetrics, type Outcome } from './metrics.js';
import { measureVram, type VramSample } from './vram.js';
import { resilienceTruncate } from '../resilience/truncate.js';

/** Output of `resilience-eval.instances`. */
export interface EvalInstancesOutput {
  source: string;
  instances: EvalInstance[];
  /** `source: hub`: the commit each file's revision resolved to. */
  hub_commits?: Record<string, string | null>;
}

/** Input of one continuation. */
export interface ContinueInput {
  target: string;
  profile: 'default' | 'paper';
  instance: EvalInstance;
  request: GenerationRequest;
  prompt_version: string;
}

/** Output of one continuation. */
export interface ContinueOutput {
  target: string;
  model: string;
  profile: 'default' | 'paper';
  sample_id: string;
  sub_benchmark: string;
  subset: string;
  difficulty: string | null;
  excluded: string | null;
  /** Flags of the published run's conditions (paper profile) or of a cut (default: excluded). */
  flags: { prompt_truncated: boolean; context_shifted: boolean; budget_exhausted: boolean };
  content: string;
  thinking_digest: string | null;
  done_reason: string | null;
  prompt_tokens: number | null;
  output_tokens: number | null;
  cached: boolean;
  parses: Record<ParseMode, ModeParse>;
  outcomes: Record<ParseMode, Outcome>;
  vram: VramSample;
}

/** Output of `resilience-eval.score` (one per target). */
export interface EvalScoreOutput {
  target: string;
  model: string;
  profile: 'default' | 'paper';
  num_ctx: number | null;
  modes: Record<ParseMode, ModeMetrics>;
  vram: VramSample;
  rows: number;
  failed: number;
}

const relTo = (ctx: StageContext<unknown>, p: string) => resolve(dirname(ctx.configFile), p);

/**
 * Digest of this state's constructed instances (every `resilience.truncate` output): an
 * evaluation with `input.source: project` read the instances of one digest.
 */
export function constructionDigest(store: StageContext<unknown>['store']): string {
  return hashJson([...store.outputs(resilienceTruncate)].map((o) => [o.key, hashJson(o.output)]));
}

/** Where `source: hub` reads from (the plan's input, so a changed pin is a new input). */
export interface EvalHubInput {
  url: string;
  dataset: string;
  revision: string;
  files: string[];
  timeout_ms: number;
}

/** Input of `resilience-eval.instances`. */
export interface EvalInstancesInput {
  source: string;
  files: string[];
  construction: string | null;
  hub?: EvalHubInput;
}

/**
 * Downloads the published files of a Hub dataset once into `<state>/downloads/` (a later run
 * reads the local copies without any request) and reads them.
 * @throws TelebenchError from {@link downloadHubFile} (`hub_unreachable` with what to do,
 *   `hub_not_found`, `hub_unauthorized`, ...) and `bad_instance_row`
 */
async function hubInstances(
  hub: EvalHubInput,
  ctx: StageContext<HasResilienceEval>,
): Promise<{ instances: EvalInstance[]; commits: Record<string, string | null> }> {
  if (!/^[0-9a-f]{40}$/.test(hub.revision))
    ctx.log(
      `resilience_eval.input.hub.revision is "${hub.revision}", not a commit sha: the download records the commit it resolved to; pin a sha for a reproducible evaluation`,
    );
  const instances: EvalInstance[] = [];
  const commits: Record<string, string | null> = {};
  for (const path of hub.files) {
    let got;
    try {
      got = await downloadHubFile({
        hubUrl: hub.url.replace(/\/+$/, ''),
        dataset: hub.dataset,
        revision: hub.revision,
        path,
        downloadsDir: join(ctx.stateDir, 'downloads'),
        signal: ctx.signal,
        timeoutMs: hub.timeout_ms,
      });
    } catch (err) {
      if (err instanceof TelebenchError && err.code === 'hub_unreachable')
        err.message += `; connect to ${hub.url} (or set resilience_eval.input.hub.url to a mirror) and run again with --retry-failed, or evaluate a local copy (resilience_eval.input.source: file)`;
      throw err;
    }
    const label = `hub:${got.dataset}@${got.revision}/${got.path}`;
    const rows = readEvalInstances(got.file, label);
    ctx.log(
      `${got.fromCache ? 'local copy of' : 'downloaded'} ${label} (commit ${got.commit ?? 'unknown'}, ${got.size} bytes): ${rows.length} instances`,
      { commit: got.commit, sha256: got.sha256, fromCache: got.fromCache },
    );
    commits[path] = got.commit;
    instances.push(...rows);
  }
  return { instances, commits };
}

/**
 * Stage `resilience-eval.instances`: one item (`instances`) that reads the TeleResilienceBench
 * instances to evaluate from `resilience_eval.input.source`: `project` (this state's
 * `resilience.truncate` outputs), `file` (JSON/JSONL files of the published schema, paths relative
 * to the config) or `hub` (a dataset revision, downloaded once into `<state>/downloads`). The plan
 * key hashes the source, so a new construction or file list re-reads it.
 * Output: `{ source, instances: EvalInstance[], hub_commits? }` (commit per file for `hub`).
 * @throws TelebenchError `config_invalid` (source `file` with no files), `input_missing` (an
 *   unreadable file), `bad_instance_row` naming the file and line, `hub_unreachable` with what to do
 */
export const evalInstances = defineStage<
  EvalInstancesInput,
  EvalInstancesOutput,
  HasResilienceEval
>({
  name: 'resilience-eval.instances',
  version: 1,
  needs: ['resilience.instances'],
  description:
    'Reads the instances to evaluate (project construction output, a snapshot, or the published files).',
  *plan(ctx) {
    const s = evalSettings(ctx.config);
    const construction = s.input.source === 'project' ? constructionDigest(ctx.store) : null;
    yield {
      key: 'instances',
      input: {
        source: s.input.source,
        files: s.input.source === 'file' ? s.input.files.map((f) => relTo(ctx, f)) : [],
        construction,
        ...(s.input.source === 'hub' ? { hub: s.input.hub } : {}),
      },
    };
  },
  async run(item, ctx) {
    const { source, files } = item.input;
    let instances: EvalInstance[];
    let hub_commits: Record<string, string | null> | undefined;
    if (source === 'hub') {
      const got = await hubInstances(item.input.hub!, ctx);
      instances = got.instances;
      hub_commits = got.commits;
    } else if (source === 'project') {
      instances = [...ctx.store.outputs(resilienceTruncate)].map((o) =>
        toEvalInstance(o.output, `resilience.truncate ${o.key}`),
      );
    } else {
      if (!files.length)
        throw new TelebenchError(
          'config_invalid',
          'resilience_eval.input.source is file but resilience_eval.input.files is empty',
          { tier: 'config' },
        );
      instances = files.flatMap((f) => readEvalInstances(f));
    }
    ctx.log(`${instances.length} instances to evaluate (${source})`);
    return { source, instances, ...(hub_commits ? { hub_commits } : {}) };
  },
});

/** The provider of one target, built once per run. */
function targetProvider(ctx: StageContext<HasResilienceEval>, t: TargetConfig): LlmProvider {
  return ctx.memo(`resilience-eval.provider.${targetName(t)}`, () =>
    createProvider(t.llm, stageLlmDeps(ctx)),
  );
}

/**
 * The continuation prompt of one instance: the `resilience_eval.prompts.mc` or `.numeric` template
 * from `resilience.prompts_dir` (paper Appendix A), filled with the question, its options and the
 * flawed `half_reasoning_trace` the target model must continue.
 * @returns the prompt text and the template's version (part of the item's cache key)
 * @throws ConfigError when the named template is missing or of the wrong kind (from
 *   {@link requireTemplate})
 */
export function continuationPrompt(
  ctx: StageContext<HasResilienceEval>,
  i: EvalInstance,
): { prompt: string; version: string } {
  const s = evalSettings(ctx.config);
  const dir = relTo(ctx, ctx.config.resilience?.prompts_dir ?? 'prompts/resilience');
  const templates = ctx.memo(`resilience-eval.templates.${dir}`, () => loadPromptTemplates(dir));
  const name = i.kind === 'mc' ? s.prompts.mc : s.prompts.numeric;
  const t = requireTemplate(templates, name, i.kind, `resilience_eval.prompts.${i.kind}`);
  const prompt = renderTemplate(t, {
    QUESTION: i.question,
    OPTIONS: renderOptions(i.choices),
    NUM_OPTIONS: String(i.choices.length),
    HALF_TRACE: i.half_reasoning_trace,
  });
  return { prompt, version: t.version };
}

const evalInstancesOf = (ctx: StageContext<unknown>): EvalInstance[] =>
  [...ctx.store.outputs(evalInstances)].flatMap((o) => o.output.instances);

/**
 * Stage `resilience-eval.continue`: one item per (target, instance), key `<target>::<sample_id>`.
 * The target continues the half trace ({@link continuationPrompt}; `paper` profile: Ollama's
 * published settings, the prompt cut as Ollama cut it and flagged); the reply is parsed in the
 * three modes (strict, lenient, published) and classified against the gold and the generator's
 * answer (paper Section 4: correct flip, no flip, wrong flip). Also records tokens (prompt,
 * output), whether the answer came from the response cache, and peak VRAM (MiB, or null where
 * the endpoint cannot tell). Concurrency: the sum of the targets' endpoint concurrencies.
 * @throws TelebenchError `config_invalid` (the target left the config), the provider's errors
 *   (`llm_*`, retried or failed per item, never swallowed)
 */
export const evalContinue = defineStage<ContinueInput, ContinueOutput, HasResilienceEval>({
  name: 'resilience-eval.continue',
  version: 1,
  needs: ['resilience-eval.instances'],
  description: 'Each target model continues each flawed half trace; replies parsed in three modes.',
  concurrency: (cfg) =>
    Math.max(
      1,
      evalSettings(cfg).targets.reduce(
        (n, t) => n + t.llm.endpoints.reduce((m, e) => m + e.concurrency, 0),
        0,
      ),
    ),
  async preflight(ctx) {
    for (const t of evalSettings(ctx.config).targets) {
      const info = await targetProvider(ctx, t).preflight(t.model, ctx.signal);
      ctx.log(
        `target ${targetName(t)} (${t.model}) at ${info.endpoint}: server ${info.serverVersion ?? 'unknown'}`,
      );
    }
  },
  *plan(ctx) {
    const s = evalSettings(ctx.config);
    const instances = evalInstancesOf(ctx);
    const prompts = new Map(instances.map((i) => [i.sample_id, continuationPrompt(ctx, i)]));
    for (const t of s.targets) {
      const paper = t.profile === 'paper';
      const numCtx = chooseNumCtx(
        t,
        [...prompts.values()].map((p) => countCl100k(p.prompt)),
      );
      for (const i of instances) {
        const p = prompts.get(i.sample_id)!;
        yield {
          key: `${targetName(t)}::${i.sample_id}`,
          input: {
            target: targetName(t),
            profile: t.profile,
            instance: i,
            prompt_version: p.version,
            request: {
              model: t.model,
              messages: [{ role: 'user', content: p.prompt }],
              think: paper ? PAPER_EVAL_PROFILE.think : t.think,
              numCtx,
              maxTokens: paper ? PAPER_EVAL_PROFILE.numPredict : t.num_predict,
              temperature: paper ? PAPER_EVAL_PROFILE.temperature : t.temperature,
              contextShift: paper,
              // paper: an over-long prompt is cut as Ollama cut it in the published run, flagged
              truncatePrompt: paper,
              ...(t.seed !== undefined ? { seed: t.seed } : {}),
            },
          },
        };
      }
    }
  },
  async run(wi, ctx) {
    const { instance: i, request, profile } = wi.input;
    const t = evalSettings(ctx.config).targets.find((x) => targetName(x) === wi.input.target);
    if (!t)
      throw new TelebenchError(
        'config_invalid',
        `target ${wi.input.target} is no longer in resilience_eval.targets`,
        {
          tier: 'config',
        },
      );
    const provider = targetProvider(ctx, t);
    const inProcess = t.llm.endpoints.every((e) => e.kind === 'embedded');
    const target = { kind: i.kind, numOptions: i.choices.length, choices: i.choices };
    const ot = {
      kind: i.kind,
      goldIndex: i.gold_index,
      goldValue: i.gold_value,
      generatorIndex: i.generator_index,
      generatorValue: i.generator_value,
    };
    const base = {
      target: wi.input.target,
      model: request.model,
      profile,
      sample_id: i.sample_id,
      sub_benchmark: i.sub_benchmark,
      subset: i.subset,
      difficulty: i.difficulty,
    };
    let chat;
    try {
      chat = await provider.chat(chatRequestOf(request), { signal: ctx.signal });
    } catch (err) {
      if (err instanceof TelebenchError && err.code === 'prompt_too_long') {
        return {
          ...base,
          excluded: 'prompt_too_long',
          flags: { prompt_truncated: true, context_shifted: false, budget_exhausted: false },
          content: '',
          thinking_digest: null,
          done_reason: null,
          prompt_tokens: null,
          output_tokens: null,
          cached: false,
          parses: { strict: NO_ANSWER, lenient: NO_ANSWER, published: NO_ANSWER },
          outcomes: { strict: 'excluded', lenient: 'excluded', published: 'excluded' },
          vram: await measureVram(provider, request.model, inProcess, ctx.signal),
        };
      }
      throw err;
    }
    const flags = {
      prompt_truncated: hasWarning(chat, 'prompt-truncated'),
      context_shifted: hasWarning(chat, 'context-shifted'),
      budget_exhausted: chat.budgetExhausted,
    };
    // default never cuts: a cut prompt or an exhausted budget is excluded; paper scores and flags.
    const excluded =
      profile === 'default'
        ? flags.prompt_truncated
          ? 'prompt_truncated'
          : flags.budget_exhausted
            ? 'budget_exhausted'
            : null
        : null;
    const reply = { content: chat.content, thinking: chat.thinking, doneReason: chat.doneReason };
    const parses = Object.fromEntries(
      PARSE_MODES.map((m) => [m, parseInMode(m, reply, target)]),
    ) as Record<ParseMode, ModeParse>;
    const outcomes = Object.fromEntries(
      PARSE_MODES.map((m) => [m, classifyOutcome(parses[m], ot, excluded)]),
    ) as Record<ParseMode, Outcome>;
    return {
      ...base,
      excluded,
      flags,
      content: chat.content,
      thinking_digest: chat.thinking ? ctx.artifact('thinking', chat.thinking, 'text/plain') : null,
      done_reason: chat.doneReason,
      prompt_tokens: chat.promptTokens,
      output_tokens: chat.outputTokens,
      cached: chat.cached,
      parses,
      outcomes,
      vram: await measureVram(provider, request.model, inProcess, ctx.signal),
    };
  },
});

/**
 * Stage `resilience-eval.score`: one item per target. CFR, NFR and WFR (percent, 0-100; paper
 * section IV-A) per subset, macro over subsets and micro over instances, with 95% intervals;
 * parse failures; the TeleMath correction rate; per parse mode. The plan key hashes the target's
 * continue outputs, so a new reply re-scores it; failed continue items are counted, not scored.
 */
export const evalScore = defineStage<
  { target: string; outputs: string },
  EvalScoreOutput,
  HasResilienceEval
>({
  name: 'resilience-eval.score',
  version: 2,
  needs: ['resilience-eval.continue'],
  description:
    'CFR/NFR/WFR, parse failures, macro and micro, bootstrap intervals per target and parse mode.',
  *plan(ctx) {
    const byTarget = new Map<string, string[]>();
    for (const o of ctx.store.outputs(evalContinue)) {
      const list = byTarget.get(o.output.target) ?? [];
      list.push(`${o.key}:${hashJson(o.output.outcomes)}`);
      byTarget.set(o.output.target, list);
    }
    for (const t of evalSettings(ctx.config).targets) {
      const name = targetName(t);
      yield { key: name, input: { target: name, outputs: hashJson(byTarget.get(name) ?? []) } };
    }
  },
  async run(item, ctx) {
    const t = evalSettings(ctx.config).targets.find((x) => targetName(x) === item.input.target)!;
    const outs = [...ctx.store.outputs(evalContinue)]
      .map((o) => o.output)
      .filter((o) => o.target === item.input.target);
    const failed = [...ctx.store.items(evalContinue)].filter(
      (r) => r.key.startsWith(`${item.input.target}::`) && r.state === 'failed',
    ).length;
    const modes = Object.fromEntries(
      PARSE_MODES.map((m) => [
        m,
        modeMetrics(
          outs.map((o) => ({
            sample_id: o.sample_id,
            subset: o.subset,
            outcome: o.outcomes[m],
            parse_status: o.parses[m].status,
            output_tokens: o.output_tokens,
            difficulty: o.difficulty,
            cut: o.flags.prompt_truncated || o.flags.context_shifted || o.flags.budget_exhausted,
          })),
        ),
      ]),
    ) as Record<ParseMode, ModeMetrics>;
    const peak = outs
      .map((o) => o.vram)
      .filter((v) => v.bytes !== null)
      .sort((a, b) => b.bytes! - a.bytes!)[0];
    return Promise.resolve({
      target: item.input.target,
      model: t.model,
      profile: t.profile,
      num_ctx:
        t.num_ctx !== 'auto' ? t.num_ctx : t.profile === 'paper' ? PAPER_EVAL_PROFILE.numCtx : null,
      modes,
      vram: peak ?? { bytes: null, method: 'unavailable', detail: 'no measurement' },
      rows: outs.length,
      failed,
    });
  },
});

export const evalStages = [evalInstances, evalContinue, evalScore] as const;

/** Where the HTML report is written: `<stateDir>/reports/resilience-eval.html` (a path; no I/O). */
export const reportPath = (stateDir: string): string =>
  join(stateDir, 'reports', 'resilience-eval.html');
