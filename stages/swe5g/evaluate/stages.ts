/**
 * The stages of pipeline `swe5g-eval` (after `swe5g.validate`), over complete instances (validated,
 * with a problem statement):
 *
 *     swe5g.eval.skills -> swe5g.eval.solve -> swe5g.eval.grade
 *                                          \-> swe5g.eval.predictions
 *
 * - `swe5g.eval.skills`: one item per complete instance: its specification skill, checked
 *   (skipped `no_spec_refs`, `no_skill_document`, `skill_rejected`).
 * - `swe5g.eval.solve`: one item per model x mode x condition x instance (condition `none`
 *   everywhere; `skill` on the A/B subset in `skills.ab_mode`): the solver loop, its turns,
 *   answers (blobs), feedback runs and the final `model_patch`.
 * - `swe5g.eval.grade`: one item per solve output and per row of an external predictions file
 *   (`swe5g.evaluation.predictions`, `telebench evaluate --predictions FILE`): the patch graded in
 *   a fresh sandbox. Invalid rows and unknown instances are skipped items with the line number.
 * - `swe5g.eval.predictions`: one item per model x mode x condition: the SWE-bench predictions file
 *   `<state>/swe5g-eval/predictions/<model>.<mode>.<condition>.jsonl` (written atomically).
 * Every item is resumable like any other: a kill -9 loses at most the items in flight.
 */
import { isComplete, withCurrentStatement } from '../statement/current.js';
import { everyProvider } from '../../../pipeline/providers/llm/options.js';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve as resolvePath } from 'node:path';
import { defineStage, type Stage, type StageContext } from '../../../pipeline/stage.js';
import { SkipItem, TelebenchError } from '../../../pipeline/errors.js';
import { DockerClient } from '../../../pipeline/providers/docker/client.js';
import {
  DockerExecutor,
  LocalExecutor,
  type Executor,
} from '../../../pipeline/providers/docker/executor.js';
import { createProvider, stageLlmDeps } from '../../../pipeline/providers/llm/config.js';
import type { LlmProvider } from '../../../pipeline/providers/llm/types.js';
import { PROJECT_ROOT } from '../../../pipeline/manifest.js';
import { swe5gSettings, type HasSwe5g } from '../config.js';
import { loadRegistry } from '../registry.js';
import type { Resolved } from '../types.js';
import { validateStage, type ValidateInput } from '../validate/validate.js';
import { stateInstance } from './instances.js';
import { candidateDates } from '../row-dates.js';
import { afterBound, applyWindow, type WindowSelection } from './window.js';
import type { EvalModel, EvaluationSettings } from './config.js';
import { chooseContext, type ContextChunk } from './context.js';
import { gradePrediction, type EvalInstance, type Grade } from './grade.js';
import { predictionsJsonl, readPredictions, type Prediction } from './predictions.js';
import { DATASET_ENV, checkDatasetExecutor, datasetInstance, readDatasetRows } from './dataset.js';
import { exportTestbed } from '../../../pipeline/providers/docker/contract.js';
import { ensureLocalImage, PUSHED_IMAGES_KV } from '../../../pipeline/providers/docker/registry.js';
import { ensureInstanceImage } from '../build/on-demand.js';
import { solve, type SolveResult } from './solver.js';
import {
  assembleSkill,
  checkSkill,
  documentFor,
  goldLeaks,
  loadAreaDocuments,
  SKILL_PROMPT_VERSION,
  skillPrompt,
  type SkillCheck,
} from './skills.js';

/**
 * Key-value namespace of the instance ids of a predictions file's rows the date window left out
 * (key = the file's sha256, value = string[]; written by the grade plan at each run, empty
 * without a window), so the file's tally says "outside the date window" instead of "not graded
 * yet" for them.
 */
export const WINDOW_LEFT_KV = 'swe5g.eval.window-left';

/** Environment variable through which `telebench evaluate --predictions` names its file. */
export const PREDICTIONS_ENV = 'TELEBENCH_PREDICTIONS_FILE';

