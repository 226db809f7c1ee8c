/**
 * The dates of a SWE-Bench 5G instance and the date windows built on them (issue 32: a benchmark
 * mined from public history leaks into later models' training data; SWE-rebench scores each model
 * only on tasks created after its cutoff, SWE-bench-Live refreshes by creation date).
 *
 * - Every date is ISO 8601 UTC without fractions (`2024-03-01T10:00:00Z`, GitHub's own form; git
 *   dates are normalised by `utcIso` when mined), so dates compare and sort as strings.
 * - The **instance date** is the earliest public trace of the task: the earliest of the linked
 *   issue's creation (`issue_created_at`) and the PR's creation (`created_at`). A model whose
 *   training data ends before it cannot have seen the issue text or the fix. The base commit is
 *   older (the code the task starts from, seen or not) and the merge later; both are carried for
 *   other policies but do not decide the window.
 * - A **window** is the calendar quarter (UTC) of the instance date: `2024-Q3`.
 * - `--after D` keeps instances whose instance date is later than D: a day `2024-06-30` keeps
 *   those from `2024-07-01T00:00:00Z` on (the whole day of the cutoff is excluded); a time with a
 *   zone (`2024-06-30T12:00:00+02:00`) keeps those strictly later.
 * Pure.
 */
import { ConfigError } from '../../pipeline/errors.js';

/** ISO 8601 UTC without fractions, the form every date of a row takes. */
export const UTC_ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** The dates a row carries (`''`: unknown, e.g. a release made before the field existed). */
export interface InstanceDates {
  created_at: string;
  issue_created_at?: string;
  merged_at?: string;
  base_commit_date?: string;
}

/**
 * Any ISO 8601 date with an offset as UTC without fractions; '' for '' or text that is no date.
 * (The mining's `utcIso` keeps non-dates unchanged for its own records; a row must not carry one.)
 */
export function toUtcIso(date: string | null | undefined): string {
  if (!date) return '';
  const t = Date.parse(date);
  return Number.isNaN(t) ? '' : new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The instance date: the earliest of `issue_created_at` and `created_at` that is set.
 * @returns a UTC ISO date, or '' when the row carries neither
 */
export function instanceDate(r: InstanceDates): string {
  const known = [r.issue_created_at ?? '', r.created_at]
    .map((d) => toUtcIso(d))
    .filter((d) => d !== '');
  return known.sort()[0] ?? '';
}

/** The window (UTC calendar quarter, `2024-Q3`) of a UTC ISO date; '' for ''. */
export function quarterOf(date: string): string {
  const d = toUtcIso(date);
  if (!d) return '';
  return `${d.slice(0, 4)}-Q${Math.floor((Number(d.slice(5, 7)) - 1) / 3) + 1}`;
}

/** First instant of a window (`2024-Q3` -> `2024-07-01T00:00:00Z`). */
export function windowStart(window: string): string {
  const m = /^(\d{4})-Q([1-4])$/.exec(window);
  if (!m) throw new ConfigError(`not a window name: "${window}" (expected YYYY-Qn, e.g. 2024-Q3)`);
  return `${m[1]}-${String((Number(m[2]) - 1) * 3 + 1).padStart(2, '0')}-01T00:00:00Z`;
}

/** A parsed `--after` bound: instances dated at or after `from` are kept. */
export interface AfterBound {
  /** The text as given. */
  given: string;
  /** First kept instant, UTC ISO with milliseconds dropped (`2024-07-01T00:00:00Z`). */
  from: string;
  /** True when `from` itself is kept (a day bound); false for a time bound (strictly later). */
  inclusive: boolean;
}

const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Parses a model cutoff given as `--after DATE` (or `swe5g.evaluation.after`).
 * @param where how it was given, for the error (`--after`, `swe5g.evaluation.after`)
 * @returns the bound; a day keeps instances from the next day's 00:00 UTC on
 * @throws ConfigError naming `where`, the text and the accepted forms when it is not a calendar
 *   day `YYYY-MM-DD` or a time `YYYY-MM-DDTHH:MM[:SS]` with `Z` or `+HH:MM` (a time without a
 *   zone is refused: its instant depends on the machine)
 */
export function parseAfter(text: string, where = '--after'): AfterBound {
  const t = text.trim();
  const bad = (why: string) =>
    new ConfigError(
      `${where}: "${text}" ${why}; give a day YYYY-MM-DD (e.g. 2024-06-30: instances from 2024-07-01 on) or a time with its zone, e.g. 2024-06-30T12:00:00Z`,
      { path: where },
    );
  const day = DAY_RE.exec(t);
  const time = day ? null : TIME_RE.exec(t);
  if (!day && !time) {
    if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?(\.\d+)?$/.test(t))
      throw bad('has no time zone (its instant would depend on the machine)');
    throw bad('is not a date');
  }
  const [, y, mo, d] = (day ?? time)!;
  const probe = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (
    probe.getUTCFullYear() !== Number(y) ||
    probe.getUTCMonth() !== Number(mo) - 1 ||
    probe.getUTCDate() !== Number(d)
  )
    throw bad('is not a calendar day');
  if (day) {
    probe.setUTCDate(probe.getUTCDate() + 1);
    return { given: text, from: toUtcIso(probe.toISOString()), inclusive: true };
  }
  const [, , , , hh, mm, ss = '00'] = time!;
  if (Number(hh) > 23 || Number(mm) > 59 || Number(ss) > 59) throw bad('is not a time of day');
  return { given: text, from: toUtcIso(t), inclusive: false };
}

/** Whether an instance date passes a bound ('' never does: an undated instance is not kept). */
export function isAfter(date: string, bound: AfterBound): boolean {
  const d = toUtcIso(date);
  if (!d) return false;
  return bound.inclusive ? d >= bound.from : d > bound.from;
}

/** What a `--after` selection kept and left out, for the report. */
export interface AfterSelection<T> {
  kept: T[];
  /** Left out: dated at or before the bound. */
  before: number;
  /** Left out: no instance date (rows of a release made before the dates were recorded). */
  undated: number;
}

/** Keeps the items whose instance date passes `bound`. */
export function selectAfter<T>(
  items: readonly T[],
  bound: AfterBound,
  dateOf: (item: T) => string,
): AfterSelection<T> {
  const out: AfterSelection<T> = { kept: [], before: 0, undated: 0 };
  for (const it of items) {
    const d = dateOf(it);
    if (isAfter(d, bound)) out.kept.push(it);
    else if (toUtcIso(d) === '') out.undated++;
    else out.before++;
  }
  return out;
}

/** One window of a release: its name, row count and the instance dates it spans. */
export interface WindowCount {
  name: string;
  rows: number;
  first: string;
  last: string;
}

/** Rows by window (oldest first); rows without an instance date are left out of every window. */
export function windowCounts<T>(rows: readonly T[], dateOf: (r: T) => string): WindowCount[] {
  const by = new Map<string, string[]>();
  for (const r of rows) {
    const d = toUtcIso(dateOf(r));
    if (!d) continue;
    const q = quarterOf(d);
    by.set(q, [...(by.get(q) ?? []), d]);
  }
  return [...by.keys()].sort().map((name) => {
    const ds = by.get(name)!.sort();
    return { name, rows: ds.length, first: ds[0]!, last: ds.at(-1)! };
  });
}
