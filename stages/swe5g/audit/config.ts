/**
 * `swe5g.audit`: settings of the fail-to-pass audit (stages/swe5g/audit). Composed into the
 * swe5g section by `stages/swe5g/config.ts`.
 */
import { z } from 'zod';
import type { MutantKind } from '../types.js';

/** Every mutant kind, in the order the audit grades them (must-reject first). */
export const AUDIT_KINDS = [
  'noop',
  'empty_body',
  'dead_code',
  'dead_code_preproc',
  'via_local',
  'inverted',
  'else_branch',
] as const satisfies readonly MutantKind[];

export const auditSchema = z.strictObject({
  /** Grade the mutants of every validated instance's gold patch (false: the stage plans nothing). */
  enabled: z.boolean().default(true),
  /**
   * Release an instance whose fail-to-pass test resolved a must-reject mutant (a no-op, an
   * emptied guard, the guard in dead code). False (default): it is left out of the release as
   * `weak_f2p_test`, with the mutants named in the card.
   */
  release_weak: z.boolean().default(false),
  /**
   * Release a validated instance that has no audit record although the audit is enabled (its
   * audit failed, or the release ran on a state whose audit has not reached it). False
   * (default): it is left out as `not_audited`, so a snapshot never holds a test nobody tried
   * to fool; with `enabled: false` nothing is audited and every row is released, the card saying
   * so.
   */
  release_unaudited: z.boolean().default(false),
  /**
   * Audit the validated instances that have no problem statement yet too (`incomplete`: never
   * released until one is added, e.g. by `mine --issues-from` or a model-written statement; a new
   * statement does not re-audit). False (default): only complete instances, so a run over
   * history without linked issues spends no grading runs on what it cannot release.
   */
  include_incomplete: z.boolean().default(false),
  /**
   * Kinds graded (each costs a grading run: a must-reject kind runs only FAIL_TO_PASS, an
   * equivalent rewrite the full grade). A kind left out is recorded `not_applicable`.
   */
  kinds: z
    .array(z.enum(AUDIT_KINDS))
    .min(1)
    .default([...AUDIT_KINDS]),
});
export type AuditSettings = z.output<typeof auditSchema>;
export const auditDefaults: AuditSettings = auditSchema.parse({});