type Ctx = StageContext<HasSwe5g>;

/** The evaluation settings. */
export function evalSettings(ctx: Ctx): EvaluationSettings {
  return swe5gSettings(ctx.config).evaluation;
}

/**
 * Complete instances from the store: done `swe5g.validate` items whose instance is not
 * `incomplete` and has a problem statement; with the test directories validation ran. With
 * `telebench evaluate --dataset` ({@link DATASET_ENV}): the dataset's rows instead (dataset.ts).
 * @throws ConfigError naming file:line and field of a bad dataset row
 */
export function evalInstances(
  ctx: Ctx,
): Map<string, EvalInstance & { language: Resolved['language'] }> {
  return evalSelection(ctx).instances;
}

/**
 * The complete instances ({@link evalInstances} before the window: `all`), those inside the date
 * window of `--after` / `swe5g.evaluation.after` (`instances`) and what the window kept.
 * @throws ConfigError for a bad `--after`; what {@link evalInstances} throws
 */
export function evalSelection(ctx: Ctx): {
  all: Map<string, EvalInstance & { language: Resolved['language'] }>;
  instances: Map<string, EvalInstance & { language: Resolved['language'] }>;
  window: WindowSelection | null;
} {
  return ctx.memo('swe5g.eval.selection', () => {
    const dates = new Map<string, { created_at: string; issue_created_at: string }>();
    const all = allInstances(ctx, dates);
    const bound = afterBound(evalSettings(ctx).after);
    const w = applyWindow(all, bound, (id) => dates.get(id) ?? { created_at: '' });
    return { all, ...w };
  });
}

/** Every complete instance (state or `--dataset`), recording each one's dates in `dates`. */
function allInstances(
  ctx: Ctx,
  dates: Map<string, { created_at: string; issue_created_at: string }>,
): Map<string, EvalInstance & { language: Resolved['language'] }> {
  {
    const env = swe5gSettings(ctx.config).environments;
    const regFile = resolvePath(dirname(ctx.configFile), swe5gSettings(ctx.config).registry);
    const entries = existsSync(regFile) ? loadRegistry(regFile) : [];
    const dataset = process.env[DATASET_ENV];
    // `evaluate --dataset`: the released rows alone, no state of the build
    if (dataset) {
      // before any row or item: a config error here exits 2, never a failed item per prediction
      checkDatasetExecutor(env.executor, dataset);
      return new Map(
        readDatasetRows(resolvePath(dataset)).map((d) => {
          dates.set(d.row.instance_id, d.row);
          return [d.row.instance_id, datasetInstance(d, entries, env)];
        }),
      );
    }
    const byId = new Map(entries.map((e) => [e.id, e] as const));
    const out = new Map<string, EvalInstance & { language: Resolved['language'] }>();
    // the statement as it is now (an issues file or a model may have given it after validation)
    const current = withCurrentStatement(ctx.store);
    for (const o of ctx.store.outputs(validateStage)) {
      const v = current(o.output);
      if (!isComplete(v)) continue;
      const input = o.input as ValidateInput;
      out.set(v.instance_id, stateInstance(v, input, byId.get(input.resolved.registry_id), env));
      dates.set(v.instance_id, {
        created_at: v.created_at,
        issue_created_at: candidateDates(input.resolved).issue_created_at,
      });
    }
    return out;
  }
}

/** The executor of grading and feedback runs (validation's choice: docker or local). */
/**
 * The instance image to grade in: `image` when the engine has it, else the digest reference
 * `release --push` recorded for it (kv `PUSHED_IMAGES_KV`), pulled by digest, else (an instance
 * of this state, evicted) rebuilt from its recipe (`ensureInstanceImage`).
 * @throws TelebenchError `image_missing` (infra) when the engine lacks it and it was never pushed;
 *   `image_pull_failed` (infra) from the registry
 */
