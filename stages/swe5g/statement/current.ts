/**
 * The problem statement an instance has *now* (issue 31): the issue and PR text of the current
 * `swe5g.filter` candidate, else a model-written statement of `swe5g.statement`, laid over the
 * records of the stages that do not read that text.
 *
 * Nothing that builds an image or runs a test reads the issue text, so `swe5g.resolve`,
 * `swe5g.build`, `swe5g.validate` and `swe5g.audit` leave it out of their cache keys
 * ({@link withoutIssueText}, `Stage.cacheKey`): a new problem statement (an issues file given
 * later, a model-written one) never re-builds or re-validates. Their stored records keep the text
 * they were made with; every reader of the statement (release rows, evaluation prompts, the audit's
 * choice of complete instances) takes it from here instead ({@link currentStatements},
 * {@link withCurrentStatement}). `swe5g.testgen` reads the text (bug category, 3GPP references,
 * the LLM test writer) and is planned with the current text ({@link withIssueText}).
 */
import type { StoreReader } from '../../../pipeline/stage.js';
import type { BugCategory, Candidate, TestGen, ValidatedInstance } from '../types.js';

/** Fields of the issue and PR text: what a problem statement change changes, and nothing else reads. */
export const ISSUE_TEXT_FIELDS = [
  'problem_statement',
  'hints_text',
  'issues',
  'links',
  'incomplete',
  'pr_title',
  'pr_body',
] as const;
export type IssueTextField = (typeof ISSUE_TEXT_FIELDS)[number];
export type IssueText = Pick<Candidate, IssueTextField>;

/** The stage that writes model-written statements (`statement/stage.ts`), read by name here. */
export const STATEMENT_STAGE = 'swe5g.statement';

/**
 * `x` without the issue and PR text: the part of a Candidate / Resolved record that a stage which
 * does not read the text hashes as its cache key. A copy; `x` is not changed.
 */
export function withoutIssueText<T extends object>(x: T): Omit<T, IssueTextField> {
  const out = { ...x } as Record<string, unknown>;
  for (const k of ISSUE_TEXT_FIELDS) delete out[k];
  return out as Omit<T, IssueTextField>;
}

/**
 * `x` with the issue and PR text of `text` (the current candidate's) when given, else unchanged.
 */
export function withIssueText<T extends IssueText>(x: T, text: IssueText | undefined): T {
  if (!text) return x;
  const out = { ...x } as Record<string, unknown>;
  for (const k of ISSUE_TEXT_FIELDS) out[k] = text[k];
  return out as T;
}

/**
 * The issue and PR text of every current `swe5g.filter` candidate, by instance_id; empty when the
 * stage is not registered (a command on a state made elsewhere): the records' own text is used.
 */
export function currentIssueText(store: StoreReader): Map<string, IssueText> {
  const out = new Map<string, IssueText>();
  try {
    for (const o of store.outputsNamed('swe5g.filter')) {
      const c = o.output as Candidate;
      out.set(
        o.key,
        Object.fromEntries(ISSUE_TEXT_FIELDS.map((k) => [k, c[k]])) as unknown as IssueText,
      );
    }
  } catch {
    // swe5g.filter not registered
  }
  return out;
}

/** Where a current statement came from: a linked issue (API or issues file) or a model. */
export type StatementOrigin =
  { source: 'issue' } | { source: 'model_written'; model: string } | { source: 'none' };

/** The statement an instance has now. */
export interface CurrentStatement {
  problem_statement: string;
  hints_text: string;
  incomplete: boolean;
  origin: StatementOrigin;
}

/** What `swe5g.statement` stores for one instance (its output; `statement/stage.ts`). */
export interface ModelStatement {
  instance_id: string;
  problem_statement: string;
  /** The model as the provider named it (`SmolLM2-135M-Instruct`, `gpt-4o-mini`). */
  model: string;
  /**
   * Every attempt: accepted, or refused by the leak check (`check: 'leak'`) or the quality check
   * (`check: 'quality'`, `rule` as in statement/quality.ts) with the reason.
   */
  attempts: { ok: boolean; check?: 'leak' | 'quality'; rule?: string; reason?: string }[];
}

/**
 * The current statement of every instance the state knows: the filter's issue text when it is not
 * empty, else the accepted model-written statement, else none (incomplete).
 */
export function currentStatements(store: StoreReader): Map<string, CurrentStatement> {
  const out = new Map<string, CurrentStatement>();
  for (const [id, t] of currentIssueText(store)) {
    const has = t.problem_statement.trim() !== '';
    out.set(id, {
      problem_statement: t.problem_statement,
      hints_text: t.hints_text,
      incomplete: !has,
      origin: has ? { source: 'issue' } : { source: 'none' },
    });
  }
  try {
    for (const o of store.outputsNamed(STATEMENT_STAGE)) {
      const m = o.output as ModelStatement;
      const cur = out.get(o.key);
      if (cur && !cur.incomplete) continue; // a linked issue wins
      out.set(o.key, {
        problem_statement: m.problem_statement,
        hints_text: cur?.hints_text ?? '',
        incomplete: false,
        origin: { source: 'model_written', model: m.model },
      });
    }
  } catch {
    // swe5g.statement not registered
  }
  return out;
}

/** A validated instance (`V`) as it stands now, with where its statement came from. */
export type CurrentInstance<V extends ValidatedInstance = ValidatedInstance> = V & {
  statement_origin: StatementOrigin;
};

/** Testgen's classification (it reads the issue text) by instance_id; empty when not registered. */
function classifications(
  store: StoreReader,
): Map<string, { bug_category: BugCategory; spec_refs: string[]; nf: string }> {
  const out = new Map<string, { bug_category: BugCategory; spec_refs: string[]; nf: string }>();
  try {
    for (const o of store.outputsNamed('swe5g.testgen')) {
      const t = o.output as TestGen;
      out.set(o.key, { bug_category: t.bug_category, spec_refs: t.spec_refs, nf: t.nf });
    }
  } catch {
    // swe5g.testgen not registered
  }
  return out;
}

/**
 * A function laying the current statement ({@link currentStatements}) and testgen's current
 * classification (bug category, 3GPP references, NF: read from the issue text) over a stored
 * validated instance. Reads the store once; an instance the maps do not hold keeps its own
 * fields (origin `issue` when it has a statement).
 */
export function withCurrentStatement(
  store: StoreReader,
): <V extends ValidatedInstance>(v: V) => CurrentInstance<V> {
  const statements = currentStatements(store);
  const classes = classifications(store);
  return <V extends ValidatedInstance>(v: V): CurrentInstance<V> => {
    const s = statements.get(v.instance_id);
    const c = classes.get(v.instance_id);
    const own: StatementOrigin =
      !v.incomplete && v.problem_statement.trim() !== '' ? { source: 'issue' } : { source: 'none' };
    return {
      ...v,
      ...(c ?? {}),
      ...(s
        ? {
            problem_statement: s.problem_statement,
            hints_text: s.hints_text,
            incomplete: s.incomplete,
          }
        : {}),
      statement_origin: s?.origin ?? own,
    };
  };
}

/** True when the instance has a problem statement (it may be evaluated, audited and released). */
export const isComplete = (v: Pick<ValidatedInstance, 'incomplete' | 'problem_statement'>) =>
  !v.incomplete && v.problem_statement.trim() !== '';
