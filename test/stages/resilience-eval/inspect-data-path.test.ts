/**
 * The Inspect task's relative paths (inspect/teleresiliencebench/teleresiliencebench.py): Inspect
 * changes into the task file's folder while it builds the task, so `-T data=<relative>` and
 * `-T prompts_dir=<relative>` are read against the folder `inspect eval` ran from ($PWD, as a
 * shell sets it), not `inspect/teleresiliencebench/`. Real `inspect eval` (cache/inspect-venv)
 * with Inspect's own `mockllm/model`, one sample (`--limit 1`); a missing path names both
 * folders tried.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ROOT } from '../../fixtures/cli.js';
import { INSPECT_BIN } from '../../fixtures/inspect-ai.js';

const row = (id: number) =>
  JSON.stringify({
    sample_id: `ot-lite:teleqna:${id}`,
    sub_benchmark: 'teleqna',
    question: 'Which timer supervises RRC connection establishment?',
    choices: ['T300', 'T301', 'T310'],
    correct_answer: 'T300',
    incorrect_answer: 'T301',
    half_reasoning_trace: 'The procedure looks like re-establishment.',
  });

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tb-inspect-path-'));
  // a release folder and a lone instances file, both below the user's folder
  mkdirSync(join(dir, 'rel/data/teleqna'), { recursive: true });
  writeFileSync(join(dir, 'rel/data/teleqna/test.jsonl'), `${row(1)}\n${row(2)}\n`);
  writeFileSync(join(dir, 'one.jsonl'), `${row(3)}\n`);
  cpSync(join(ROOT, 'config/prompts/resilience'), join(dir, 'prompts'), { recursive: true });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `inspect eval` run from `dir` (PWD set, as a shell does), logs in its default `logs/`. */
function inspectEval(...taskArgs: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, PWD: dir };
  delete env.INSPECT_LOG_DIR;
  const task = relative(dir, join(ROOT, 'inspect/teleresiliencebench/teleresiliencebench.py'));
  return spawnSync(
    INSPECT_BIN,
    ['eval', task, ...taskArgs, '--model', 'mockllm/model', '--limit', '1', '--display', 'none'],
    { cwd: dir, env, encoding: 'utf8', timeout: 1_800_000 },
  );
}

describe('the Inspect task reads relative paths against the folder it was run from', () => {
  it('a relative release folder, instances file and prompts_dir are found; logs/ is here', () => {
    expect(existsSync(INSPECT_BIN), `${INSPECT_BIN}: run node scripts/setup.mjs`).toBe(true);
    for (const args of [
      ['-T', 'data=rel'],
      ['-T', 'data=./one.jsonl', '-T', 'prompts_dir=prompts'],
    ]) {
      const r = inspectEval(...args);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    }
    expect(readdirSync(join(dir, 'logs')).filter((f) => f.endsWith('.eval'))).toHaveLength(2);
  });

  it('a missing relative path names both folders tried', () => {
    for (const [arg, what, value] of [
      ['data=rel/nope.jsonl', 'data', 'rel/nope.jsonl'],
      ['prompts_dir=no-prompts', 'prompts_dir', 'no-prompts'],
    ] as const) {
      const r = inspectEval('-T', 'data=rel', '-T', arg);
      expect(r.status).not.toBe(0);
      const msg = r.stderr.replace(/\s+/g, ' ');
      expect(msg).toContain(`${what} '${value}': no such file or folder`);
      expect(msg).toContain(join(dir, value));
      expect(msg).toContain(join(ROOT, 'inspect/teleresiliencebench', value));
    }
  });
});
