/**
 * `telebench report resilience-eval` with nothing to score names the real cause, never a generic
 * "configure targets": no construction output, an input file that is missing or empty, no target,
 * a target whose server is down (continuation stopped at preflight). Through the real CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, runCli } from '../../fixtures/cli.js';

const row = {
  sample_id: 'ot-lite:teleqna:1',
  sub_benchmark: 'teleqna',
  question: 'Q?',
  choices: ['a', 'b'],
  correct_answer: 'a',
  incorrect_answer: 'b',
  half_reasoning_trace: 'We think b.',
};

describe('report resilience-eval with no instances or no scores', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'telebench-eval-empty-'));
    writeFileSync(join(dir, 'empty.jsonl'), '\n');
    writeFileSync(join(dir, 'one.jsonl'), JSON.stringify(row));
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const config = (name: string, evalSection: string) => {
    const f = join(dir, `${name}.yaml`);
    writeFileSync(
      f,
      `version: 1
resilience:
  prompts_dir: ${join(ROOT, 'config/prompts/resilience')}
resilience_eval:
${evalSection}`,
    );
    return f;
  };
  const report = async (state: string, cfg: string) => {
    const r = await runCli(['--state', state, 'report', 'resilience-eval', '--config', cfg]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('configure `resilience_eval.targets`');
    return r.stdout;
  };
  const run = (state: string, cfg: string) =>
    runCli(['--state', state, 'run', 'resilience-eval', '--config', cfg]);

  it('project source: the construction produced none (before and after a run)', async () => {
    const cfg = config('project', '  input: { source: project }\n  targets: []\n');
    const state = join(dir, 's-project');
    expect(await report(state, cfg)).toContain(
      'No instances to evaluate: the construction has produced none in this state folder',
    );
    const r = await run(state, cfg);
    expect(r.code, r.stderr).toBe(0);
    const md = await report(state, cfg);
    expect(md).toContain('No instances to evaluate: the construction produced none');
    // the HTML page says it too
    const html = readFileSync(join(state, 'reports', 'resilience-eval.html'), 'utf8');
    expect(html).toContain('the construction produced none');
  });

  it('file source: a missing file names the error; an empty file says it holds no rows', async () => {
    const missing = config(
      'missing',
      '  input: { source: file, files: [nope.jsonl] }\n  targets: []\n',
    );
    const s1 = join(dir, 's-missing');
    // the file is checked with the configuration, before any stage runs: a config error (exit 2)
    // naming the key and the file, and the report says nothing was read
    const r1 = await run(s1, missing);
    expect(r1.code).toBe(2);
    expect(r1.stderr).toMatch(/resilience_eval\.input\.files\[0\]: "nope\.jsonl".*does not exist/);
    expect(await report(s1, missing)).toMatch(
      /No instances read yet from the input files nope\.jsonl: run `telebench run resilience-eval`/,
    );
    const empty = config(
      'empty',
      '  input: { source: file, files: [empty.jsonl] }\n  targets: []\n',
    );
    const s2 = join(dir, 's-empty');
    expect((await run(s2, empty)).code).toBe(0);
    expect(await report(s2, empty)).toMatch(
      /No instances to evaluate: the input files .*empty\.jsonl hold no rows\./,
    );
  });

  it('instances but no target; a target whose server is down', async () => {
    const none = config('none', '  input: { source: file, files: [one.jsonl] }\n  targets: []\n');
    const s1 = join(dir, 's-none');
    expect((await run(s1, none)).code).toBe(0);
    expect(await report(s1, none)).toContain(
      '1 instances read from the input files one.jsonl, but no target model is configured',
    );
    const down = config(
      'down',
      `  input: { source: file, files: [one.jsonl] }
  targets:
    - model: target:1b
      llm:
        endpoints: [{ kind: ollama, base_url: http://127.0.0.1:9 }]
`,
    );
    const s2 = join(dir, 's-down');
    expect((await run(s2, down)).code).toBe(3);
    expect(await report(s2, down)).toMatch(
      /1 instances, but no continuation ran: resilience-eval\.continue stopped at preflight: .*127\.0\.0\.1:9/,
    );
  });
});
