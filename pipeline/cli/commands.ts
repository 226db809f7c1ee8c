/**
 * The implementations of the engine's commands (`run`, `show`, `items`, `report`, `config`;
 * `status` is in `status.ts`). `main.ts` declares the commands and imports this module only when one of them runs
 * (a chunk of its own in the compiled bundle), so `telebench --help` does not load the stages,
 * the store or the configuration schema. With `main.ts`, the only part of `pipeline/` that imports
 * `stages/`.
 */
import type { Command } from 'commander';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PROJECT_ROOT } from '../manifest.js';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  registry,
  pipelines,
  appConfigSchema,
  checkConfigPaths,
  checkConfigContents,
  type AppConfig,
} from '../../stages/index.js';
import { didYouMean, keyLine, loadConfigFile } from '../config/load.js';
import { ConfigError } from '../errors.js';
import { EventBus } from '../events.js';
import { runPipeline, selectStages, readContext, type RunResult } from '../runner.js';
import { openState, resolveStateDir, lockState } from '../state.js';
import { buildManifest } from '../manifest.js';
import {
  eventLogWriter,
  interruptedLine,
  jsonLinesRenderer,
  ttyRenderer,
  waitingReporter,
} from './progress.js';
import { statusReport, runReport } from './reports.js';
import { runSummaryLines } from './summary.js';
import { redact } from '../secrets.js';
import { resolveConfigPath, selfCommand, shellQuote } from './main.js';

/**
 * Loads and validates the configuration, including the stage names under `stages:` (a record in
 * the schema, so zod accepts any name).
 * @throws ConfigError (exit 2) naming the file, line, key and, for a stage name, the nearest one
 */
export function loadAppConfig(flag: string | undefined): { file: string; config: AppConfig } {
  const file = resolveConfigPath(flag);
  const config = loadConfigFile(file, appConfigSchema);
  const unknown = Object.keys(config.stages).filter((n) => !registry.has(n));
  if (unknown.length) {
    const known = [...registry.keys()].filter((n) => !n.startsWith('selftest.'));
    throw new ConfigError(
      `invalid configuration in ${file}:\n${unknown
        .map((n) => {
          const line = keyLine(file, ['stages', n]);
          const near = didYouMean(n, [...registry.keys()]);
          return `  ${file}${line ? `:${line}` : ''}: stages.${n}: no stage "${n}"${near ? ` (did you mean "${near}"?)` : ''}; stages: ${known.join(', ')}`;
        })
        .join('\n')}`,
      { file, path: `stages.${unknown[0]}` },
    );
  }
  return { file, config };
}

/**
 * `telebench config check`: the schema, the stage names and the files the config names by relative
 * paths (for the branches it has a section for, or all when it has none).
 * @returns the configuration's absolute path
 * @throws ConfigError (exit 2) for the first kind of problem found, listing every instance of it
 */
