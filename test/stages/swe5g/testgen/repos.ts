/**
 * Real git repositories built by the testgen tests: a base commit, the fix commit, and extra
 * "fake fix" commits branched off the base. `resolvedOf` builds the Resolved record by hand
 * (contract: a test may build a Candidate itself).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Resolved } from '../../../../stages/swe5g/types.js';

export interface BuiltRepo {
  dir: string;
  base: string;
  commit(files: Record<string, string | null>, message: string, from?: string): string;
  diff(from: string, to: string): string;
  cleanup(): void;
}

const git = (dir: string, ...args: string[]): string =>
  execFileSync('git', ['-C', dir, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.org',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.org',
      GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
      GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
    },
  }).trim();

/** Creates a repository whose first commit holds `files`. */
export function buildRepo(files: Record<string, string>): BuiltRepo {
  const dir = mkdtempSync(join(tmpdir(), 'telebench-testgen-repo-'));
  git(dir, 'init', '-q', '-b', 'main');
  const write = (fs: Record<string, string | null>): void => {
    for (const [p, c] of Object.entries(fs)) {
      if (c === null) rmSync(join(dir, p), { force: true });
      else {
        mkdirSync(dirname(join(dir, p)), { recursive: true });
        writeFileSync(join(dir, p), c);
      }
    }
  };
  write(files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'base');
  const base = git(dir, 'rev-parse', 'HEAD');
  return {
    dir,
    base,
    commit(fs, message, from = base) {
      git(dir, 'checkout', '-q', '--detach', from);
      write(fs);
      git(dir, 'add', '-A');
      git(dir, 'commit', '-q', '--allow-empty', '-m', message);
      return git(dir, 'rev-parse', 'HEAD');
    },
    diff: (from, to) => execFileSync('git', ['-C', dir, 'diff', from, to], { encoding: 'utf8' }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A Resolved record for `base..fix` of a built repository. */
export function resolvedOf(
  repo: BuiltRepo,
  fix: string,
  language: 'go' | 'c' | 'python',
  over: Partial<Resolved> = {},
): Resolved {
  return {
    instance_id: `test__${language}-1`,
    alias: `${language}_pr1`,
    repo: `test/${language}`,
    registry_id: `test/${language}`,
    language,
    nf: 'AMF',
    license: 'Apache-2.0',
    pr_number: 1,
    merge_commit: fix,
    base_commit: repo.base,
    pr_head: null,
    issues: [],
    pr_title: 'fix crash',
    pr_body: '',
    changed_files: [],
    created_at: '2024-01-01T00:00:00Z',
    merged_at: '2024-01-01T00:00:00Z',
    problem_statement: 'The NF crashes with a nil pointer dereference (see TS 29.518 section 6.1).',
    hints_text: '',
    source: 'git',
    incomplete: false,
    links: [],
    patch: repo.diff(repo.base, fix),
    test_patch: '',
    environment_setup_commit: repo.base,
    version: '1.21',
    test_dirs: [],
    ...over,
  };
}
