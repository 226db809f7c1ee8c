/**
 * `swe5g.audit`: the fail-to-pass audit of every validated instance. A benchmark's "resolved" must
 * mean the bug is fixed, so each instance's tests are graded on mutants of its gold patch
 * (mutants.ts: a no-op guard, the guard's body emptied, the guard in dead code must NOT resolve;
 * equivalent rewrites of the gold MUST resolve), each as a prediction through the evaluation's own
 * grading entry point (`gradePrediction`, stages/swe5g/evaluate/grade.ts: the harness's apply chain, test
 * spec, step runner and grading) in the instance image validation built (never rebuilt).
 *
 * Cost: a must-reject mutant runs only the test directories of FAIL_TO_PASS and is graded on
 * FAIL_TO_PASS alone (if they pass, the test accepted it); an equivalent rewrite gets the full
 * grade (FAIL_TO_PASS and PASS_TO_PASS). The fix sites are testgen's Strategy B sites
 * (`deriveFixSites`), derived again from the tree at base_commit and the gold patch, so shipped
 * and Strategy A tests are audited with the same mutants where a site is found.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineStage, type WorkItem } from '../../../pipeline/stage.js';
import { inRunOrder } from '../run-order.js';
import { ensureInstanceImage } from '../build/on-demand.js';
import { isComplete, withCurrentStatement } from '../statement/current.js';
import type { Executor } from '../../../pipeline/providers/docker/executor.js';
import { stageExecutor, executorPreflight } from '../executors.js';
import { swe5gSettings, type HasSwe5g } from '../config.js';
import type { EnvironmentsSettings } from '../environments-config.js';
import { sameKeyIn } from '../resolve/plan.js';
import { validateStage } from '../validate/validate.js';
import { stateInstance } from '../evaluate/instances.js';
import type { ValidateInput } from '../validate/validate.js';
import { gradePrediction, type EvalInstance } from '../evaluate/grade.js';
import { overlayFor, patchPaths } from '../harness/apply.js';
import { readDiff, languageOfPath } from '../testgen/diffinfo.js';
import { deriveFixSites, type FixSite } from '../testgen/patterns.js';
import type { AuditedMutant, F2pAudit, MutantKind, RepoLanguage } from '../types.js';
import { generateMutants, type GoldFile, type Mutant } from './mutants.js';
import type { AuditSettings } from './config.js';
import { registryById } from '../registry.js';

/** Input of one audit item: the instance as grading sees it, and the kinds to grade. */
export interface AuditInput {
  instance: EvalInstance & { language: RepoLanguage };
  kinds: MutantKind[];
}

/** Output of one audit item. */
export interface AuditOutput {
  instance_id: string;
  f2p_audit: F2pAudit;
  /** Wall time of the grading runs, seconds. */
  seconds: number;
}

/** The gold patch's files at base_commit and after the fix (text; null: absent). */
async function goldFiles(inst: AuditInput['instance']): Promise<GoldFile[]> {
  const overlay = await overlayFor(inst.source_dir, [['patch', inst.patch]]);
  return patchPaths(inst.patch).map((path) => {
    const p = join(inst.source_dir, path);
    const parentSource = existsSync(p) ? readFileSync(p, 'utf8') : null;
    const o = overlay[path];
    const fixSource = o === undefined ? parentSource : o === null ? null : o.content.toString();
    const lang = languageOfPath(path);
    return { path, language: lang === inst.language ? lang : null, parentSource, fixSource };
  });
}

/** Testgen's Strategy B fix sites of the gold patch (the same derivation as `swe5g.testgen`). */
async function fixSites(inst: AuditInput['instance'], files: GoldFile[]): Promise<FixSite[]> {
  const sites: FixSite[] = [];
  for (const d of readDiff(inst.patch, inst.instance_id)) {
    const f = files.find((x) => x.path === (d.newPath ?? d.oldPath));
    if (!f?.language) continue;
    const r = await deriveFixSites({
      file: f.path,
      language: f.language,
      parentSource: f.parentSource,
      fixSource: f.fixSource,
      addedLines: d.addedLines,
    });
    sites.push(...r.sites);
  }
  return sites;
}

/**
 * The instance narrowed to what a must-reject mutant needs: FAIL_TO_PASS only (no PASS_TO_PASS),
 * and the test directories that hold a FAIL_TO_PASS test (all of them when none can be told).
 */
export function failToPassOnly<T extends EvalInstance>(inst: T): T {
  const pkgs = inst.FAIL_TO_PASS.map((id) => id.split('::')[0] ?? '');
  const dirs =
    inst.test_dirs === 'all'
      ? 'all'
      : inst.test_dirs.filter((d) =>
          pkgs.some((p) =>
            d === '.' ? true : p === d || p.endsWith(`/${d}`) || p.startsWith(`${d}/`),
          ),
        );
  return {
    ...inst,
    PASS_TO_PASS: [],
    test_dirs: dirs === 'all' || dirs.length > 0 ? dirs : inst.test_dirs,
  };
}

