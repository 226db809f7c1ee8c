/**
 * The fail-to-pass test of one Resolved instance (SWE-Bench 5G paper, "Test strategies" and
 * pipeline step 4): Strategy A (direct call: Go, Python, C in a forked child) when it compiles,
 * fails at base_commit and passes at merge_commit; else Strategy B (diff-based intent) in the repository's language and runner;
 * `shipped` when the PR brings its own tests. Plus the classification (bug category, NF, 3GPP
 * references).
 */
import { execFileSync } from 'node:child_process';
import { posix } from 'node:path';
import { SkipItem, TelebenchError } from '../../../pipeline/errors.js';
import { splitNulPaths } from '../../../pipeline/providers/git/repo.js';
import type { DeferredStrategyA, Resolved, TestGen } from '../types.js';
import { bugCategory, specRefs } from './classify.js';
import { readDiff, languageOfPath } from './diffinfo.js';
import {
  intentTests,
  goPackageName,
  goImportPath,
  pythonTestDir,
  type GeneratedFile,
  type GeneratedTests,
} from './emit.js';
import { applyPatch, removeScratch, runTests, scratchCheckout, type TestRun } from './executor.js';
import { toGitPatch } from './patchfile.js';
import { deriveFixSites, type FixSite, type SiteNote } from './patterns.js';
import { goDirectCall } from './strategyA.js';
import { pythonDeferral, pythonDirectCall, pythonModuleOf } from './py-direct-call.js';
import { cDirectCall } from './strategyA-c.js';
import type { TestgenSettings } from './config.js';
import type { LlmProvider } from '../../../pipeline/providers/llm/types.js';
import { llmStrategyA } from './llm-strategy.js';
import { dependencyFault } from '../harness/build-log.js';

/**
 * The first line of a test log that says a dependency could not be obtained, or null: the one
 * classifier of validation and grading (harness/build-log.ts `dependencyFault`, the patterns of
 * the language's toolchain). These are environmental: the test itself was never compiled.
 * @param language the repository's language (`c` reads meson's patterns)
 */
export function dependencyFailure(log: string, language: 'go' | 'c' | 'python'): string | null {
  return dependencyFault(log, language === 'c' ? 'c-meson' : language)?.lines[0] ?? null;
}

/** Check of a generated test at both commits. */
export interface FlipCheck {
  ok: boolean;
  reason: string;
  /** True when the failure is the environment's (dependencies), not the test's. */
  environmental?: boolean;
  parent?: TestRun;
  fix?: TestRun;
}

/** Runs the tests of `patch` at a commit: the swappable executor seam. */
export type TestRunner = (
  gitDir: string,
  commit: string,
  patch: string,
  language: 'go' | 'c' | 'python',
  ids: string[],
  timeoutMs: number,
  signal?: AbortSignal,
  /** Files the mirror lacks that no build or test reads (the instance's `absent_files`). */
  unread?: readonly string[],
  /** Variables added to the allow-listed environment (Go: a filled module cache, go-fallback.ts). */
  env?: Readonly<Record<string, string>>,
) => Promise<TestRun & { applyError: string | null }>;

/**
 * Fills a scratch checkout with what its build needs beyond the commit's own tree before the
 * tests run (C: the meson subprojects its wraps name, c-subprojects.ts).
 * @param dir the scratch checkout of `commit`
 */
export type ScratchPreparer = (
  dir: string,
  gitDir: string,
  commit: string,
  language: 'go' | 'c' | 'python',
) => Promise<void>;

/**
 * A {@link TestRunner} on the host toolchain in a `git archive` scratch copy of the commit,
 * `prepare`d before the test patch goes in.
 */
export function makeHostRunner(prepare?: ScratchPreparer): TestRunner {
  return (gitDir, commit, patch, language, ids, timeoutMs, signal, unread, env) =>
    runInScratch({ gitDir, commit, patch, language, ids, timeoutMs, signal, prepare, unread, env });
}

/** Default {@link TestRunner}: host toolchain in a `git archive` scratch copy, nothing added. */
export const hostRunner: TestRunner = makeHostRunner();

