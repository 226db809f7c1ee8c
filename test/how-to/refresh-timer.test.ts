/**
 * The monthly-timer examples of docs/how-to/refresh-a-release.md keep refresh's exit code (issue
 * msgs: the GitHub Actions step piped `refresh ... | tee refresh.out` under GitHub's default
 * `bash -e {0}`, so exit 1 and 3 were lost to tee's 0). Every workflow step whose command has a
 * pipe runs with pipefail (`shell: bash`, which GitHub runs as `bash --noprofile --norc -eo
 * pipefail {0}`, or `set -o pipefail` in the script); the cron line has no pipe. The premise is
 * shown with a real bash: the default shell loses the code, `shell: bash`'s keeps it.
 */
import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT } from '../fixtures/cli.js';

const HOWTO = readFileSync(join(ROOT, 'docs', 'how-to', 'refresh-a-release.md'), 'utf8');

/** The first fenced block of `lang` after `heading` in the how-to. */
function block(heading: string, lang: string): string {
  const after = HOWTO.slice(HOWTO.indexOf(heading));
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(after);
  if (!m) throw new Error(`no \`\`\`${lang} block after ${heading}`);
  return m[1]!;
}

/** A shell command with a pipe (`a | b`, not `a || b`). */
const piped = (cmd: string): boolean => /(^|[^|])\|(?!\|)/.test(cmd);

interface Step {
  run?: string;
  shell?: string;
}

/** Steps whose piped command would lose the first command's exit code. */
function lossySteps(workflow: string): string[] {
  const jobs = (parse(workflow) as { jobs: Record<string, { steps: Step[] }> }).jobs;
  return Object.values(jobs)
    .flatMap((j) => j.steps)
    .filter((s) => s.run && piped(s.run) && s.shell !== 'bash' && !/set -o pipefail/.test(s.run))
    .map((s) => s.run!);
}

describe('the monthly timer of refresh-a-release.md', () => {
  it('every piped workflow step runs with pipefail; the cron line has no pipe', () => {
    const workflow = block('GitHub Actions', 'yaml');
    expect(lossySteps(workflow)).toEqual([]);
    expect(workflow).toContain('| tee refresh.out'); // the step this is about is still there
    // the same step without `shell: bash` is caught
    expect(lossySteps(workflow.replace(/^\s+shell: bash\n/m, ''))).toEqual([
      expect.stringContaining('| tee refresh.out'),
    ]);
    expect(piped(block('## A monthly timer', 'cron'))).toBe(false);
    expect(piped('a || b')).toBe(false);
  });

  it("GitHub's default shell loses a piped exit 3; shell: bash keeps it (real bash)", () => {
    const script = '(exit 3) | tee /dev/null; echo after';
    const byDefault = spawnSync('bash', ['-e', '-c', script], { encoding: 'utf8' });
    const withBash = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], {
      encoding: 'utf8',
    });
    expect([byDefault.status, byDefault.stdout]).toEqual([0, 'after\n']);
    expect([withBash.status, withBash.stdout]).toEqual([3, '']);
  });
});
