/**
 * Issue 31, "A walk that proves it is whole": the history walk of a mirror counts the commits it
 * read against `git rev-list --count`. A git whose `log` output is cut short (a real git process
 * behind a wrapper that truncates its stdout, the shape of the short read seen on a loaded machine)
 * fails the walk with both counts instead of mining fewer PRs; the real git reads every commit.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { mineMirror, parseWalk, utcIso } from '../../../../pipeline/providers/git/mirror-source.js';
import { TelebenchError } from '../../../../pipeline/errors.js';

let root: string;
let mirror: string;
let n = 0;
const COMMITS = 40;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      // committers in two time zones: the mined dates must still be UTC
      GIT_COMMITTER_DATE: `2024-03-01T${String(10 + (n % 9)).padStart(2, '0')}:00:00${Math.floor(n / 2) % 2 ? '+08:00' : '-07:00'}`,
      PATH: process.env.PATH,
      HOME: root,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'Dev',
      GIT_AUTHOR_EMAIL: 'dev@example.org',
      GIT_COMMITTER_NAME: 'Dev',
      GIT_COMMITTER_EMAIL: 'dev@example.org',
    },
  }).trim();
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-walk-'));
  const work = join(root, 'work');
  git(root, 'init', '-q', '-b', 'main', work);
  for (let i = 0; i < COMMITS; i++) {
    writeFileSync(join(work, 'f.go'), `package f\n\nconst N = ${i}\n`);
    git(work, 'add', '-A');
    n = i;
    git(
      work,
      'commit',
      '-q',
      '-m',
      `change ${i} (#${i + 1})\n\nA body line that makes the record longer.`,
    );
  }
  mirror = join(root, 'mirror.git');
  git(root, 'clone', '-q', '--mirror', work, mirror);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Runs `fn` with a `git` first on PATH that cuts the stdout of `git log` to `bytes` bytes. */
async function withShortLog<T>(bytes: number, fn: () => Promise<T>): Promise<T> {
  const bin = join(root, 'bin');
  execFileSync('mkdir', ['-p', bin]);
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(
    join(bin, 'git'),
    `#!/bin/sh\nfor a in "$@"; do if [ "$a" = log ]; then "${real}" "$@" | head -c ${bytes}; exit 0; fi; done\nexec "${real}" "$@"\n`,
  );
  chmodSync(join(bin, 'git'), 0o755);
  const saved = process.env.PATH;
  process.env.PATH = `${bin}:${saved}`;
  try {
    return await fn();
  } finally {
    process.env.PATH = saved;
  }
}

describe('the history walk is whole or fails', () => {
  it('reads every commit of the mirror with the real git', async () => {
    const r = await mineMirror(mirror, { branch: 'main', issuesElsewhere: false });
    expect(Number(git(mirror, 'rev-list', '--count', 'main'))).toBe(COMMITS);
    expect(r.stats.commits_scanned).toBe(COMMITS);
  });

  it('gives every date in UTC, whatever the committer offset', () => {
    expect(utcIso('2024-03-01T18:00:00+08:00')).toBe('2024-03-01T10:00:00Z');
    expect(utcIso('2024-03-01T03:00:00-07:00')).toBe('2024-03-01T10:00:00Z');
    expect(utcIso('not a date')).toBe('not a date');
    const raw = execFileSync(
      'git',
      ['log', '-z', '--format=%H%x1f%P%x1f%an%x1f%aI%x1f%cI%x1f%B', 'main', '--'],
      { cwd: mirror, encoding: 'utf8' },
    );
    expect(raw).toMatch(/\+08:00/);
    const commits = parseWalk(raw);
    for (const c of commits) expect(c.committed_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(new Set(commits.map((c) => c.committed_at)).size).toBeGreaterThan(2);
  });

  it('fails with both counts when git log comes back short, never a smaller result', async () => {
    const err = await withShortLog(1500, () =>
      mineMirror(mirror, { branch: 'main', issuesElsewhere: false }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TelebenchError);
    const e = err as TelebenchError;
    expect(e.code).toBe('git_walk_short');
    expect(e.tier).toBe('transient');
    expect(e.context).toMatchObject({ expected: COMMITS });
    expect((e.context as { read: number }).read).toBeLessThan(COMMITS);
    expect(e.message).toMatch(new RegExp(`read \\d+ commits where git counts ${COMMITS}`));
  });

  it('parses a record cut in its fields as no commit (the count check then catches it)', () => {
    const raw = execFileSync(
      'git',
      ['log', '-z', '--format=%H%x1f%P%x1f%an%x1f%aI%x1f%cI%x1f%B', 'main', '--'],
      { cwd: mirror, encoding: 'utf8' },
    );
    expect(parseWalk(raw)).toHaveLength(COMMITS);
    const cut = raw.slice(0, raw.indexOf('\0', raw.indexOf('\0') + 1) + 50);
    expect(parseWalk(cut).length).toBe(2);
  });
});