async function instanceImage(ctx: Ctx, image: string, key: string): Promise<string> {
  const docker = ctx.memo('docker', () => new DockerClient());
  if (await docker.hasImage(image)) return image;
  const pushed = ctx.kv.get<string>(PUSHED_IMAGES_KV, image);
  // an instance of this state evicted under image_budget_gib: rebuilt from its recipe (issue 31)
  if (!pushed && ctx.store.item('swe5g.resolve', key)?.state === 'done') {
    await ensureInstanceImage(ctx, key, image);
    return image;
  }
  return ensureLocalImage(docker, pushed ?? image);
}

/**
 * The host copy of a released instance's `/testbed` (the repository at base_commit), copied out
 * of its image once per run into `<state>/swe5g-eval/testbeds/<instance_id>` (replaced).
 * @throws TelebenchError `testbed_export_failed` (infra) naming the image; ConfigError when the
 *   executor is not docker (a released row is graded in its image)
 */
function releasedTestbed(ctx: Ctx, instance: EvalInstance): Promise<string> {
  // planning refuses --dataset without docker (exit 2); this is a row an earlier --dataset run planned
  checkDatasetExecutor(swe5gSettings(ctx.config).environments.executor, instance.instance_id);
  return ctx.memo(`swe5g.eval.testbed:${instance.instance_id}`, async () => {
    const dir = join(ctx.stateDir, 'swe5g-eval', 'testbeds', instance.instance_id);
    await exportTestbed(
      ctx.memo('docker', () => new DockerClient()),
      instance.image,
      dir,
    );
    return dir;
  });
}

function evalExecutor(ctx: Ctx): Executor {
  const settings = swe5gSettings(ctx.config).environments;
  return settings.executor === 'docker'
    ? new DockerExecutor(
        ctx.memo('docker', () => new DockerClient()),
        { onCleanupError: (e) => ctx.log(e.message, { code: e.code, ...e.context }) },
      )
    : new LocalExecutor();
}

// ---------------------------------------------------------------------------------------------
// swe5g.eval.skills

/** Output of `swe5g.eval.skills`. */
export interface SkillOutput {
  instance_id: string;
  spec: string;
  ref: string;
  document: string;
  text: string;
  check: SkillCheck;
  /** Who wrote the skill in use. */
  writer: 'template' | 'model';
  /**
   * `skills.writer: model`: the model's attempt (answer blob, its check); when that check failed
   * and `skills.fallback` is `template`, `writer` is `template` and this records why.
   */
  model_attempt: ModelSkillAttempt | null;
}

/** A skill a model wrote, with its check. */
export interface ModelSkillAttempt {
  model: string;
  prompt_version: string;
  text: string;
  /** sha256 of the stored answer (artifact `answer`). */
  answer: string;
  check: SkillCheck;
  tokens: { prompt: number | null; output: number | null };
}

interface SkillInput {
  instance_id: string;
  spec_refs: string[];
  problem_statement: string;
  patch: string;
  skillsDir: string;
  limits: { min: number; max: number };
  writer: 'template' | 'model';
  model: EvalModel | null;
  fallback: 'template' | 'none';
}

function skillsDir(ctx: Ctx): string {
  const dir = evalSettings(ctx).skills.dir;
  return dir ? resolvePath(dirname(ctx.configFile), dir) : join(PROJECT_ROOT, 'skills');
}

