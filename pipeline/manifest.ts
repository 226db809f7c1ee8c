/**
 * The run manifest: what produced a run's results (git SHA of this checkout, configuration hash,
 * package versions, stage versions, Node and platform). Written to
 * `<state>/runs/<run_id>/manifest.json` and into the `runs` table.
 */
import { readFileSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { hashJson } from './hash.js';

/**
 * Root folder of the telebench checkout or installed package (where package.json is): the nearest
 * folder above this module that has a package.json. This module runs from `pipeline/` (sources),
 * `dist/` or `dist/chunks/` (the compiled CLI, scripts/build.mjs), so no fixed depth is right.
 */
export const PROJECT_ROOT = projectRoot(dirname(fileURLToPath(import.meta.url)));

function projectRoot(from: string): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return join(from, '..');
  }
}

/** `git rev-parse HEAD` of the checkout, with `-dirty` when the work tree has changes; null outside git. */
export function gitSha(cwd: string = PROJECT_ROOT): string | null {
  try {
    const sha = execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
    return dirty ? `${sha}-dirty` : sha;
  } catch {
    // Not a git checkout (an installed package): the manifest records null, which says exactly that.
    return null;
  }
}

/** Installed versions of the package's direct dependencies, `{name: version}`. */
export function packageVersions(root: string = PROJECT_ROOT): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    version: string;
    dependencies?: Record<string, string>;
  };
  const out: Record<string, string> = { telebench: pkg.version };
  for (const name of Object.keys(pkg.dependencies ?? {})) {
    const p = join(root, 'node_modules', name, 'package.json');
    out[name] = existsSync(p)
      ? (JSON.parse(readFileSync(p, 'utf8')) as { version: string }).version
      : 'missing';
  }
  return out;
}

export interface RunManifest {
  runId: string;
  pipeline: string;
  startedAt: string;
  argv: string[];
  gitSha: string | null;
  configFile: string;
  configHash: string;
  stageVersions: Record<string, number>;
  packages: Record<string, string>;
  node: string;
  platform: string;
}

/** Builds the manifest of a run. `config` is hashed (canonical JSON, SHA-256); it holds no secrets. */
export function buildManifest(args: {
  runId: string;
  pipeline: string;
  argv: string[];
  configFile: string;
  config: unknown;
  stageVersions: Record<string, number>;
}): RunManifest {
  return {
    runId: args.runId,
    pipeline: args.pipeline,
    startedAt: new Date().toISOString(),
    argv: args.argv,
    gitSha: gitSha(),
    configFile: args.configFile,
    configHash: hashJson(args.config),
    stageVersions: args.stageVersions,
    packages: packageVersions(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
}
