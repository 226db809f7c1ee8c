/**
 * `swe5g.testgen`: builds the fail-to-pass test of every Resolved instance (SWE-Bench 5G paper,
 * pipeline step 4, "construct fail-to-pass tests using Strategy A or B") and classifies it (bug
 * category, NF, 3GPP references). The test is stored as `f2p_test_patch`; it is never part of
 * the image a solver sees — `swe5g.validate` applies it.
 */
import { existsSync } from 'node:fs';
import { defineStage } from '../../../pipeline/stage.js';
import { PreflightError, TelebenchError } from '../../../pipeline/errors.js';
import { parserFor } from '../../../pipeline/providers/treesitter/parser.js';
import type { Resolved, TestGen } from '../types.js';
import { swe5gSettings, type HasSwe5g } from '../config.js';
import { mirrorPath } from '../resolve/resolve.js';
import { registryById } from '../registry.js';
import { planPerResolved, sameKeyIn } from '../resolve/plan.js';
import { testgenDefaults, type TestgenSettings } from './config.js';
import { generateTestGen, makeHostRunner } from './generate.js';
import { cSubprojectPreparer } from './c-subprojects.js';
import { cachedRunner } from './run-cache.js';
import { withGoModuleFallback } from './go-fallback.js';
import { configuredMirrorsDir } from '../mine/source.js';
import { createProvider, stageLlmDeps } from '../../../pipeline/providers/llm/config.js';

const settingsOf = (cfg: HasSwe5g): TestgenSettings =>
  swe5gSettings(cfg).testgen ?? testgenDefaults;

/**
 * The stage: plans one item per Resolved instance (key = instance_id) and runs
 * {@link generateTestGen} against the resolve stage's mirror (`<state>/git/<owner>+<name>.git`).
 * Artifacts: `f2p_test_patch`, `testgen_details.json` (sites, notes, timings) and the host logs of
 * the Strategy A / B runs.
 * @throws TelebenchError `mirror_missing` (infra) when the mirror is gone; SkipItem from generateTestGen
 */