async function runInScratch(o: {
  gitDir: string;
  commit: string;
  patch: string;
  language: 'go' | 'c' | 'python';
  ids: string[];
  timeoutMs: number;
  signal: AbortSignal | undefined;
  prepare: ScratchPreparer | undefined;
  unread: readonly string[] | undefined;
  env: Readonly<Record<string, string>> | undefined;
}): Promise<TestRun & { applyError: string | null }> {
  const { gitDir, commit, patch, language, ids, timeoutMs, signal } = o;
  const dir = await scratchCheckout(gitDir, commit, o.unread);
  try {
    if (o.prepare) await o.prepare(dir, gitDir, commit, language);
    const applyError = await applyPatch(dir, patch);
    if (applyError)
      return {
        statuses: {},
        buildFailed: true,
        exitCode: null,
        log: applyError,
        durationMs: 0,
        applyError,
      };
    return { ...(await runTests(dir, language, ids, timeoutMs, signal, o.env)), applyError: null };
  } finally {
    removeScratch(dir);
  }
}

/**
 * Runs `ids` of `patch` at base_commit (each must fail, the build must succeed) and at
 * merge_commit (each must pass).
 */
export async function checkFlip(
  gitDir: string,
  r: Pick<Resolved, 'base_commit' | 'merge_commit' | 'language' | 'absent_files'>,
  patch: string,
  ids: string[],
  timeoutMs: number,
  runner: TestRunner = hostRunner,
  signal?: AbortSignal,
): Promise<FlipCheck> {
  // a monorepo folder's files the mirror lacks and its build never reads (resolve's absent_files)
  const unread = r.absent_files?.map((f) => f.path);
  const at = (commit: string) =>
    runner(gitDir, commit, patch, r.language, ids, timeoutMs, signal, unread);
  const parent = await at(r.base_commit);
  if (parent.applyError)
    return {
      ok: false,
      reason: `test patch does not apply at base_commit: ${parent.applyError.slice(0, 200)}`,
      parent,
    };
  if (parent.buildFailed) {
    const env = dependencyFailure(parent.log, r.language);
    return {
      ok: false,
      reason: env
        ? `dependencies unavailable at base_commit (${env})`
        : 'does not compile at base_commit',
      environmental: env !== null,
      parent,
    };
  }
  if (parent.ambiguous)
    return {
      ok: false,
      reason: `ambiguous result at base_commit: ${parent.ambiguous.slice(0, 300)}`,
      parent,
    };
  const notFailing = ids.filter((i) => parent.statuses[i] !== 'failed');
  if (notFailing.length > 0)
    return {
      ok: false,
      reason: `does not fail at base_commit (${notFailing.map((i) => `${i}: ${parent.statuses[i]}`).join(', ')})`,
      parent,
    };
  const fix = await at(r.merge_commit);
  if (fix.applyError)
    return {
      ok: false,
      reason: `test patch does not apply at merge_commit: ${fix.applyError.slice(0, 200)}`,
      parent,
      fix,
    };
  if (fix.ambiguous)
    return {
      ok: false,
      reason: `ambiguous result at merge_commit: ${fix.ambiguous.slice(0, 300)}`,
      parent,
      fix,
    };
  const notPassing = ids.filter((i) => fix.statuses[i] !== 'passed');
  if (notPassing.length > 0)
    return {
      ok: false,
      reason: `does not pass at merge_commit (${notPassing.map((i) => `${i}: ${fix.statuses[i]}`).join(', ')})`,
      parent,
      fix,
    };
  return { ok: true, reason: 'fails at base_commit, passes at merge_commit', parent, fix };
}

/** Sync file reader at a commit of a bare or non-bare repository (null when absent). */
export function gitFileReader(gitDir: string, commit: string): (path: string) => string | null {
  const cache = new Map<string, string | null>();
  let listing: Set<string> | undefined;
  return (path) => {
    if (cache.has(path)) return cache.get(path)!;
    listing ??= new Set(
      splitNulPaths(
        execFileSync('git', ['-C', gitDir, 'ls-tree', '-r', '-z', '--name-only', commit], {
          encoding: 'utf8',
          maxBuffer: 256 << 20,
        }),
      ),
    );
    const v = listing.has(path)
      ? execFileSync('git', ['-C', gitDir, 'show', `${commit}:${path}`], {
          encoding: 'utf8',
          maxBuffer: 256 << 20,
        })
      : null;
    cache.set(path, v);
    return v;
  };
}

