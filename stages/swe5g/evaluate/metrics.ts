/**
 * Metrics of the SWE-Bench 5G evaluation (paper, "Results"), computed from the stored solve and
 * grade outputs; pure functions over plain records, so tests check them against hand counts.
 *
 * - Funnel per run (model x mode x condition; external predictions per model_name_or_path), Fig. 3:
 *   `attempted` (solve items done or skipped for a content reason, e.g. a prompt too long),
 *   `diagnosed` — rule: some SEARCH/REPLACE block of some turn names a file the gold patch
 *   modifies (external predictions: the patch touches such a file); the gold patch is read only
 *   here, after the solve;
 *   `applied` — the final patch is not empty and `git apply` took it in grading ("edits successfully
 *   written to source, regardless of test outcome");
 *   `resolved` — every FAIL_TO_PASS and PASS_TO_PASS test passed in grading.
 * - Failure stage per instance (Table V), the earliest stage that failed, from the last turn's
 *   answer and the grading run: `format` (the answer has no well-formed block, or a block that
 *   could not be placed: malformed, no SEARCH match or several, no path, depths that do not fit —
 *   the paper's "patch format error", "a SEARCH block that does not exactly match the source
 *   whitespace or formatting"; external predictions: an empty patch), `apply` (the edits were not
 *   written to the source: the patch is empty although every block applied, or `git apply`
 *   refused it in grading — the paper's "Patch Applied" step of Fig. 3), `compile` (a package did
 *   not build), `incomplete` (it built, some hidden test still fails: the paper's "incomplete
 *   fix"), else none.
 *   Items the solver could not finish (`excluded`) are counted apart, never as a stage.
 * - Resolve rate by bug category (Table IV), tokens (prompt + output over all turns), and the
 *   skills A/B per specification (Table VI): Pass- and Pass+ (resolve rates without / with the skill
 *   on the A/B subset, same mode), dP = Pass+ - Pass-, C+ (mean tokens with the skill) and
 *   rho = C+ / C- - 1 (the token overhead ratio).
 */
import type { EditOutcome } from './edits.js';
import { patchPaths } from './grade.js';

/** What metrics read of one attempt (a solve and its grade, or an external prediction's grade). */
export interface Attempt {
  run: string;
  model: string;
  mode: 'single' | 'multi' | 'external';
  condition: 'none' | 'skill';
  instance_id: string;
  bug_category: string;
  /** Gold patch of the instance. */
  gold_patch: string;
  /** null: the solve was skipped (content reason), see `excluded`. */
  excluded: string | null;
  /** Files named by the blocks of every turn (solver) or touched by the patch (external). */
  files_named: string[];
  /** The last turn's edit outcomes (solver; external: []), and whether it had any block. */
  last_edits: EditOutcome[];
  last_blocks: number;
  model_patch: string;
  grade: {
    patch_applied: boolean;
    /** The method of SWE-bench's chain that applied the patch, `empty` or `failed` (grade.ts). */
    patch_method?: string;
    resolved: boolean;
    build_failures: string[];
  } | null;
  tokens: number;
  skill_spec: string | null;
  turns: number;
}

export type FailureStage = 'format' | 'apply' | 'compile' | 'incomplete';

/** Bug diagnosed (rule in the module comment). */
export function diagnosed(a: Attempt): boolean {
  const gold = new Set(patchPaths(a.gold_patch));
  return a.files_named.some((f) => gold.has(f));
}

/** Patch applied (rule in the module comment). */
export function applied(a: Attempt): boolean {
  return a.grade !== null && a.grade.patch_applied && a.model_patch.trim() !== '';
}

/**
 * The earliest failing stage of an attempt (Table V), or null when resolved or excluded.
 */
export function failureStage(a: Attempt): FailureStage | null {
  if (a.excluded !== null || !a.grade || a.grade.resolved) return null;
  if (a.mode === 'external') {
    if (a.model_patch.trim() === '') return 'format';
    if (!a.grade.patch_applied) return 'apply';
  } else {
    if (a.last_blocks === 0 || a.last_edits.some((e) => !e.applied)) return 'format';
    if (!applied(a)) return 'apply';
  }
  if (a.grade.build_failures.length > 0) return 'compile';
  return 'incomplete';
}