export const skillsStage = defineStage<SkillInput, SkillOutput, HasSwe5g>({
  name: 'swe5g.eval.skills',
  version: 1,
  needs: ['swe5g.validate'],
  description:
    'Per-instance 3GPP specification skill (~350 tokens; by template or written by a model), checked for size, citation and gold-patch leaks.',
  async preflight(ctx) {
    const s = evalSettings(ctx).skills;
    if (!s.enabled || s.writer !== 'model' || !s.model || evalInstances(ctx).size === 0) return;
    const info = await providerFor(ctx, s.model).preflight(
      s.model.model ?? s.model.name,
      ctx.signal,
    );
    ctx.log(
      `skill writer ${s.model.name} at ${info.endpoint}: server ${info.serverVersion ?? 'unknown'}, digest ${info.modelDigest ?? 'unknown'}`,
    );
  },
  *plan(ctx) {
    const s = evalSettings(ctx);
    if (!s.skills.enabled) return;
    let n = 0;
    for (const inst of evalInstances(ctx).values()) {
      if (ctx.limit !== undefined && n++ >= ctx.limit) return;
      yield {
        key: inst.instance_id,
        input: {
          instance_id: inst.instance_id,
          spec_refs: inst.spec_refs,
          problem_statement: inst.problem_statement,
          patch: inst.patch,
          skillsDir: skillsDir(ctx),
          limits: { min: s.skills.min_tokens, max: s.skills.max_tokens },
          writer: s.skills.writer,
          model: s.skills.writer === 'model' ? (s.skills.model ?? null) : null,
          fallback: s.skills.fallback,
        },
      };
    }
  },
  async run(item, ctx) {
    const i = item.input;
    if (i.spec_refs.length === 0)
      throw new SkipItem(
        'no_spec_refs',
        `${i.instance_id}: the instance cites no 3GPP specification`,
      );
    const found = documentFor(i.spec_refs, loadAreaDocuments(i.skillsDir));
    if (!found)
      throw new SkipItem(
        'no_skill_document',
        `${i.instance_id}: no document in ${i.skillsDir} for ${i.spec_refs.join(', ')}`,
      );
    const leaks = goldLeaks(i.patch, i.problem_statement);
    let attempt: ModelSkillAttempt | null = null;
    const output = (
      text: string,
      check: SkillOutput['check'],
      writer: SkillOutput['writer'],
    ): SkillOutput => ({
      instance_id: i.instance_id,
      spec: found.doc.spec,
      ref: found.ref,
      document: found.doc.file,
      text,
      check,
      writer,
      model_attempt: attempt,
    });
    if (i.writer === 'model' && i.model) {
      const m = i.model;
      const prompt = skillPrompt(found.doc, found.ref, i.problem_statement, i.limits);
      let chat;
      try {
        chat = await providerFor(ctx, m).chat(
          {
            model: m.model ?? m.name,
            messages: [
              { role: 'system', content: prompt.system },
              { role: 'user', content: prompt.user },
            ],
            maxTokens: m.max_tokens,
            temperature: m.temperature,
            providerOptions: everyProvider({ think: false, numCtx: m.num_ctx }),
            ...(m.seed !== undefined ? { seed: m.seed } : {}),
          },
          { signal: ctx.signal },
        );
      } catch (err) {
        // a prompt that does not fit the model: a content outcome, recorded as skipped
        if (err instanceof TelebenchError && err.tier === 'content')
          throw new SkipItem(
            err.code,
            `${i.instance_id}: skill writer: ${err.message}`,
            err.context,
          );
        throw err;
      }
      const text = chat.content.trim() + '\n';
      attempt = {
        model: m.name,
        prompt_version: SKILL_PROMPT_VERSION,
        text,
        answer: ctx.artifact('answer', chat.content, 'text/markdown'),
        check: checkSkill(text, leaks, i.limits),
        tokens: { prompt: chat.promptTokens, output: chat.outputTokens },
      };
      if (attempt.check.ok) return output(text, attempt.check, 'model');
      if (i.fallback === 'none')
        throw new SkipItem(
          'skill_rejected',
          `${i.instance_id}: skill written by ${m.name} rejected: ${attempt.check.problems.join('; ')}`,
          { writer: 'model', text, check: attempt.check },
        );
      ctx.log(
        `${i.instance_id}: skill written by ${m.name} rejected (${attempt.check.problems.join('; ')}); the template skill is used instead`,
      );
    }
    const text = assembleSkill(found.doc, found.ref, i.problem_statement, i.limits.max);
    const check = checkSkill(text, leaks, i.limits);
    if (!check.ok)
      throw new SkipItem(
        'skill_rejected',
        `${i.instance_id}: skill from ${found.doc.file} rejected: ${check.problems.join('; ')}${attempt ? `; the model's skill was rejected too: ${attempt.check.problems.join('; ')}` : ''}`,
        { text, check, ...(attempt ? { model_attempt: attempt } : {}) },
      );
    return output(text, check, 'template');
  },
});