/** Everything testgen learned about one instance (the TestGen record plus details for artifacts). */
export interface Generation {
  testgen: TestGen;
  sites: FixSite[];
  notes: SiteNote[];
  strategyA: { tried: boolean; reason: string; check?: FlipCheck };
  checkB?: FlipCheck;
  timings: Record<string, number>;
}

const describeSites = (sites: FixSite[]): string => {
  const fns = [...new Set(sites.map((s) => `${s.function} (${s.file})`))];
  const kinds = [...new Set(sites.map((s) => s.pattern.kind.replace('_', ' ')))].join('/');
  const strength = [...new Set(sites.map((s) => s.strength))].sort().join('+');
  return `${sites.length} ${kinds} site(s) (${strength}) in ${fns.join(', ')}`;
};

/**
 * Generates the fail-to-pass test of one instance. A Python Strategy A test whose host check
 * stopped at the fixed module's import ({@link pythonDeferral}) does not decide: the first such
 * test is kept as the B record's `deferred_a` (types.ts `DeferredStrategyA`), decided by
 * `swe5g.validate` in the instance image.
 * @param gitDir repository holding base_commit and merge_commit (the resolve stage's mirror)
 * @param runner where the generated tests run (default: host toolchain in a scratch copy)
 * @param extra `llm`: provider for the optional LLM-written Strategy A (`settings.llm` must be
 *   set too); `signal`: aborts running test commands
 * @throws SkipItem `no_source_change` (no file of the repository's language changed),
 *   `no_fix_pattern` (formatting/rename-only, deletions only, nothing non-vacuous added),
 *   `f2p_does_not_flip` (verify `all`: the B test does not fail at the parent / pass after),
 *   plus the codes of `emit.ts`
 * @throws TelebenchError tier infra for git or toolchain failures, `dependency_unavailable`
 *   (verify `all`: the B test's parent run could not obtain a dependency, harness/build-log.ts)
 */