/** Funnel and failure stages of one run. */
export interface RunSummary {
  run: string;
  model: string;
  mode: string;
  condition: string;
  attempted: number;
  excluded: number;
  diagnosed: number;
  applied: number;
  resolved: number;
  stages: Record<FailureStage, number>;
  tokens_total: number;
  tokens_mean: number;
  turns_mean: number;
}

const ratio = (a: number, b: number): number | null => (b === 0 ? null : a / b);

/** Summaries per run, in run order. */
export function summarize(attempts: readonly Attempt[]): RunSummary[] {
  const runs = new Map<string, Attempt[]>();
  for (const a of attempts) runs.set(a.run, [...(runs.get(a.run) ?? []), a]);
  return [...runs.entries()].map(([run, as]) => {
    const stages: Record<FailureStage, number> = { format: 0, apply: 0, compile: 0, incomplete: 0 };
    for (const a of as) {
      const s = failureStage(a);
      if (s) stages[s]++;
    }
    const graded = as.filter((a) => a.excluded === null);
    const tokens = graded.reduce((n, a) => n + a.tokens, 0);
    return {
      run,
      model: as[0]!.model,
      mode: as[0]!.mode,
      condition: as[0]!.condition,
      attempted: as.length,
      excluded: as.length - graded.length,
      diagnosed: graded.filter(diagnosed).length,
      applied: graded.filter(applied).length,
      resolved: graded.filter((a) => a.grade?.resolved).length,
      stages,
      tokens_total: tokens,
      tokens_mean: graded.length ? tokens / graded.length : 0,
      turns_mean: graded.length ? graded.reduce((n, a) => n + a.turns, 0) / graded.length : 0,
    };
  });
}

/** Resolve rate per run and bug category (Table IV): resolved / attempted in that category. */
export function byCategory(
  attempts: readonly Attempt[],
): { run: string; category: string; attempted: number; resolved: number; rate: number | null }[] {
  const cells = new Map<
    string,
    { run: string; category: string; attempted: number; resolved: number }
  >();
  for (const a of attempts) {
    const k = `${a.run}\u0000${a.bug_category}`;
    const c = cells.get(k) ?? { run: a.run, category: a.bug_category, attempted: 0, resolved: 0 };
    c.attempted++;
    if (a.grade?.resolved) c.resolved++;
    cells.set(k, c);
  }
  return [...cells.values()].map((c) => ({ ...c, rate: ratio(c.resolved, c.attempted) }));
}

/** One row of Table VI. */
export interface SkillRow {
  model: string;
  spec: string;
  instances: number;
  pass_minus: number | null;
  pass_plus: number | null;
  delta: number | null;
  cost_plus: number | null;
  cost_minus: number | null;
  overhead: number | null;
}

/**
 * The skills A/B per model and specification: pairs of (condition none, condition skill) attempts
 * of the same model, mode and instance, where the skill attempt names its spec.
 */
export function skillsAB(attempts: readonly Attempt[]): SkillRow[] {
  const plus = attempts.filter((a) => a.condition === 'skill' && a.excluded === null);
  const rows = new Map<string, { model: string; spec: string; pairs: [Attempt, Attempt][] }>();
  for (const p of plus) {
    const m = attempts.find(
      (a) =>
        a.condition === 'none' &&
        a.model === p.model &&
        a.mode === p.mode &&
        a.instance_id === p.instance_id &&
        a.excluded === null,
    );
    if (!m) continue;
    const k = `${p.model}\u0000${p.skill_spec}`;
    const r = rows.get(k) ?? { model: p.model, spec: p.skill_spec ?? '?', pairs: [] };
    r.pairs.push([m, p]);
    rows.set(k, r);
  }
  return [...rows.values()].map((r) => {
    const n = r.pairs.length;
    const pm = ratio(r.pairs.filter(([m]) => m.grade?.resolved).length, n);
    const pp = ratio(r.pairs.filter(([, p]) => p.grade?.resolved).length, n);
    const cp = ratio(
      r.pairs.reduce((s, [, p]) => s + p.tokens, 0),
      n,
    );
    const cm = ratio(
      r.pairs.reduce((s, [m]) => s + m.tokens, 0),
      n,
    );
    return {
      model: r.model,
      spec: r.spec,
      instances: n,
      pass_minus: pm,
      pass_plus: pp,
      delta: pm !== null && pp !== null ? pp - pm : null,
      cost_plus: cp,
      cost_minus: cm,
      overhead: cp !== null && cm ? cp / cm - 1 : null,
    };
  });
}