// ---------------------------------------------------------------------------------------------
// swe5g.eval.solve

/** Input of one solve item. */
export interface SolveInput {
  instance: EvalInstance & { language: Resolved['language'] };
  model: EvalModel;
  mode: 'single' | 'multi';
  condition: 'none' | 'skill';
  skill: { spec: string; text: string; tokens: number } | null;
  settings: Pick<
    EvaluationSettings,
    'turns' | 'feedback' | 'feedback_tokens' | 'context' | 'edits'
  >;
}

/** Output of one solve item. */
export interface SolveOutput extends SolveResult {
  instance_id: string;
  model_name_or_path: string;
  condition: 'none' | 'skill';
  skill_spec: string | null;
  skill_tokens: number;
  context: { rule: string; tokens: number; chunks: ContextChunk[] };
}

/** Key of a solve (and of its grade). */
export function solveKey(model: string, mode: string, condition: string, instance: string): string {
  return `${model}::${mode}::${condition}::${instance}`;
}

/** The A/B subset (config `skills.ab_size`): instances with an accepted skill, by instance_id. */
export function abSubset(ctx: Ctx): Map<string, SkillOutput> {
  const s = evalSettings(ctx);
  const out = new Map<string, SkillOutput>();
  if (!s.skills.enabled) return out;
  const accepted = [...ctx.store.outputs(skillsStage)]
    .map((o) => o.output)
    .sort((a, b) => a.instance_id.localeCompare(b.instance_id))
    .slice(0, s.skills.ab_size);
  for (const k of accepted) out.set(k.instance_id, k);
  return out;
}

function providerFor(ctx: Ctx, model: EvalModel): LlmProvider {
  return ctx.memo(`swe5g.eval.provider.${model.name}`, () =>
    createProvider(model.llm, stageLlmDeps(ctx)),
  );
}