export const testgenStage = defineStage<Resolved, TestGen, HasSwe5g>({
  name: 'swe5g.testgen',
  // 3: C guards (truthiness, ogs_assert/ogs_expect_or_return), #if 0 and directive lines not code
  // 4: an assertion does not satisfy an added graceful null check (ogs_assert -> if (!x) return)
  // 5: C files with Open5GS's SWITCH/CASE/END macros parse into their real functions (c-macros.ts)
  // 6: Strategy B null checks are `control` sites (control.ts): the protected uses must be
  //    unreachable for the bad value, no longer a count of the check's text
  // 7: Python Strategy A calls with the fix's crash-triggering input (py-direct-call.ts) and fails
  //    only on the crash it prevents; the LLM-written test for C and Python too (llm-layout.ts)
  // 8: C host checks get the meson subprojects from the mirrors (c-subprojects.ts) and build only
  //    the f2p tests' executables: every Open5GS direct call had read "does not compile"; a C
  //    direct call meets the function's own assertions (c-preconditions.ts)
  // 9: C comparisons the fix adds are control sites when they govern effects (condition.ts): a
  //    no-op `if (C) {}` or the gold with its body emptied no longer passes their test
  // 10: the C checker ends a statement macro without a semicolon at the next statement keyword
  //    (Open5GS `SWITCH(x) CASE(..) .. DEFAULT END if (..)`), a macro with a block is no effect
  // 11: a C statement macro's block is a loop body (a guard does not leave it, as in the
  //    checker); effects are assignments, updates and calls only (Open5GS PRs 3393, 3728)
  // 12: for a condition, assigning the operand in the bad branch is no guard (a clamp that falls
  //    through); a label is a join point in every mode; `false && C` is dead code
  // 13: a text site counts the tests of its condition mirrored, negated and through a one-level
  //    local alias (text-count.ts), and no longer in a dead `if` branch: every state's text tests
  //    (and their parent counts) are generated again
  // 14: a Go host run that the module proxy cannot serve is made again from a module cache filled
  //    through the mirrors folder (go-fallback.ts): Strategy A where it read "dependencies
  //    unavailable" (free5GC main-branch pseudo-versions)
  // 15: a fix site is the pattern's first added occurrence in live code, not in `#if 0` or a dead
  //    `if` (text-count.ts liveChildren, the one rule of the text count and the site search)
  // 16: a go.mod without a `go` directive is built as Go 1.16, not at the toolchain's version
  //    (go-directive.ts: -mod=mod wrote `go 1.26.8` into it; new vet checks failed 2019 Magma)
  // 17: a Python A test whose host check stopped at the module's import is kept as `deferred_a`
  //    beside the B fallback, for swe5g.validate to decide in the instance image (regenerates
  //    every test: B records of such instances gain the field and a longer strategy_reason);
  //    the generated Python tests of a monorepo entry go under its `path`, where validation runs
  //    pytest (they were at the repository root, outside the steps' folder)
  version: 17,
  needs: ['swe5g.resolve'],
  itemNeeds: sameKeyIn('swe5g.resolve'),
  description:
    'Writes the fail-to-pass test of each instance (Strategy A direct call, else B diff intent) and classifies it.',
  concurrency: (cfg) => settingsOf(cfg).concurrency,
  async preflight() {
    for (const lang of ['go', 'c', 'python'] as const) {
      try {
        await parserFor(lang);
      } catch (err) {
        throw new PreflightError(
          'tree-sitter',
          `tree-sitter grammar for ${lang} does not load`,
          'run npm install (web-tree-sitter, tree-sitter-wasms)',
          err,
        );
      }
    }
  },
  plan: (ctx) => planPerResolved(ctx),
  async run(item, ctx) {
    const r = item.input;
    const gitDir = mirrorPath(ctx.stateDir, r.repo);
    if (!existsSync(gitDir)) {
      throw new TelebenchError(
        'mirror_missing',
        `no mirror of ${r.repo} at ${gitDir}; run swe5g.resolve first`,
        {
          tier: 'infra',
          context: { repo: r.repo, gitDir },
        },
      );
    }
    const started = Date.now();
    const settings = settingsOf(ctx.config);
    const llm = settings.llm
      ? ctx.memo('swe5g.testgen.llm', () =>
          createProvider(
            {
              endpoints: settings.llm!.endpoints,
              ...(settings.llm!.fallback ? { fallback: settings.llm!.fallback } : {}),
              cache: settings.llm!.cache,
              prompt_check: settings.llm!.prompt_check,
            },
            stageLlmDeps(ctx),
          ),
        )
      : undefined;
    // the package roots the Python image puts on the path: the generated imports need them too;
    // the entry's folder, where validation runs pytest: the generated tests go under it
    const entry = ctx
      .memo('swe5g.testgen.registry', () => registryById(ctx.config, ctx.configFile))
      .get(r.registry_id);
    const pythonRoots = entry?.environment?.python?.roots ?? [];
    // one runner per run: C checks get the meson subprojects from the mirrors, told once each
    const runner = ctx.memo('swe5g.testgen.runner', () => {
      const s5 = swe5gSettings(ctx.config);
      const host = makeHostRunner(
        cSubprojectPreparer({
          stateDir: ctx.stateDir,
          gitUrlBase: s5.environments.git_url_base,
          mirrorsDir: configuredMirrorsDir(ctx),
          offline: s5.source === 'git',
          onMissing: (m) =>
            ctx.log(
              `meson subproject ${m.directory} (${m.url}) not available to testgen's host build: ${m.reason}; a check fails only if it needs it`,
            ),
        }),
      );
      // a run with the same patch, commit and toolchain made before is read back (run-cache.ts)
      return settings.reuse_host_runs
        ? cachedRunner(host, { kv: ctx.kv, blobs: ctx.blobs }, undefined, (commit) =>
            ctx.log(`host test run at ${commit.slice(0, 12)} read back from an earlier run`),
          )
        : host;
    });
    // a Go run the proxy cannot serve is made again from a cache filled through the mirrors
    const itemRunner = withGoModuleFallback(runner, {
      stateDir: ctx.stateDir,
      mirrorsDir: configuredMirrorsDir(ctx),
      moduleDir: r.registry_id.includes(':') ? r.registry_id.split(':')[1]! : '',
      cgo: entry?.environment?.cgo === true,
      onUnavailable: (commit, why) =>
        ctx.log(`${r.instance_id}: no module cache for ${commit.slice(0, 12)}: ${why}`),
    });
    const gen = await generateTestGen(gitDir, r, settings, itemRunner, {
      signal: ctx.signal,
      pythonRoots,
      // the build's module folder rule (build.ts): the registry id's `:path`
      ...(r.registry_id.includes(':') ? { moduleDir: r.registry_id.split(':')[1]! } : {}),
      ...(llm ? { llm } : {}),
    });
    if (gen.testgen.f2p_test_patch)
      ctx.artifact('f2p_test_patch', gen.testgen.f2p_test_patch, 'text/x-diff');
    ctx.artifact(
      'testgen_details.json',
      JSON.stringify(
        {
          sites: gen.sites.map((s) => ({
            file: s.file,
            function: s.function,
            kind: s.pattern.kind,
            key: s.pattern.key,
            parentCount: s.parentCount,
            fixCount: s.fixCount,
            line: s.line,
            strength: s.strength,
            ...(s.guard ? { guard: s.guard } : {}),
          })),
          notes: gen.notes,
          strategyA: { tried: gen.strategyA.tried, reason: gen.strategyA.reason },
          timings: { ...gen.timings, total_ms: Date.now() - started },
        },
        null,
        1,
      ),
      'application/json',
    );
    for (const [name, run] of [
      ['strategy_a_parent.log', gen.strategyA.check?.parent],
      ['strategy_a_fix.log', gen.strategyA.check?.fix],
      ['strategy_b_parent.log', gen.checkB?.parent],
      ['strategy_b_fix.log', gen.checkB?.fix],
    ] as const) {
      if (run) ctx.artifact(name, run.log, 'text/plain');
    }
    ctx.log(
      `${r.instance_id}: strategy ${gen.testgen.strategy}, ${gen.testgen.FAIL_TO_PASS.length} test(s), ${gen.testgen.bug_category}`,
      { timings: gen.timings },
    );
    return gen.testgen;
  },
});
