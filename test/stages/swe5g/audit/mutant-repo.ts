/**
 * Test helper of the audit's mutant tests (mutants.test.ts, mutants-adversarial.test.ts): a real
 * git repository at a fix's parent, the gold diff, testgen's fix sites and the mutants the audit
 * generates from them. Call {@link removeMutantRepos} in `afterAll`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { deriveFixSites } from '../../../../stages/swe5g/testgen/patterns.js';
import { readDiff } from '../../../../stages/swe5g/testgen/diffinfo.js';
import { generateMutants } from '../../../../stages/swe5g/audit/mutants.js';
import type { SourceLanguage } from '../../../../pipeline/providers/treesitter/parser.js';

const dirs: string[] = [];

/** Folders this helper made (repositories and `scratchDir`s), removed. */
export function removeMutantRepos(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** A temporary folder removed by {@link removeMutantRepos}. */
export function scratchDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

/** `git -C dir ...args` with a fixed identity; stdout. */
export const git = (dir: string, ...args: string[]): string =>
  execFileSync('git', ['-C', dir, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@l',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@l',
    },
  });

/**
 * A repository holding `parent` at `path` (committed, work tree clean); the gold diff to `fix`,
 * its fix sites and the audit's mutants.
 */
export async function mutantsOf(
  path: string,
  language: SourceLanguage,
  parent: string,
  fix: string,
) {
  const dir = scratchDir('telebench-audit-mut-');
  git(dir, 'init', '-q');
  mkdirSync(dirname(join(dir, path)), { recursive: true });
  writeFileSync(join(dir, path), parent);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'parent');
  writeFileSync(join(dir, path), fix);
  const patch = git(dir, 'diff');
  git(dir, 'checkout', '-q', '--', '.');
  const [f] = readDiff(patch, 'x');
  const { sites } = await deriveFixSites({
    file: path,
    language,
    parentSource: parent,
    fixSource: fix,
    addedLines: f!.addedLines,
  });
  const mutants = await generateMutants(
    [{ path, language, parentSource: parent, fixSource: fix }],
    sites,
    patch,
  );
  return { dir, mutants, sites, patch };
}
