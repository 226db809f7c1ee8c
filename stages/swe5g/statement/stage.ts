/**
 * `swe5g.statement` (issue 31): a model-written problem statement for every validated instance
 * whose fix has no linked issue (its `swe5g.filter` candidate has no issue text), when
 * `swe5g.problem_statements.model_written.enabled`. Off by default. The writer sees the buggy
 * functions at base_commit, the failing tests' output at the parent (validation's step 1 log) and
 * the commit's context, never the gold patch (writer.ts); the leak check (leak.ts) refuses an
 * answer quoting the patch's added lines and the quality check (quality.ts) one that would not let
 * a solver find the bug (filler, repetition, hedging, only the test's name, no function, file or
 * error text, no symptom), at most `max_attempts` times in all; then the item is skipped
 * `statement_leaks_patch` or `statement_uninformative` (the last refusal's check) with the rule's
 * reason and the instance stays incomplete. An accepted statement
 * is laid over the instance by statement/current.ts and released as `model_written` in its own
 * config. Model calls go through the provider's response cache; a finished item never re-runs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { defineStage, type WorkItem } from '../../../pipeline/stage.js';
import { inRunOrder } from '../run-order.js';
import { SkipItem, TelebenchError } from '../../../pipeline/errors.js';
import { createProvider, stageLlmDeps } from '../../../pipeline/providers/llm/config.js';
import { swe5gSettings, type HasSwe5g } from '../config.js';
import { mirrorPath } from '../resolve/resolve.js';
import { sameKeyIn } from '../resolve/plan.js';
import { validateStage } from '../validate/validate.js';
import { gitFileReader } from '../testgen/generate.js';
import { currentIssueText, STATEMENT_STAGE, type ModelStatement } from './current.js';
import { buggyCodeOf, failingOutput, writeStatement } from './writer.js';
import type { ModelWrittenSettings } from './config.js';

/** One item: what the writer is shown comes from these (read in `run`), plus the settings. */
export interface StatementInput {
  instance_id: string;
  repo: string;
  base_commit: string;
  /** The gold patch: only for the leak check and to find the buggy functions, never shown. */
  patch: string;
  pr_title: string;
  FAIL_TO_PASS: string[];
  /** Digest of validation's step-1 log (the tests at the parent). */
  parent_log: string | null;
  /** The model and the writer's settings (a change re-writes). */
  settings: Omit<ModelWrittenSettings, 'enabled'>;
}

const settingsOf = (cfg: HasSwe5g) => swe5gSettings(cfg).problem_statements.model_written;

/** The merge commit's messages (`git log base..merge`), '' when git cannot tell. */
function commitMessages(gitDir: string, base: string, patchMerge: string | null): string {
  if (!patchMerge) return '';
  try {
    return execFileSync('git', ['-C', gitDir, 'log', '--format=%B', `${base}..${patchMerge}`], {
      encoding: 'utf8',
      maxBuffer: 16 << 20,
    });
  } catch {
    return '';
  }
}

