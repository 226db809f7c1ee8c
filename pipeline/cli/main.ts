/**
 * The `telebench` command line (commander, why: the standard Node argument parser with
 * subcommands, help and typed options). This file is the composition root: it is the only part of
 * `pipeline/` that imports `stages/`.
 *
 * Exit codes: 0 all done, 1 some items failed, 2 usage or configuration error, 3 a stage stopped at
 * preflight, 130 SIGINT, 143 SIGTERM.
 */
import { Command, CommanderError } from 'commander';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  registry,
  pipelines,
  appConfigSchema,
  commands,
  type AppConfig,
} from '../../stages/index.js';
import { loadConfigFile } from '../config/load.js';
import { ConfigError, TelebenchError } from '../errors.js';
import { EventBus } from '../events.js';
import { runPipeline, selectStages, type RunResult } from '../runner.js';
import { openState, resolveStateDir, lockState, runLockHolder } from '../state.js';
import { buildManifest, PROJECT_ROOT } from '../manifest.js';
import { eventLogWriter, jsonLinesRenderer, ttyRenderer, waitingReporter } from './progress.js';
import { statusReport, runReport, swarmStatusReport } from './reports.js';
import { DockerClient } from '../providers/docker/client.js';
import { swarmTasksPerNode } from '../providers/docker/swarm.js';
import { redact } from '../secrets.js';
import { addServeModelCommand } from './serve-model.js';

/** Resolves `--config` (default `config/default.yaml` in the current folder, else in the checkout). */
export function resolveConfigPath(flag: string | undefined): string {
  if (flag) return resolve(flag);
  const local = resolve('config/default.yaml');
  return existsSync(local) ? local : join(PROJECT_ROOT, 'config', 'default.yaml');
}

/** Loads and validates the configuration. @throws ConfigError (exit 2) */
export function loadAppConfig(flag: string | undefined): { file: string; config: AppConfig } {
  const file = resolveConfigPath(flag);
  return { file, config: loadConfigFile(file, appConfigSchema) };
}

const intArg =
  (name: string) =>
  (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1)
      throw new ConfigError(`${name} expects a whole number of at least 1, got "${v}"`);
    return n;
  };

/**
 * The words that start this CLI the way it was started, for hints a person copies: `npx telebench`
 * when started through a package's `node_modules/.bin/telebench` link (npx, npm exec), `telebench`
 * through a `telebench` link elsewhere (a global install on PATH), else `node <script>` with the
 * script path relative to the current folder when inside it (`node bin/telebench.js` in a
 * checkout, as `make run` starts it). The environment is not used: npm's variables are inherited
 * by every process a script starts.
 */
export function selfCommand(
  argv1: string | undefined = process.argv[1],
  cwd: string = process.cwd(),
): string[] {
  if (!argv1) return ['telebench'];
  if (basename(argv1) === 'telebench')
    return /node_modules[\\/]\.bin$/.test(dirname(argv1)) ? ['npx', 'telebench'] : ['telebench'];
  const rel = relative(cwd, argv1);
  return ['node', rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : argv1];
}

