/**
 * The date window of an evaluation (issue 32): `--after DATE` of `telebench evaluate` and
 * of the solver runs (`TELEBENCH_EVAL_AFTER=DATE telebench run swe5g-eval`; both through
 * {@link AFTER_ENV}), else `swe5g.evaluation.after`, keeps the
 * instances dated after a model's cutoff (datasets/swe-bench-5g/dates.ts: the instance date is the
 * earliest of the issue's and the PR's creation; a day cutoff keeps instances from the next day).
 * The solver plans, grading plans and the report all see only the kept instances; the report says
 * the window and how many it kept.
 */
import {
  instanceDate,
  parseAfter,
  selectAfter,
  type AfterBound,
} from '../../../datasets/swe-bench-5g/dates.js';

/** Environment variable through which `--after` reaches the evaluation stages. */
export const AFTER_ENV = 'TELEBENCH_EVAL_AFTER';

/**
 * The bound in force: the flag's (environment) first, else the configuration's; null when none.
 * @throws ConfigError naming `--after` or `swe5g.evaluation.after` for a text that is not a date
 */
export function afterBound(configured: string | undefined): AfterBound | null {
  const flag = process.env[AFTER_ENV];
  if (flag) return parseAfter(flag, `--after ($${AFTER_ENV})`);
  return configured ? parseAfter(configured, 'swe5g.evaluation.after') : null;
}

/** What a window kept of the instances (null window: every instance). */
export interface WindowSelection {
  bound: AfterBound;
  total: number;
  kept: number;
  /** Dated at or before the cutoff. */
  before: number;
  /** Without an instance date (a release made before the dates were recorded). */
  undated: number;
}

/**
 * The instances of `all` inside the window.
 * @param datesOf the dates of an instance (`created_at`, `issue_created_at`)
 */
export function applyWindow<T>(
  all: ReadonlyMap<string, T>,
  bound: AfterBound | null,
  datesOf: (id: string) => { created_at: string; issue_created_at?: string },
): { instances: Map<string, T>; window: WindowSelection | null } {
  if (!bound) return { instances: new Map(all), window: null };
  const s = selectAfter([...all.keys()], bound, (id) => instanceDate(datesOf(id)));
  return {
    instances: new Map(s.kept.map((id) => [id, all.get(id)!])),
    window: { bound, total: all.size, kept: s.kept.length, before: s.before, undated: s.undated },
  };
}

/** The report's sentence on the window (`Window: ...`). */
export function windowLine(w: WindowSelection): string {
  const left = [
    w.before ? `${w.before} dated at or before it` : '',
    w.undated ? `${w.undated} without a date` : '',
  ].filter(Boolean);
  return `Window: instances dated after ${w.bound.given} (instance date ${w.bound.inclusive ? 'from' : 'after'} ${w.bound.from}: the earlier of issue and PR creation); kept ${w.kept} of ${w.total}${left.length ? ` (left out: ${left.join(', ')})` : ''}.`;
}