export const solveStage = defineStage<SolveInput, SolveOutput, HasSwe5g>({
  name: 'swe5g.eval.solve',
  // 2: edits re-indented by relative depth, ambiguous dividers, paths in prose, CRLF kept (issue 24)
  version: 2,
  needs: ['swe5g.validate', 'swe5g.eval.skills'],
  description:
    'Solver loop: single-turn or multi-turn (K turns, feedback) SEARCH/REPLACE answers per model and instance.',
  concurrency: (cfg) =>
    Math.max(
      1,
      ...swe5gSettings(cfg).evaluation.models.map((m) =>
        m.llm.endpoints.reduce((n, e) => n + e.concurrency, 0),
      ),
    ),
  async preflight(ctx) {
    const s = evalSettings(ctx);
    if (s.models.length === 0 || evalInstances(ctx).size === 0) return;
    for (const m of s.models) {
      const info = await providerFor(ctx, m).preflight(m.model ?? m.name, ctx.signal);
      ctx.log(
        `model ${m.name} at ${info.endpoint}: server ${info.serverVersion ?? 'unknown'}, digest ${info.modelDigest ?? 'unknown'}`,
      );
    }
    if (swe5gSettings(ctx.config).environments.executor === 'docker' && s.modes.includes('multi'))
      await ctx.memo('docker', () => new DockerClient()).ping();
  },
  *plan(ctx) {
    const s = evalSettings(ctx);
    const ab = abSubset(ctx);
    const settings = {
      turns: s.turns,
      feedback: s.feedback,
      feedback_tokens: s.feedback_tokens,
      context: s.context,
      edits: s.edits,
    };
    let n = 0;
    for (const model of s.models) {
      for (const inst of evalInstances(ctx).values()) {
        const runs: { mode: 'single' | 'multi'; condition: 'none' | 'skill' }[] = (
          model.modes ?? s.modes
        ).map((mode) => ({
          mode,
          condition: 'none' as const,
        }));
        if (ab.has(inst.instance_id)) runs.push({ mode: s.skills.ab_mode, condition: 'skill' });
        for (const r of runs) {
          if (ctx.limit !== undefined && n >= ctx.limit) return;
          n++;
          const sk = r.condition === 'skill' ? ab.get(inst.instance_id)! : null;
          yield {
            key: solveKey(model.name, r.mode, r.condition, inst.instance_id),
            input: {
              instance: inst,
              model,
              mode: r.mode,
              condition: r.condition,
              skill: sk ? { spec: sk.spec, text: sk.text, tokens: sk.check.tokens } : null,
              settings,
            },
          };
        }
      }
    }
  },
  async run(item, ctx) {
    const { instance: inst, model, settings } = item.input;
    const context = chooseContext(inst.source_dir, inst.language, inst.problem_statement, {
      maxTokens: settings.context.max_tokens,
      minIdentifier: settings.context.min_identifier_length,
    });
    const executor = evalExecutor(ctx);
    const env = swe5gSettings(ctx.config).environments;
    let result: SolveResult;
    try {
      result = await solve(
        {
          mode: item.input.mode,
          turns: settings.turns,
          feedback: settings.feedback,
          feedbackTokens: settings.feedback_tokens,
          fuzzy: { threshold: settings.edits.fuzzy_threshold, margin: settings.edits.fuzzy_margin },
          language: inst.language === 'go' ? 'Go' : inst.language === 'c' ? 'C' : 'Python',
          recipe: inst.image_recipe,
          problem: inst.problem_statement,
          context: context.text,
          ...(item.input.skill ? { skill: item.input.skill.text } : {}),
        },
        {
          provider: providerFor(ctx, model),
          request: {
            model: model.model ?? model.name,
            maxTokens: model.max_tokens,
            temperature: model.temperature,
            providerOptions: everyProvider({ think: false, numCtx: model.num_ctx }),
            ...(model.seed !== undefined ? { seed: model.seed } : {}),
          },
          readBase: (p) => {
            const abs = join(inst.source_dir, p);
            return existsSync(abs) ? readFileSync(abs, 'utf8') : null;
          },
          runTests: (patch, step) =>
            gradePrediction(
              { instance: inst, model_patch: patch, step },
              {
                executor,
                settings: env,
                saveLog: (name, text) => ctx.artifact(`runs/${name}`, text, 'text/plain'),
                signal: ctx.signal,
              },
            ),
          saveAnswer: (t, text) => ctx.artifact(`answers/turn_${t}`, text, 'text/plain'),
          signal: ctx.signal,
        },
      );
    } catch (err) {
      // a prompt that does not fit, an unreadable answer: a content outcome of this model
      if (err instanceof TelebenchError && err.tier === 'content')
        throw new SkipItem(err.code, `${inst.instance_id}: ${err.message}`, err.context);
      throw err;
    }
    return {
      ...result,
      instance_id: inst.instance_id,
      model_name_or_path: model.name,
      condition: item.input.condition,
      skill_spec: item.input.skill?.spec ?? null,
      skill_tokens: item.input.skill?.tokens ?? 0,
      context: { rule: context.rule, tokens: context.tokens, chunks: context.chunks },
    };
  },
});

// ---------------------------------------------------------------------------------------------
// swe5g.eval.grade

/** Input of one grade item. */
export interface GradeInput {
  source: 'solver' | 'external';
  model_name_or_path: string;
  mode: 'single' | 'multi' | 'external';
  condition: 'none' | 'skill';
  instance_id: string;
  instance: EvalInstance | null;
  model_patch: string;
  /**
   * External rows: the file, line (JSON Lines) or entry position, sha256 of the file's bytes (the
   * key's first part) and, for a JSON list or dict, `where` (`entry [2]`, `key "..."`); a row
   * that could not be read has `invalid`.
   */
  origin?: { file: string; line: number; digest?: string; where?: string };
  invalid?: string;
}

/** Output of one grade item. */
export interface GradeOutput extends Grade {
  source: GradeInput['source'];
  model_name_or_path: string;
  mode: GradeInput['mode'];
  condition: GradeInput['condition'];
}