function shellQuote(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

interface RunFlags {
  config?: string;
  from?: string;
  only?: string;
  retryFailed?: boolean;
  dryRun?: boolean;
  limit?: number;
  state?: string;
  verbose?: boolean;
}

async function runCommand(pipelineName: string, flags: RunFlags): Promise<number> {
  const { file, config } = loadAppConfig(flags.config);
  const pipeline = pipelines.get(pipelineName);
  if (!pipeline) {
    throw new ConfigError(
      `unknown pipeline "${pipelineName}"; available: ${[...pipelines.keys()].join(', ')}`,
    );
  }
  const order = selectStages(pipeline, registry, { only: flags.only, from: flags.from });
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
  const lines: string[] = [];
  for (const name of order) {
    const o = result.stages[name];
    if (!o) continue;
    if (o.status === 'blocked') {
      lines.push(`  ${name}: stopped — ${o.reason}${o.hint ? `\n      -> ${o.hint}` : ''}`);
    } else {
      const c = Object.entries(o.counts)
        .filter(([k]) => k !== 'total')
        .map(([k, v]) => `${v} ${k}`)
        .join(', ');
      lines.push(
        `  ${name}: ${o.status}${flags.dryRun ? ` (dry run: ${o.status === 'completed' ? (o.wouldRun ?? 0) : 0} would run)` : ''} — ${c || 'no items'}`,
      );
    }
  }
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
      (o) => o.status !== 'blocked' && (o.counts.failed ?? 0) > 0,
    );
    if (anyFailed || flags.retryFailed) argv.push('--retry-failed');
    process.stderr.write(`to resume: ${argv.map(shellQuote).join(' ')}\n`);
  }
  unlock();
  state.close();
  return result.exitCode;
}

/**
 * Builds the commander program with every command (the engine's and those in `stages/index.ts`'s
 * `commands`). Its actions throw ConfigError (exit 2) and PreflightError (exit 3), which
 * {@link main} turns into exit codes; usage errors surface as CommanderError (exit 2).
 */
export function buildProgram(): Command {
  const program = new Command();
  program
    .name('telebench')
    .description(
      'Builds and releases benchmark datasets for AI in telecommunications (SWE-Bench 5G, TeleResilienceBench).',
    )
    .option(
      '--state <dir>',
      'state directory (state.db, blobs, runs, releases); default $TELEBENCH_HOME or ./cache',
    )
    .showHelpAfterError()
    .exitOverride();

  program
    .command('run')
    .description('run a pipeline (resumable: a second run does only what is not done yet)')
    .argument('<pipeline>', `one of: ${[...pipelines.keys()].join(', ')}`)
    .option('--config <file>', 'configuration file (default config/default.yaml)')
    .option('--from <stage>', 'run this stage and every stage after it')
    .option('--only <stage>', 'run only this stage')
    .option('--retry-failed', 'run failed items again')
    .option('--dry-run', 'plan every stage and print what would run; change nothing')
    .option('--limit <n>', 'at most N items per stage', intArg('--limit'))
    .option('--verbose', 'in a pipe, print every item event')
    .action(async (name: string, flags: RunFlags, cmd: Command) => {
      process.exitCode = await runCommand(name, { ...flags, state: cmd.optsWithGlobals().state });
    });

  program
    .command('status')
    .description(
      'per stage: item counts by state, skip reasons and error codes; with executor swarm, the tasks per node',
    )
    .option('--json', 'print JSON')
    .option('--config <file>', 'configuration file (default config/default.yaml)')
    .action(async (flags: { json?: boolean; config?: string }, cmd: Command) => {
      const dir = resolveStateDir(cmd.optsWithGlobals().state);
      const state = openState(dir, { mode: 'read' });
      try {
        process.stdout.write(
          statusReport(state.store, registry, flags.json === true, undefined, {
            pid: runLockHolder(dir),
          }),
        );
      } finally {
        state.close();
      }
      const env = loadAppConfig(flags.config).config.swe5g?.environments;
      if (env?.executor === 'swarm') {
        process.stdout.write(
          swarmStatusReport(
            await swarmTasksPerNode(new DockerClient(), {
              cpus: env.limits.cpus,
              memory: env.limits.memory_mib * 2 ** 20,
            }),
            flags.json === true,
          ),
        );
      }
    });

  program
    .command('show')
    .description("an item's input, output, error and artifacts")
    .argument('<stage>')
    .argument('<item-key>')
    .action((stage: string, key: string, _flags: unknown, cmd: Command) => {
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
        process.stdout.write(`${JSON.stringify({ ...item, artifacts }, null, 2)}\n`);
      } finally {
        state.close();
      }
    });

  program
    .command('items')
    .description("a stage's item keys with their state and skip reason or error code")
    .argument('<stage>')
    .option(
      '--state-filter <state>',
      'only items in this state (done, skipped, failed, pending, ...)',
    )
    .option('--limit <n>', 'at most N items', intArg('--limit'))
    .action((stage: string, flags: { stateFilter?: string; limit?: number }, cmd: Command) => {
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
    });

  program
    .command('report')
    .description('Markdown report: `run` (the last run, default) or a pipeline name')
    .argument('[target]', 'run, or a pipeline name', 'run')
    .option('--config <file>', 'configuration file (default config/default.yaml)')
    .action(async (target: string, flags: { config?: string }, cmd: Command) => {
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
          process.stdout.write(
            statusReport(state.store, registry, false, new Set(pipeline.stages)),
          );
          return;
        }
        const { file, config } = loadAppConfig(flags.config);
        const memo = new Map<string, unknown>();
        const md = await pipeline.report({
          config,
          configFile: file,
          stateDir,
          runId: 'report',
          store: {
            outputs: (s) => state.store.doneOutputs(s, registry.get(s)?.version ?? -1),
            item: (s, k) => state.store.item(s, k),
            items: (s) => state.store.items(s),
          },
          kv: state.store,
          blobs: state.blobs,
          signal: new AbortController().signal,
          emit: () => undefined,
          log: (m) => process.stderr.write(`${m}\n`),
          memo: <T>(k: string, make: () => T): T => {
            if (!memo.has(k)) memo.set(k, make());
            return memo.get(k) as T;
          },
        });
        process.stdout.write(md.endsWith('\n') ? md : `${md}\n`);
      } finally {
        state.close();
      }
    });

  const configCmd = program.command('config').description('configuration helpers');
  configCmd
    .command('check')
    .description('validate a configuration file')
    .option('--config <file>', 'configuration file (default config/default.yaml)')
    .action((flags: { config?: string }) => {
      const { file } = loadAppConfig(flags.config);
      process.stdout.write(`${file}: valid\n`);
    });
  configCmd
    .command('schema')
    .description('write the JSON Schema of the configuration (for editors)')
    .option('--out <file>', 'output file', join(PROJECT_ROOT, 'config', 'telebench.schema.json'))
    .action((flags: { out: string }) => {
      writeFileSync(flags.out, configJsonSchema());
      process.stdout.write(`wrote ${flags.out}\n`);
    });

  addServeModelCommand(program);
  for (const add of commands) add(program);
  return program;
}