/** What grading needs besides the instance (the evaluation's `GradeDeps`). */
export interface AuditDeps {
  executor: Executor;
  settings: Pick<EnvironmentsSettings, 'limits'>;
  saveLog: (name: string, text: string) => string;
  savePatch: (name: string, text: string) => string;
  signal?: AbortSignal;
}

/**
 * Whether an audit graded at least one must-reject mutant: else (none applied, none built) it
 * proves nothing about no-ops, and the log, the report and the card count it apart.
 * @param a an audit record (`f2p_audit` of the stage or of a released row)
 */
export function rejectGraded(a: {
  mutants: readonly { status: string; expectation: string }[];
}): boolean {
  return a.mutants.some((m) => m.status === 'graded' && m.expectation === 'reject');
}

/** Grades one mutant as a prediction (see the module comment for which tests run). */
export async function gradeMutant(
  inst: EvalInstance,
  m: Mutant,
  deps: AuditDeps,
): Promise<AuditedMutant> {
  const base = { kind: m.kind, expectation: m.expectation };
  if (!m.patch) return { ...base, status: 'not_applicable', why: m.not_applicable ?? '' };
  const reject = m.expectation === 'reject';
  const { grade } = await gradePrediction(
    {
      instance: reject ? failToPassOnly(inst) : inst,
      model_patch: m.patch,
      step: `audit_${m.kind}`,
    },
    {
      executor: deps.executor,
      settings: deps.settings,
      saveLog: deps.saveLog,
      ...(deps.signal ? { signal: deps.signal } : {}),
    },
  );
  // a mutant that does not apply or build is no probe of the test: its "not resolved" says
  // nothing (real Open5GS 2805, 2809: the statement in dead code named symbols the parent lacks,
  // and was counted as a rejected no-op)
  const broken = !grade.resolved && (!grade.patch_applied || grade.build_failures.length > 0);
  if (broken)
    return {
      ...base,
      status: 'not_applicable',
      why: !grade.patch_applied
        ? 'the mutant does not apply at base_commit'
        : `the mutant does not build (${grade.build_failures.join(', ')}): its rejection proves nothing`,
      patch_blob: deps.savePatch(`mutants/${m.kind}.diff`, m.patch),
      log: grade.log,
    };
  return {
    ...base,
    status: 'graded',
    resolved: grade.resolved,
    ok: grade.resolved === !reject,
    tests: reject ? 'FAIL_TO_PASS' : 'all',
    patch_applied: grade.patch_applied,
    FAIL_TO_PASS: grade.FAIL_TO_PASS,
    build_failures: grade.build_failures,
    patch_blob: deps.savePatch(`mutants/${m.kind}.diff`, m.patch),
    log: grade.log,
  };
}

/**
 * Audits one instance: its mutants generated and graded.
 * @returns the audit (`weak` when a must-reject mutant resolved, `strict` when an equivalent
 *   rewrite did not)
 * @throws TelebenchError from the executor (infra) or `patch_does_not_apply` from grading when the
 *   instance's own test_patch breaks
 */
export async function auditInstance(input: AuditInput, deps: AuditDeps): Promise<AuditOutput> {
  const started = Date.now();
  const inst = input.instance;
  const files = await goldFiles(inst);
  const sites = await fixSites(inst, files);
  const mutants = await generateMutants(files, sites, inst.patch);
  const audited: AuditedMutant[] = [];
  for (const m of mutants) {
    if (!input.kinds.includes(m.kind)) {
      audited.push({
        kind: m.kind,
        expectation: m.expectation,
        status: 'not_applicable',
        why: 'kind not in swe5g.audit.kinds',
      });
      continue;
    }
    audited.push(await gradeMutant(inst, m, deps));
  }
  const failed = audited.filter((a) => a.status === 'graded' && !a.ok);
  return {
    instance_id: inst.instance_id,
    f2p_audit: {
      mutants: audited,
      weak: failed.some((a) => a.expectation === 'reject'),
      strict: failed.some((a) => a.expectation === 'resolve'),
      failed_kinds: failed.map((a) => a.kind),
      sites: sites.map(
        (s) => `${s.file}:${s.line} ${s.function} ${s.pattern.operand ?? s.pattern.key}`,
      ),
    },
    seconds: (Date.now() - started) / 1000,
  };
}

/** The audit settings (defaults when the section is absent). */
export function auditSettings(cfg: HasSwe5g): AuditSettings {
  return swe5gSettings(cfg).audit;
}

/**
 * Stage `swe5g.audit`: one item per complete validated instance (key = instance_id), after
 * `swe5g.validate` (streaming: an instance is audited as soon as it is validated).
 */