/**
 * Key of an external prediction's grade: `external::<first 12 hex of the file's sha256>::<model>::
 * <instance_id>`, so two predictions files (or two versions of one) keep their own results.
 */
export function externalKey(digest: string, model: string, instance: string): string {
  return `${externalPrefix(digest)}${model}::${instance}`;
}

/** Common start of every grade key of one predictions file (`external::<12 hex>::`). */
export function externalPrefix(digest: string): string {
  return `external::${digest.slice(0, 12)}::`;
}

function predictionsFile(ctx: Ctx): string | undefined {
  const fromEnv = process.env[PREDICTIONS_ENV];
  if (fromEnv) return resolvePath(fromEnv);
  const p = evalSettings(ctx).predictions;
  return p ? resolvePath(dirname(ctx.configFile), p) : undefined;
}

// annotated: its plan reads its own records through the handle
export const gradeStage: Stage<GradeInput, GradeOutput, HasSwe5g> = defineStage<
  GradeInput,
  GradeOutput,
  HasSwe5g
>({
  name: 'swe5g.eval.grade',
  version: 2, // 2: SWE-bench's patch chain, patch_method, an empty patch not applied (issue 22)
  needs: ['swe5g.eval.solve'],
  description:
    'Grades each model patch (solver or external predictions) in a fresh sandbox: FAIL_TO_PASS and PASS_TO_PASS.',
  async preflight(ctx) {
    if (swe5gSettings(ctx.config).environments.executor === 'docker')
      await ctx.memo('docker', () => new DockerClient()).ping();
  },
  *plan(ctx) {
    const { all, instances } = evalSelection(ctx);
    // an instance the date window leaves out is not graded (nor reported as unknown)
    const outside = (id: string): boolean => all.has(id) && !instances.has(id);
    let n = 0;
    const within = (): boolean => ctx.limit === undefined || n++ < ctx.limit;
    for (const o of ctx.store.outputs(solveStage)) {
      if (outside(o.output.instance_id)) continue;
      if (!within()) return;
      const s = o.output;
      yield {
        key: o.key,
        input: {
          source: 'solver',
          model_name_or_path: s.model_name_or_path,
          mode: s.mode,
          condition: s.condition,
          instance_id: s.instance_id,
          instance: instances.get(s.instance_id) ?? null,
          model_patch: s.model_patch,
        },
      };
    }
    // rows of the current predictions file, keyed by the file's digest
    const planned = new Set<string>();
    const file = predictionsFile(ctx);
    if (file) {
      const { rows, bad, digest, shape } = readPredictions(file);
      for (const b of bad) {
        if (!within()) return;
        const key = `${externalPrefix(digest)}invalid::${shape === 'jsonl' ? 'line' : 'entry'}-${b.line}`;
        planned.add(key);
        yield {
          key,
          input: {
            source: 'external',
            model_name_or_path: '',
            mode: 'external',
            condition: 'none',
            instance_id: '',
            instance: null,
            model_patch: '',
            origin: {
              file,
              line: b.line,
              digest,
              ...(shape === 'jsonl' ? {} : { where: b.where }),
            },
            invalid: b.reason,
          },
        };
      }
      const left: string[] = [];
      for (const r of rows) {
        if (outside(r.instance_id)) {
          left.push(r.instance_id);
          continue;
        }
        if (!within()) return;
        const key = externalKey(digest, r.model_name_or_path, r.instance_id);
        planned.add(key);
        yield {
          key,
          input: {
            source: 'external',
            model_name_or_path: r.model_name_or_path,
            mode: 'external',
            condition: 'none',
            instance_id: r.instance_id,
            instance: instances.get(r.instance_id) ?? null,
            model_patch: r.model_patch,
            origin: {
              file,
              line: r.line,
              digest,
              ...(shape === 'jsonl' ? {} : { where: r.where }),
            },
          },
        };
      }
      // what the tally of `telebench evaluate` names as left out by the window (file-tally.ts)
      ctx.kv.set(WINDOW_LEFT_KV, digest, left);
    }
    // rows of earlier predictions files stay planned (from their stored inputs), so grading a
    // second file, or a run without one, never orphans the first file's results; an instance
    // validated again since is graded again
    for (const rec of ctx.store.items(gradeStage)) {
      if (planned.has(rec.key)) continue;
      const input = rec.input as GradeInput | undefined;
      if (input?.source !== 'external' || !input.origin?.digest) continue;
      if (!within()) return;
      planned.add(rec.key);
      yield {
        key: rec.key,
        input: input.invalid
          ? input
          : { ...input, instance: instances.get(input.instance_id) ?? input.instance },
      };
    }
  },
  async run(item, ctx) {
    const i = item.input;
    if (i.invalid)
      throw new SkipItem(
        'invalid_prediction',
        `${i.origin?.file} ${i.origin?.where ?? `line ${i.origin?.line}`}: ${i.invalid}`,
        { ...i.origin },
      );
    if (!i.instance)
      throw new SkipItem(
        'unknown_instance',
        `${i.origin ? `${i.origin.file} ${i.origin.where ?? `line ${i.origin.line}`}: ` : ''}field instance_id: ${i.instance_id} is ${process.env[DATASET_ENV] ? `not a row of the dataset ${process.env[DATASET_ENV]}` : 'not a complete validated instance in this state'}`,
        { ...i.origin },
      );
    const instance =
      swe5gSettings(ctx.config).environments.executor === 'docker'
        ? { ...i.instance, image: await instanceImage(ctx, i.instance.image, i.instance_id) }
        : i.instance;
    // a released row (`--dataset`): its tree at base_commit is the image's /testbed
    if (instance.source_dir === '') instance.source_dir = await releasedTestbed(ctx, instance);
    const run = await gradePrediction(
      { instance, model_patch: i.model_patch },
      {
        executor: evalExecutor(ctx),
        settings: swe5gSettings(ctx.config).environments,
        saveLog: (name, text) => ctx.artifact(`runs/${name}`, text, 'text/plain'),
        signal: ctx.signal,
      },
    );
    return {
      ...run.grade,
      source: i.source,
      model_name_or_path: i.model_name_or_path,
      mode: i.mode,
      condition: i.condition,
    };
  },
});