export function configCheck(flag: string | undefined): string {
  const { file, config } = loadAppConfig(flag);
  const sections = (['swe5g', 'resilience'] as const).filter((b) => config[b] !== undefined);
  // a file with no branch section runs every branch on defaults, unless it is a selftest one
  const branches: readonly ('swe5g' | 'resilience')[] =
    sections.length || config.selftest ? sections : ['swe5g', 'resilience'];
  // every stage of those branches: each path is checked if one of its readers is among them
  const names = [...registry.keys()].filter((n) =>
    branches.some((b) => n.startsWith(`${b}.`) || n.startsWith(`${b}-`)),
  );
  checkConfigPaths(file, config, names);
  // the registries it names, as a run's first stages read them (file, line, key of a bad value)
  for (const w of checkConfigContents(file, config, names)) process.stderr.write(`warning: ${w}\n`);
  // the editor's schema line of a copied default.yaml names a file that is not beside the copy
  const schema = /\$schema=(\S+)/.exec(readFileSync(file, 'utf8').split('\n', 3).join('\n'))?.[1];
  if (schema && !/^[a-z]+:\/\//i.test(schema) && !existsSync(resolve(dirname(file), schema)))
    process.stderr.write(
      `warning: ${file}: the yaml-language-server $schema=${schema} names ${resolve(dirname(file), schema)}, which does not exist, so editors cannot check this file; point it at ${join(PROJECT_ROOT, 'config', 'telebench.schema.json')}\n`,
    );
  return file;
}

export interface RunFlags {
  config?: string;
  from?: string;
  only?: string;
  retryFailed?: boolean;
  dryRun?: boolean;
  limit?: number;
  state?: string;
  verbose?: boolean;
}

/**
 * What a command built on `run` changes in it (`telebench plan` runs a sample this way): never
 * set by the command line itself.
 */
export interface RunVariant {
  /** The configuration the run uses, made from the file's (recorded in the run's manifest). */
  config?: (config: AppConfig) => AppConfig;
  /** Run only these stages of the pipeline (its order kept; the others' outputs read as stored). */
  stages?: readonly string[];
  /** In a pipe, write no event lines on stdout (the caller prints its own result there). */
  quiet?: boolean;
  /** The words of the command that resumes this run (default `telebench run <pipeline> ...`). */
  resume?: readonly string[];
}

/**
 * `telebench run <pipeline>`: runs (or with `dryRun` plans) the pipeline in the state folder.
 * @param variant what a command built on `run` changes (configuration, stages, output)
 * @returns the exit code (0 done, 1 items failed, 3 a stage stopped at preflight, 130/143 signals)
 * @throws ConfigError (exit 2) for an unknown pipeline or stage, a bad configuration or state folder
 */
export async function runCommand(
  pipelineName: string,
  flags: RunFlags,
  variant: RunVariant = {},
): Promise<number> {
  const loaded = loadAppConfig(flags.config);
  const file = loaded.file;
  const config = variant.config ? variant.config(loaded.config) : loaded.config;
  const named = pipelines.get(pipelineName);
  if (!named) {
    throw new ConfigError(
      `unknown pipeline "${pipelineName}"; available: ${[...pipelines.keys()].join(', ')}`,
    );
  }
  const pipeline = variant.stages
    ? { ...named, stages: named.stages.filter((s) => variant.stages!.includes(s)) }
    : named;
  const order = selectStages(pipeline, registry, { only: flags.only, from: flags.from });
  // the files the config names by relative paths, for the branches that run: all at once, now
  checkConfigPaths(file, config, order);
  const stateDir = resolveStateDir(flags.state);
  const state = openState(stateDir);
  const unlock = flags.dryRun ? () => undefined : lockState(stateDir);
  const runId = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}`;
  const runDir = join(stateDir, 'runs', runId);
  mkdirSync(runDir, { recursive: true });
  const manifest = buildManifest({
    runId,
    pipeline: pipelineName,
    argv: process.argv.slice(2).map((a) => redact(a)),
    configFile: file,
    config,
    stageVersions: Object.fromEntries(order.map((n) => [n, registry.get(n)!.version])),
  });
  writeFileSync(join(runDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  if (!flags.dryRun)
    state.store.startRun(runId, pipelineName, manifest as unknown as Record<string, unknown>);

  const bus = new EventBus();
  const closeLog = eventLogWriter(bus, join(runDir, 'events.jsonl'));
  const tty = process.stderr.isTTY === true && !process.env.CI;
  const closeRender = tty
    ? ttyRenderer(bus)
    : variant.quiet
      ? () => undefined
      : jsonLinesRenderer(bus, process.stdout, flags.verbose);
  const stopWaiting = waitingReporter(
    bus,
    Number(process.env.TELEBENCH_WAITING_EVERY_MS ?? 30_000),
  );

  const controller = new AbortController();
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    signals++;
    if (signals === 1) {
      bus.emit({ kind: 'interrupted', signal: sig });
      // the JSON-lines renderer writes the event to stdout; a person reading stderr gets the words
      if (!tty) process.stderr.write(`${interruptedLine(sig)}\n`);
      controller.abort(sig);
    } else {
      process.stderr.write(
        `second ${sig}: exiting now; items in flight will be re-run on resume\n`,
      );
      process.exit(sig === 'SIGTERM' ? 143 : 130);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const started = Date.now();
  let result: RunResult;
  try {
    const concurrency = Object.fromEntries(
      Object.entries(config.stages).map(([k, v]) => [k, v.concurrency]),
    );
    result = await runPipeline<AppConfig>({
      pipeline,
      registry,
      config,
      configFile: file,
      stateDir,
      store: state.store,
      blobs: state.blobs,
      bus,
      signal: controller.signal,
      runId,
      only: flags.only,
      from: flags.from,
      retryFailed: flags.retryFailed,
      dryRun: flags.dryRun,
      limit: flags.limit,
      concurrency,
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    stopWaiting();
    closeRender();
  }
  bus.emit({ kind: 'run-end', runId, exitCode: result.exitCode, ms: Date.now() - started });
  closeLog();
  if (!flags.dryRun) state.store.endRun(runId, result.exitCode);

  // Summary for the person at the terminal (stderr, so stdout stays JSON lines in a pipe).
  const lines = runSummaryLines(result, order, flags, state.store);
  process.stderr.write(
    `telebench run ${pipelineName} (${runId}) exit ${result.exitCode}\n${lines.join('\n')}\n`,
  );
  if (result.exitCode !== 0) {
    const argv = [...selfCommand(), 'run', pipelineName];
    if (flags.config) argv.push('--config', flags.config);
    if (flags.state) argv.push('--state', flags.state);
    if (flags.only) argv.push('--only', flags.only);
    if (flags.from) argv.push('--from', flags.from);
    if (flags.limit) argv.push('--limit', String(flags.limit));
    const anyFailed = Object.values(result.stages).some(
      (o) => o.status !== 'blocked' && (o.failedInPlan ?? 0) > 0,
    );
    if (anyFailed || flags.retryFailed) argv.push('--retry-failed');
    // with --retry-failed and failing again: the same command alone would fail the same way
    const again = flags.retryFailed && anyFailed;
    const resume = variant.resume ?? argv;
    process.stderr.write(
      `${again ? 'items failed again although this run retried them (--retry-failed, which a refresh sets itself): fix the cause their messages above name before running again; ' : ''}to resume: ${resume.map(shellQuote).join(' ')}\n`,
    );
  }
  unlock();
  state.close();
  return result.exitCode;
}

/**
 * `telebench show <stage> <item-key>`: an item's input, output, error and artifacts as JSON.
 * @throws ConfigError for a stage or item the state folder does not have
 */
export function showCommand(stage: string, key: string, cmd: Command): void {
  const state = openState(resolveStateDir(cmd.optsWithGlobals().state), { mode: 'read' });
  try {
    const item = state.store.item(stage, key);
    if (!item && !state.store.stages().includes(stage)) {
      throw new ConfigError(
        `no stage "${stage}" in ${state.dir}; stages with items: ${state.store.stages().join(', ') || 'none yet'}`,
      );
    }
    if (!item) {
      throw new ConfigError(
        `no item "${key}" in stage "${stage}" (see \`telebench status\` for the stages)`,
      );
    }
    const artifacts = state.store
      .artifacts(stage, key)
      .map((a) => ({ ...a, path: state.blobs.path(a.digest) }));
    // why it failed or was skipped first: below a long input, the message was off the screen
    const { stage: _s, key: _k, state: st, error, skipReason, skipDetail, ...rest } = item;
    const shown = {
      stage,
      key,
      state: st,
      ...(error != null ? { error } : {}),
      ...(skipReason != null ? { skipReason, skipDetail } : {}),
      ...rest,
      artifacts,
    };
    process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
  } finally {
    state.close();
  }
}