export async function generateTestGen(
  gitDir: string,
  r: Resolved,
  settings: TestgenSettings,
  runner: TestRunner = hostRunner,
  extra: {
    llm?: LlmProvider;
    signal?: AbortSignal;
    pythonRoots?: string[];
    /** The registry entry's folder (`path`): generated Python tests go under it. */
    moduleDir?: string;
  } = {},
): Promise<Generation> {
  const timings: Record<string, number> = {};
  let t = Date.now();
  const commitText = (() => {
    try {
      return execFileSync(
        'git',
        ['-C', gitDir, 'log', '--format=%B', `${r.base_commit}..${r.merge_commit}`],
        { encoding: 'utf8', maxBuffer: 64 << 20 },
      );
    } catch (err) {
      throw new TelebenchError(
        'git_failed',
        `git log ${r.base_commit}..${r.merge_commit} in ${gitDir} failed: ${(err as Error).message}`,
        { tier: 'infra', cause: err },
      );
    }
  })();
  const text = [
    r.problem_statement,
    r.pr_title,
    r.pr_body,
    r.hints_text,
    ...r.issues.map((i) => `${i.title}\n${i.body}`),
    commitText,
  ].join('\n');
  const spec_refs = specRefs(
    r.problem_statement,
    ...r.issues.map((i) => `${i.title}\n${i.body}`),
    r.pr_title,
    r.pr_body,
    commitText,
  );
  const base = { instance_id: r.instance_id, nf: r.nf, spec_refs };

  const readFix = gitFileReader(gitDir, r.merge_commit);
  const readBase = gitFileReader(gitDir, r.base_commit);
  const diff = readDiff(r.patch, r.instance_id);
  const sites: FixSite[] = [];
  const notes: SiteNote[] = [];
  for (const f of diff) {
    const path = f.newPath ?? f.oldPath;
    if (!path || languageOfPath(path) === null) continue;
    const lang = languageOfPath(path)!;
    if (lang !== r.language && !(r.language === 'c' && lang === 'c')) continue;
    const res = await deriveFixSites({
      file: path,
      language: lang,
      parentSource: f.oldPath ? readBase(f.oldPath) : null,
      fixSource: f.newPath ? readFix(f.newPath) : null,
      addedLines: f.addedLines,
    });
    sites.push(...res.sites);
    notes.push(...res.notes);
  }
  timings.derive_ms = Date.now() - t;

  if (settings.prefer_shipped && r.test_patch.trim() !== '') {
    return {
      testgen: {
        ...base,
        strategy: 'shipped',
        strategy_reason:
          'the PR ships its own test files; validation takes FAIL_TO_PASS from test_patch',
        f2p_test_patch: '',
        FAIL_TO_PASS: [],
        bug_category: bugCategory(r.patch, text, sites),
      },
      sites,
      notes,
      strategyA: { tried: false, reason: 'PR ships tests' },
      timings,
    };
  }
  if (sites.length === 0) {
    const why =
      notes.length > 0
        ? notes.map((n) => `${n.file}${n.function ? ` ${n.function}` : ''}: ${n.note}`).join('; ')
        : `no ${r.language} source file changed`;
    throw new SkipItem(
      notes.length > 0 ? 'no_fix_pattern' : 'no_source_change',
      `${r.instance_id}: no Strategy B fix pattern (${why})`,
      { notes },
    );
  }
  const bug_category = bugCategory(r.patch, text, sites);

  // Strategy A (Go; Python with the fix's crash-triggering input; C in a forked child): the first
  // function whose direct call flips.
  const aReasons: string[] = [];
  let aCheck: FlipCheck | undefined;
  // Python: the first A test the host could not import, for validation to decide in the image
  let deferred: DeferredStrategyA | undefined;
  const aLanguage = r.language === 'go' || r.language === 'python' || r.language === 'c';
  if (settings.strategy_a && aLanguage) {
    t = Date.now();
    const byFn = new Map<string, FixSite[]>();
    for (const s of sites)
      byFn.set(`${s.file}\u0000${s.function}`, [
        ...(byFn.get(`${s.file}\u0000${s.function}`) ?? []),
        s,
      ]);
    for (const group of byFn.values()) {
      const s0 = group[0]!;
      const src = readFix(s0.file) ?? '';
      let path: string;
      let idOf: (testName: string) => string;
      let call;
      let files: GeneratedFile[] | undefined;
      if (r.language === 'c') {
        const c = await cDirectCall(src, group, readFix, readBase);
        call = c;
        path = c.ok ? c.files[0]!.path : '';
        files = c.ok ? c.files : undefined;
        idOf = () => (c.ok ? c.id : '');
      } else if (r.language === 'go') {
        const pkg = goPackageName(src);
        if (!pkg) {
          aReasons.push(`${s0.function}: no package clause`);
          continue;
        }
        call = await goDirectCall(src, pkg, group);
        const dir = posix.dirname(s0.file);
        path = dir === '.' ? 'f2p_call_test.go' : `${dir}/f2p_call_test.go`;
        idOf = (n) => `${goImportPath(dir, readFix)}::${n}`;
      } else {
        // inside the entry's folder, where validation's steps run pytest
        const dir = pythonTestDir((p) => readBase(p) !== null, extra.moduleDir);
        path = dir === '.' ? 'test_f2p_call.py' : `${dir}/test_f2p_call.py`;
        const mod = pythonModuleOf(s0.file, (p) => readFix(p) !== null, extra.pythonRoots);
        call = mod
          ? await pythonDirectCall(src, readBase(s0.file), path, group, mod)
          : { ok: false as const, reason: `${s0.file} is not importable as a module` };
        idOf = (n) => `${path}::${n}`;
      }
      if (!call.ok) {
        aReasons.push(call.reason);
        continue;
      }
      const patch = toGitPatch(
        files ?? [{ path, content: 'content' in call ? call.content : '', before: readBase(path) }],
      );
      const id = idOf(call.testName);
      aCheck = await checkFlip(
        gitDir,
        r,
        patch,
        [id],
        settings.test_timeout_s * 1000,
        runner,
        extra.signal,
      );
      if (aCheck.ok) {
        timings.strategy_a_ms = Date.now() - t;
        return {
          testgen: {
            ...base,
            strategy: 'A',
            strategy_reason:
              'inputs' in call
                ? `A: ${call.function} called ${r.language === 'c' ? 'in a forked child ' : ''}with ${call.inputs} crashes at base_commit and not after the fix`
                : `A: ${call.function} called with nil/zero inputs panics at base_commit and returns after the fix`,
            f2p_test_patch: patch,
            FAIL_TO_PASS: [id],
            bug_category,
          },
          sites,
          notes,
          strategyA: { tried: true, reason: aCheck.reason, check: aCheck },
          timings,
        };
      }
      const importFailure = r.language === 'python' ? pythonDeferral(aCheck) : null;
      if (importFailure && !deferred)
        deferred = {
          f2p_test_patch: patch,
          FAIL_TO_PASS: [id],
          function: call.function,
          inputs: 'inputs' in call ? call.inputs : '',
          host_import_failure: importFailure,
        };
      aReasons.push(
        `direct call of ${call.function} ${importFailure ? `does not import on this runner (${importFailure})` : aCheck.reason}`,
      );
    }
    timings.strategy_a_ms = Date.now() - t;
  } else if (!aLanguage) {
    aReasons.push(`Strategy A is for Go, Python and C; ${r.language} uses Strategy B`);
  } else {
    aReasons.push('Strategy A disabled (swe5g.testgen.strategy_a: false)');
  }
  if (settings.strategy_a && settings.llm && extra.llm) {
    t = Date.now();
    const llm = await llmStrategyA({
      gitDir,
      r,
      sites,
      settings: { ...settings, llm: settings.llm },
      runner,
      provider: extra.llm,
      readFix,
      readBase,
      ...(extra.pythonRoots ? { pythonRoots: extra.pythonRoots } : {}),
      ...(extra.signal ? { signal: extra.signal } : {}),
    });
    timings.strategy_a_llm_ms = Date.now() - t;
    if (llm.ok)
      return {
        testgen: {
          ...base,
          strategy: 'A',
          strategy_reason: llm.reason,
          f2p_test_patch: llm.patch,
          FAIL_TO_PASS: [llm.id],
          bug_category,
        },
        sites,
        notes,
        strategyA: {
          tried: true,
          reason: 'LLM-written test accepted',
          ...(llm.check ? { check: llm.check } : {}),
        },
        timings,
      };
    aReasons.push(llm.reason);
  }

  const gen: GeneratedTests = intentTests(r.language, sites, readFix, readBase, extra.moduleDir);
  const patch = toGitPatch(gen.files);
  let checkB: FlipCheck | undefined;
  if (settings.verify === 'all') {
    t = Date.now();
    checkB = await checkFlip(
      gitDir,
      r,
      patch,
      gen.FAIL_TO_PASS,
      settings.test_timeout_s * 1000,
      runner,
      extra.signal,
    );
    timings.verify_b_ms = Date.now() - t;
    if (!checkB.ok) {
      // a dependency the host cannot supply says nothing of the candidate: failed, retried
      if (checkB.environmental)
        throw new TelebenchError(
          'dependency_unavailable',
          `${r.instance_id}: Strategy B test ${checkB.reason}`,
          {
            tier: 'infra',
            context: { FAIL_TO_PASS: gen.FAIL_TO_PASS, log: checkB.parent?.log.slice(-4000) },
          },
        );
      throw new SkipItem(
        'f2p_does_not_flip',
        `${r.instance_id}: Strategy B test ${checkB.reason}`,
        { FAIL_TO_PASS: gen.FAIL_TO_PASS, log: (checkB.fix ?? checkB.parent)?.log.slice(-4000) },
      );
    }
  }
  return {
    testgen: {
      ...base,
      strategy: 'B',
      strategy_reason: `B: ${describeSites(sites)}; Strategy A not used: ${aReasons.join('; ') || 'no candidate function'}${deferred ? `; the A test of ${deferred.function} is deferred to validation in the instance image` : ''}`,
      f2p_test_patch: patch,
      FAIL_TO_PASS: gen.FAIL_TO_PASS,
      bug_category,
      f2p_strength: sites.every((s) => s.strength === 'control') ? 'control' : 'text',
      ...(deferred ? { deferred_a: deferred } : {}),
    },
    sites,
    notes,
    strategyA: {
      tried: settings.strategy_a && aLanguage,
      reason: aReasons.join('; '),
      ...(aCheck ? { check: aCheck } : {}),
    },
    ...(checkB ? { checkB } : {}),
    timings,
  };
}