// ---------------------------------------------------------------------------------------------
// swe5g.eval.predictions

interface ExportInput {
  file: string;
  rows: Prediction[];
}

/** Folder of the predictions files the models' runs write. */
export function predictionsDir(stateDir: string): string {
  return join(stateDir, 'swe5g-eval', 'predictions');
}

export const exportStage = defineStage<ExportInput, { file: string; rows: number }, HasSwe5g>({
  name: 'swe5g.eval.predictions',
  version: 1,
  needs: ['swe5g.eval.solve'],
  description: "Writes each model run's patches as SWE-bench predictions (JSON Lines).",
  *plan(ctx) {
    const groups = new Map<string, Prediction[]>();
    for (const o of ctx.store.outputs(solveStage)) {
      const s = o.output;
      const name = `${s.model_name_or_path.replace(/[^\w.+@-]+/g, '_')}.${s.mode}.${s.condition}`;
      const rows = groups.get(name) ?? [];
      rows.push({
        instance_id: s.instance_id,
        model_name_or_path: s.model_name_or_path,
        model_patch: s.model_patch,
      });
      groups.set(name, rows);
    }
    for (const [name, rows] of groups)
      yield {
        key: name,
        input: { file: join(predictionsDir(ctx.stateDir), `${name}.jsonl`), rows },
      };
  },
  async run(item) {
    mkdirSync(dirname(item.input.file), { recursive: true });
    const tmp = `${item.input.file}.tmp`;
    writeFileSync(tmp, predictionsJsonl(item.input.rows));
    renameSync(tmp, item.input.file);
    return { file: item.input.file, rows: item.input.rows.length };
  },
});

/** The stages of `swe5g-eval`, in pipeline order. */
export const evalStages = [skillsStage, solveStage, gradeStage, exportStage];