/**
 * `telebench items <stage>`: item keys with their state and skip reason or error code.
 * @throws ConfigError for a stage the state folder does not have
 */
export function itemsCommand(
  stage: string,
  flags: { stateFilter?: string; limit?: number },
  cmd: Command,
): void {
  const state = openState(resolveStateDir(cmd.optsWithGlobals().state), { mode: 'read' });
  try {
    if (!state.store.stages().includes(stage)) {
      throw new ConfigError(
        `no stage "${stage}" in ${state.dir}; stages with items: ${state.store.stages().join(', ') || 'none yet'}`,
      );
    }
    let n = 0;
    for (const rec of state.store.items(stage)) {
      if (flags.stateFilter && rec.state !== flags.stateFilter) continue;
      if (flags.limit !== undefined && n >= flags.limit) break;
      const why = rec.skipReason ?? (rec.error ? String(rec.error.code ?? '') : '');
      process.stdout.write(`${rec.key}\t${rec.state}${why ? `\t${why}` : ''}\n`);
      n++;
    }
  } finally {
    state.close();
  }
}

/**
 * `telebench report [target]`: the last run's Markdown report, or a pipeline's report.
 * @throws ConfigError for an unknown target or a bad configuration
 */
export async function reportCommand(
  target: string,
  flags: { config?: string },
  cmd: Command,
): Promise<void> {
  const stateDir = resolveStateDir(cmd.optsWithGlobals().state);
  const state = openState(stateDir, { mode: 'read' });
  try {
    if (target === 'run') {
      process.stdout.write(runReport(state.store, registry, stateDir));
      return;
    }
    const pipeline = pipelines.get(target);
    if (!pipeline)
      throw new ConfigError(
        `unknown report "${target}"; use run or one of: ${[...pipelines.keys()].join(', ')}`,
      );
    if (!pipeline.report) {
      process.stdout.write(statusReport(state.store, registry, false, new Set(pipeline.stages)));
      return;
    }
    const { file, config } = loadAppConfig(flags.config);
    const md = await pipeline.report(
      readContext('report', config, file, stateDir, state, registry),
    );
    process.stdout.write(md.endsWith('\n') ? md : `${md}\n`);
  } finally {
    state.close();
  }
}

/** JSON Schema text (2-space JSON) generated from the zod configuration schema. */
export function configJsonSchema(): string {
  const schema = z.toJSONSchema(appConfigSchema, { io: 'input', unrepresentable: 'any' });
  return `${JSON.stringify(schema, null, 2)}\n`;
}