/** JSON Schema text (2-space JSON) generated from the zod configuration schema. */
export function configJsonSchema(): string {
  const schema = z.toJSONSchema(appConfigSchema, { io: 'input', unrepresentable: 'any' });
  return `${JSON.stringify(schema, null, 2)}\n`;
}

/**
 * Runs the CLI with `argv` (without node and script). Never throws: prints the error and returns
 * the exit code.
 */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (
        err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.version' ||
        err.code === 'commander.help'
      )
        return 0;
      return 2;
    }
    if (err instanceof TelebenchError && (err.tier === 'config' || err.tier === 'preflight')) {
      process.stderr.write(`telebench: ${redact(err.message)}\n`);
      return err.tier === 'config' ? 2 : 3;
    }
    // One rule for every command: an outside service that cannot be reached or is unavailable
    // right now (tiers transient and rate-limit, after the provider's own retries) is a missing
    // outside service, exit 3, as when a stage stops at preflight.
    if (err instanceof TelebenchError && (err.tier === 'transient' || err.tier === 'rate-limit')) {
      process.stderr.write(
        `telebench: ${redact(err.message)} [${err.code}]\n  -> an outside service is not reachable or not available; run the command again when it is\n`,
      );
      return 3;
    }
    const e = err as Error;
    process.stderr.write(`telebench: internal error: ${redact(e.stack ?? String(e))}\n`);
    return 1;
  }
}
