/**
 * The action of `telebench plan` (declared in `cli.ts`). In the state folder, one after another:
 *
 * 1. `telebench run swe5g-mine` with the configuration as given: the exact funnel and the kept
 *    candidates (mining the whole registry takes minutes; a mined state takes seconds);
 * 2. a seeded random sample of `--sample` kept candidates per project (`sample.ts`);
 * 3. `telebench run swe5g` from `swe5g.filter` to `--depth` with `swe5g.instances` = the sample
 *    (`selection: replace`): the same items, keys and inputs a full run plans for them, so a later
 *    `telebench run swe5g` finds them done and repeats none of that work; at `--depth audit` the
 *    audit grades the sampled instances without a problem statement too (`include_incomplete`);
 * 4. `swe5g.filter` again with the configuration's own selection, so the state selects what it
 *    selected before the sample (a `selection: add` list keeps growing from there);
 * 5. the sample's outcomes read from the store and projected (`estimate.ts`), printed as a table
 *    or, with `--json`, as JSON on stdout; at `--depth validate`/`audit` with the sample's environments by
 *    project and base-commit year (`../report-environments.ts`, counts of the sample, not
 *    projected).
 */
import type { AppConfig } from '../../index.js';
import { ConfigError } from '../../../pipeline/errors.js';
import { swe5gSettings } from '../config.js';
import type { PlanFlags } from './cli.js';
import { sampleKeys } from './sample.js';
import {
  PLAN_LEVEL,
  SAMPLE_STAGES,
  estimateProject,
  stagesOf,
  type SampleStage,
} from './estimate.js';
import { funnelByProject, keptByProject, notMined, sampledOutcome } from './outcomes.js';
import { planMarkdown, totalOf, type PlanEstimate } from './render.js';
import { environmentReportOf } from '../report-environments.js';

/** The mining stages' funnel and kept candidates, read after step 1. */
interface Mined {
  kept: Map<string, string[]>;
  funnels: ReturnType<typeof funnelByProject>;
  notMined: Record<string, string[]>;
  /** The instance ids the configuration's selection kept (for step 4). */
  selected: string[];
}

const engine = () => import('../../../pipeline/cli/commands.js');

/** A stage context over the state's store (read only), as `telebench report` makes one. */
async function withContext<T>(
  flags: { config?: string; state?: string },
  read: (ctx: import('../../../pipeline/stage.js').StageContext<AppConfig>) => T,
  config?: (c: AppConfig) => AppConfig,
): Promise<T> {
  const { loadAppConfig } = await engine();
  const { registry } = await import('../../index.js');
  const { openState, resolveStateDir } = await import('../../../pipeline/state.js');
  const { readContext } = await import('../../../pipeline/runner.js');
  const { file, config: loaded } = loadAppConfig(flags.config);
  const stateDir = resolveStateDir(flags.state);
  const state = openState(stateDir, { mode: 'read' });
  try {
    const ctx = readContext<AppConfig>(
      'plan',
      config ? config(loaded) : loaded,
      file,
      stateDir,
      state,
      registry,
    );
    return read(ctx);
  } finally {
    state.close();
  }
}

/**
 * The configuration with `swe5g.instances` = `ids`, exactly (`selection: replace`). With
 * `auditAll`, the audit also grades the sampled instances that still lack a problem statement
 * (`include_incomplete`): most fixes mined from git history name no issue, and the estimate asks
 * what their tests are worth before a statement is added.
 */
const selecting =
  (ids: readonly string[], auditAll = false) =>
  (c: AppConfig): AppConfig => {
    const s = swe5gSettings(c);
    return {
      ...c,
      swe5g: {
        ...s,
        instances: [...ids],
        selection: 'replace',
        ...(auditAll ? { audit: { ...s.audit, include_incomplete: true } } : {}),
      },
    };
  };

/** Items at once per stage after mining, as the configuration runs them. */
async function concurrencyOf(config: AppConfig): Promise<Record<SampleStage, number>> {
  const { registry } = await import('../../index.js');
  const out = {} as Record<SampleStage, number>;
  for (const s of SAMPLE_STAGES) {
    const name = `swe5g.${s}`;
    out[s] = config.stages[name]?.concurrency ?? registry.get(name)?.concurrency?.(config) ?? 1;
  }
  return out;
}