export const statementStage = defineStage<StatementInput, ModelStatement, HasSwe5g>({
  name: STATEMENT_STAGE,
  version: 2,
  needs: ['swe5g.validate', 'swe5g.filter'],
  itemNeeds: sameKeyIn('swe5g.validate'),
  description:
    'Model-written problem statements for validated fixes without a linked issue (off by default), leak-checked against the gold patch and quality-checked against the buggy code and failing output.',
  *plan(ctx) {
    const s = settingsOf(ctx.config);
    if (!s.enabled || !s.llm) return;
    const text = currentIssueText(ctx.store);
    const { enabled: _e, ...settings } = s;
    const items: WorkItem<StatementInput>[] = [];
    for (const o of ctx.store.outputs(validateStage)) {
      const t = text.get(o.key);
      const statement = t ? t.problem_statement : o.output.problem_statement;
      if (statement.trim() !== '') continue; // a linked issue: nothing to write
      const v = o.output;
      items.push({
        key: o.key,
        input: {
          instance_id: v.instance_id,
          repo: v.repo,
          base_commit: v.base_commit,
          patch: v.patch,
          pr_title: t?.pr_title ?? '',
          FAIL_TO_PASS: v.FAIL_TO_PASS,
          parent_log: v.step_logs.parent_p2p ?? null,
          settings,
        },
      });
    }
    yield* inRunOrder(ctx, items);
  },
  async run(item, ctx) {
    const i = item.input;
    const s = i.settings;
    const gitDir = mirrorPath(ctx.stateDir, i.repo);
    if (!existsSync(gitDir))
      throw new TelebenchError('mirror_missing', `no mirror of ${i.repo} at ${gitDir}`, {
        tier: 'infra',
        context: { repo: i.repo, gitDir },
      });
    const merge = (ctx.store.item('swe5g.resolve', i.instance_id)?.output ?? null) as {
      merge_commit?: string;
    } | null;
    const buggyCode = await buggyCodeOf(
      i.patch,
      gitFileReader(gitDir, i.base_commit),
      s.code_chars,
    );
    const log = i.parent_log ? ctx.blobs.getText(i.parent_log) : '';
    const llm = ctx.memo('swe5g.statement.llm', () =>
      createProvider(
        {
          endpoints: s.llm!.endpoints,
          ...(s.llm!.fallback ? { fallback: s.llm!.fallback } : {}),
          cache: s.llm!.cache,
          prompt_check: s.llm!.prompt_check,
        },
        stageLlmDeps(ctx),
      ),
    );
    const j = s.quality.enabled ? s.quality.judge : undefined;
    const judge = j && {
      llm: ctx.memo('swe5g.statement.judge', () =>
        createProvider(
          {
            endpoints: j.endpoints,
            ...(j.fallback ? { fallback: j.fallback } : {}),
            cache: j.cache,
            prompt_check: j.prompt_check,
          },
          stageLlmDeps(ctx),
        ),
      ),
      model: j.model,
      maxTokens: j.max_tokens,
    };
    const files = [...new Set([...i.patch.matchAll(/^\+\+\+ b\/(.+)$/gm)].map((m) => m[1]!))];
    const context = {
      repo: i.repo,
      buggyCode,
      testOutput: failingOutput(log, i.FAIL_TO_PASS, s.output_chars),
      commitText: [i.pr_title, commitMessages(gitDir, i.base_commit, merge?.merge_commit ?? null)]
        .filter((x) => x.trim() !== '')
        .join('\n\n'),
      files,
      FAIL_TO_PASS: i.FAIL_TO_PASS,
    };
    ctx.artifact('context.json', JSON.stringify(context, null, 1), 'application/json');
    const w = await writeStatement(
      llm,
      {
        model: s.llm!.model,
        maxTokens: s.llm!.max_tokens,
        ...(s.llm!.num_ctx ? { numCtx: s.llm!.num_ctx } : {}),
        maxAttempts: s.max_attempts,
        ngram: s.leak_ngram,
        quality: s.quality.enabled ? s.quality : false,
        ...(judge ? { judge } : {}),
        signal: ctx.signal,
      },
      context,
      i.patch,
    );
    ctx.artifact('attempts.json', JSON.stringify(w.attempts, null, 1), 'application/json');
    if (!w.ok)
      throw new SkipItem(
        w.check === 'leak' ? 'statement_leaks_patch' : 'statement_uninformative',
        `${i.instance_id}: ${w.attempts.length} statement(s) refused, the last by the ${w.check} check because it ${w.reason}; the instance stays incomplete`,
      );
    ctx.log(
      `${i.instance_id}: statement written by ${s.llm!.model} (attempt ${w.attempts.length})`,
    );
    return {
      instance_id: i.instance_id,
      problem_statement: w.statement,
      model: s.llm!.model,
      attempts: w.attempts,
    };
  },
});
