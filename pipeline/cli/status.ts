/**
 * `telebench status`, kept apart from the other commands (`commands.ts`) so that it loads only the
 * store: the stages are loaded for `--json` alone (it gives each stage's code version), and the
 * configuration is validated only when it sets the swarm executor (bench/cli-start.bench.ts).
 */
import type { Command } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import { openState, resolveStateDir, runLockHolder } from '../state.js';
import { lastRunNotStarted, statusReport, swarmStatusReport } from './reports.js';
import { resolveConfigPath } from './main.js';

/**
 * `telebench status`: per stage, item counts by state, skip reasons and error codes (Markdown, or
 * JSON with `json`, with each stage's code version); in Markdown, then the stages of the last run
 * that did not start and why; with `swe5g.environments.executor: swarm`,
 * then the tasks per Swarm node. A state folder's status never depends on a valid configuration
 * otherwise.
 * @throws TelebenchError state_unreadable (exit 2) when the state folder cannot be read; with
 *   executor swarm, ConfigError for an invalid configuration and Docker errors
 */
export async function statusCommand(
  flags: { json?: boolean; config?: string },
  cmd: Command,
): Promise<void> {
  const dir = resolveStateDir(cmd.optsWithGlobals().state);
  const registry = flags.json ? (await import('../../stages/index.js')).registry : new Map();
  const state = openState(dir, { mode: 'read' });
  try {
    process.stdout.write(
      statusReport(state.store, registry, flags.json === true, undefined, {
        pid: runLockHolder(dir),
      }) + (flags.json ? '' : lastRunNotStarted(state.store, dir)),
    );
  } finally {
    state.close();
  }
  if (!mayUseSwarm(resolveConfigPath(flags.config))) return;
  const { loadAppConfig } = await import('./commands.js');
  const env = loadAppConfig(flags.config).config.swe5g?.environments;
  if (env?.executor === 'swarm') {
    const { DockerClient } = await import('../providers/docker/client.js');
    const { swarmTasksPerNode } = await import('../providers/docker/swarm.js');
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
}

/**
 * Whether the configuration file may set the swarm executor: a line `executor: swarm` (any
 * indentation or quoting) leads to the full validated load, which decides. Reading the file fails
 * loudly in that load, never here.
 */
function mayUseSwarm(file: string): boolean {
  if (!existsSync(file)) return false;
  try {
    return /^\s*executor\s*:\s*['"]?swarm\b/m.test(readFileSync(file, 'utf8'));
  } catch {
    return true;
  }
}