export const auditStage = defineStage<AuditInput, AuditOutput, HasSwe5g>({
  name: 'swe5g.audit',
  // 2: empty_body only where the guard body refuses the bad value (not `X != nil && ...`)
  // 3: every kind of fix site gets mutants (a comparison or expression in an `if`), not only null
  //    checks: a text-strength test of `OGS_OK != f(...)` had no audit at all (Open5GS PR 2806)
  // 4: a site in no `if` condition (`ogs_assert(OGS_OK == f(...))`) gets its statement in dead
  //    code: real Open5GS 2805/2806 had every kind not_applicable and were released as audited
  // 5: a mutant that does not apply or build is not_applicable, not a rejection (real Open5GS
  //    2805, 2809, 2857, 2864: dead code / no-ops naming symbols the parent lacks)
  // 6: a good-value guard is read on the condition's tree, so a truth-value test of a null-check
  //    operand that is then used (`else if (opt && opt->n)`) is one too and a negated `!(p !=
  //    NULL)` or a flag never used (`if (failed)`) is not (real Open5GS 2829: its emptied use-body
  //    was graded accepted and the test called weak; 2857 and 2874 keep their must-reject kind)
  // 7: the statement kinds (noop, dead_code) are not applicable where the guard's place at the
  //    parent is outside any function body (real Open5GS 2857, 2882: the fix adds or rewrites the
  //    function; their copies went between functions, did not compile, and cost a run each)
  // 8: a statement copy also needs the guard's own function at the parent (same kind and header)
  //    and a statement boundary (not inside a call's arguments or an initializer); a Python place
  //    after a function's last statement continues it when indented like the guard; a good-value
  //    guard reads the value in its body (not only in the condition) and De Morgan forms
  //    (`!(a || b)`) count (a reviewer's 39 adversarial cases, mutants-adversarial.test.ts)
  // 9: a fix site is its first added occurrence in live code (testgen 15): a gold that writes its
  //    condition first in `#if 0` (real Open5GS 1552) had that copy's body emptied, a mutant equal
  //    to the gold, and was withheld as weak
  version: 9,
  // swe5g.statement first: an instance completed by a model-written statement is audited too
  needs: ['swe5g.validate', 'swe5g.statement'],
  description:
    'Fail-to-pass audit: mutants of the gold patch graded as predictions (no-op, emptied guard, dead code must not resolve; equivalent rewrites must).',
  concurrency: (cfg) => {
    const env = swe5gSettings(cfg).environments;
    return env.executor === 'swarm' ? env.swarm.task_budget : 1;
  },
  async preflight(ctx) {
    if (!auditSettings(ctx.config).enabled) return;
    await executorPreflight(swe5gSettings(ctx.config).environments);
  },
  itemNeeds: sameKeyIn('swe5g.validate'),
  // grading a mutant reads no issue text: a new problem statement never re-audits (issue 31)
  cacheKey: (i) => {
    const { problem_statement: _p, bug_category: _b, spec_refs: _s, nf: _n, ...rest } = i.instance;
    return { instance: rest, kinds: i.kinds };
  },
  *plan(ctx) {
    const s = auditSettings(ctx.config);
    if (!s.enabled) return;
    const env = swe5gSettings(ctx.config).environments;
    const entries = ctx.memo('swe5g.audit.registry', () =>
      registryById(ctx.config, ctx.configFile),
    );
    const current = withCurrentStatement(ctx.store);
    const items: WorkItem<AuditInput>[] = [];
    for (const o of ctx.store.outputs(validateStage)) {
      const v = current(o.output);
      if (!isComplete(v) && !s.include_incomplete) continue;
      const input = o.input as ValidateInput;
      const instance = stateInstance(v, input, entries.get(input.resolved.registry_id), env);
      items.push({ key: o.key, input: { instance, kinds: s.kinds } });
    }
    yield* inRunOrder(ctx, items);
  },
  async run(item, ctx) {
    const settings = swe5gSettings(ctx.config).environments;
    // an image evicted under image_budget_gib is rebuilt from its recipe (issue 31)
    await ensureInstanceImage(ctx, item.key, item.input.instance.image);
    const executor = stageExecutor(settings, ctx);
    const out = await auditInstance(item.input, {
      executor,
      settings,
      saveLog: (name, text) => ctx.artifact(`runs/${name}`, text, 'text/plain'),
      savePatch: (name, text) => ctx.artifact(name, text, 'text/x-diff'),
      signal: ctx.signal,
    });
    const a = out.f2p_audit;
    const graded = a.mutants.filter((m) => m.status === 'graded');
    const verdict = a.weak
      ? `WEAK (resolved: ${a.failed_kinds.join(', ')})`
      : rejectGraded(a)
        ? 'every must-reject mutant rejected'
        : `no must-reject mutant applies (${[...new Set(a.mutants.filter((m) => m.expectation === 'reject').map((m) => `${m.kind}: ${m.why ?? ''}`))].join('; ') || 'no fix site'}): nothing shows this test rejects a no-op`;
    ctx.log(
      `${item.key}: ${graded.length} mutant(s) graded; ${verdict}${a.strict ? '; an equivalent rewrite did not resolve' : ''}`,
    );
    return out;
  },
});