/**
 * Runs `telebench plan` (the steps are in the module comment).
 * @returns the exit code: 0 with the estimate printed (items lost or failed in the sample are
 *   part of it), 3 when a stage stopped at preflight (e.g. no Docker engine at `--depth
 *   validate`), 130/143 when interrupted
 * @throws ConfigError (exit 2) when no candidate is kept, a project has fewer kept candidates than
 *   `--sample`, or the configuration is bad (what `telebench run` throws)
 */
export async function planCommand(flags: PlanFlags & { state?: string }): Promise<number> {
  const { runCommand } = await engine();
  const { selfCommand } = await import('../../../pipeline/cli/main.js');
  const base = { config: flags.config, state: flags.state };
  const resume = { resume: [...selfCommand(), ...process.argv.slice(2)], quiet: true };
  const mineCode = await runCommand('swe5g-mine', base, resume);
  if (mineCode > 1) return mineCode;
  const mined = await withContext<Mined>(base, (ctx) => ({
    kept: keptByProject(ctx.store),
    funnels: funnelByProject(ctx),
    notMined: notMined(ctx.store),
    selected: [...ctx.store.items('swe5g.filter')]
      .filter((r) => (r.input as { selected?: boolean }).selected === true)
      .map((r) => r.key),
  }));
  const population = [...mined.kept.values()].reduce((s, k) => s + k.length, 0);
  if (population === 0)
    throw new ConfigError(
      `no kept candidate to sample: mining kept none (mined ${[...mined.funnels.values()].reduce((s, f) => s + f.mined, 0)} PRs${
        Object.keys(mined.notMined).length
          ? `; not mined: ${Object.entries(mined.notMined)
              .map(([w, k]) => `${w} ${k.join(', ')}`)
              .join('; ')}`
          : ''
      }); see \`telebench report swe5g-mine\``,
    );
  const samples = new Map(
    [...mined.kept].map(([p, keys]) => [p, sampleKeys(keys, flags.sample, flags.seed, p)]),
  );
  const stages = stagesOf(flags.depth);
  if (
    stages.includes('audit') &&
    !(await withContext(base, (ctx) => swe5gSettings(ctx.config).audit.enabled))
  )
    throw new ConfigError(
      '--depth audit: the configuration turns the audit off (swe5g.audit.enabled: false), so its run would release every validated instance: give --depth validate instead',
    );
  const ids = [...samples.values()].flat();
  const sampleCode = await runCommand('swe5g', base, {
    ...resume,
    config: selecting(ids, stages.includes('audit')),
    stages: ['swe5g.filter', ...stages.map((s) => `swe5g.${s}`)],
  });
  if (sampleCode > 1) return sampleCode;
  // the configuration's own selection again (step 4): unchanged when it lists no instances
  const own = await withContext(base, (ctx) => ctx.config.swe5g?.instances);
  const restoreCode = await runCommand(
    'swe5g-mine',
    { ...base, only: 'swe5g.filter' },
    { ...resume, ...(own ? { config: selecting(mined.selected) } : {}) },
  );
  if (restoreCode > 1) return restoreCode;
  const concurrency = await concurrencyOf(await withContext(base, (ctx) => ctx.config));
  const estimate = await withContext(base, (ctx) => {
    const projects = [...mined.funnels.values()].map((funnel) =>
      estimateProject({
        funnel,
        sample: (samples.get(funnel.project) ?? []).map((k) =>
          sampledOutcome(ctx.store, k, stages),
        ),
        depth: flags.depth,
        concurrency,
      }),
    );
    const e: PlanEstimate = {
      level: PLAN_LEVEL,
      depth: flags.depth,
      sample_size: flags.sample,
      seed: flags.seed,
      concurrency: Object.fromEntries(stages.map((s) => [s, concurrency[s]])),
      projects,
      total: totalOf(projects),
      not_mined: mined.notMined,
      // the sample's environments by project and base-commit year (the build stage ran)
      ...(stages.includes('build') ? { environments: environmentReportOf(ctx, new Set(ids)) } : {}),
    };
    return e;
  });
  process.stdout.write(
    flags.json ? `${JSON.stringify(estimate, null, 2)}\n` : planMarkdown(estimate),
  );
  return 0;
}
