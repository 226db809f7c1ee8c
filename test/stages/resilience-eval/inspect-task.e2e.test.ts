/**
 * TeleResilienceBench where telecom evaluations already run: the shipped Inspect AI task
 * (inspect/teleresiliencebench/, inspect-ai from PyPI in cache/inspect-venv, which
 * `node scripts/setup.mjs` installs) on a release this test builds like the README's first run
 * (SmolLM2 on 12 srsRANBench rows, released) plus two published TeleMath instances, with
 * SmolLM2 served by `telebench serve-model` through Inspect's default `openai/` provider (the
 * Responses API). Then `telebench resilience-eval` on the same instances against the same server.
 *
 * - the Inspect prompt of every sample is telebench's continuation prompt, byte for byte;
 * - SmolLM2 (temperature 0, one sequence, one thread: deterministic) gives the same reply to both,
 *   and the Inspect scorer's outcome equals telebench's strict outcome on every row; its CFR / NFR /
 *   WFR / TeleMath CR metrics equal the rates of telebench's rows;
 * - `telebench score` on the Inspect log (`.eval`, and `.json` after `inspect log convert`) gives
 *   the same per-row outcomes in every parse mode, and the same rates, as on the JSON Lines of the
 *   replies resilience-eval stored.
 *
 * Model calls: 12 (construction) + one per released row and TeleMath instance (7 here) in Inspect
 * and again in resilience-eval, 64 output tokens at most.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, ROOT, runCli } from '../../fixtures/cli.js';
import { realDataRoot } from '../../fixtures/real-data.js';
import { SMOLLM2_NAME, smollm2Path } from '../../fixtures/smollm2.js';
import { Store } from '../../../pipeline/store/store.js';
import { runInspect, INSPECT_BIN, type InspectSample } from '../../fixtures/inspect-ai.js';

const MAX_TOKENS = 64;
const EXAMPLE = join(ROOT, 'config/examples/smollm2-resilience.yaml');

interface ContinueOutput {
  sample_id: string;
  subset: string;
  content: string;
  thinking_digest: string | null;
  done_reason: string | null;
  prompt_tokens: number | null;
  output_tokens: number | null;
  excluded: string | null;
  outcomes: Record<'strict' | 'lenient' | 'published', string>;
}

/** `telebench serve-model` as a child process on a free port; resolves with its /v1 URL. */
function serveModel(state: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [BIN, '--state', state, 'serve-model', '--name', SMOLLM2_NAME, '--gguf', smollm2Path()]
      .concat(['--port', '0', '--concurrency', '1', '--threads', '1', '--gpu', 'cpu'])
      .concat(['--context-size', '4096']),
    { cwd: ROOT, env: { ...process.env, CI: 'true' } },
  );
  return new Promise((done, fail) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = / at (http:\/\/\S+\/v1) /.exec(out);
      if (m) done({ child, url: m[1]! });
    });
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => fail(new Error(`serve-model exited ${code}: ${out}`)));
  });
}

let dir: string;
let server: { child: ChildProcess; url: string } | undefined;
let release: string;
let samples: InspectSample[];
let evalLog: string;
let jsonLog: string;
let rows: Map<string, ContinueOutput & { prompt: string }>;

/** The rows file of the first run's release (its one subset: config/examples/smollm2-resilience.yaml). */
const FIRST_RUN_DATA = 'data/srsranbench-github/test.jsonl';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tb-inspect-'));
  const data = await realDataRoot(
    'srsranbench/srsRANBench.json',
    'teleresiliencebench/AuxiliaryBenchmark.json',
  );
  const env = { TELEBENCH_DATA_ROOT: data };
  // the first run's release: SmolLM2 on 12 srsRANBench rows (the README's first run)
  const state = join(dir, 'state');
  for (const args of [
    ['run', 'resilience', '--limit', '12'],
    ['run', 'all', '--only', 'release.resilience'],
  ]) {
    const r = await runCli(['--state', state, ...args, '--config', EXAMPLE], env);
    expect(r.code, r.stderr).toBe(0);
  }
  const releases = join(state, 'releases/teleresiliencebench');
  release = join(dir, 'release');
  cpSync(join(releases, readdirSync(releases)[0]!), release, { recursive: true });
  // plus the two published TeleMath instances with the shortest half traces (published schema)
  const aux = JSON.parse(
    readFileSync(join(data, 'teleresiliencebench/AuxiliaryBenchmark.json'), 'utf8'),
  ) as { half_reasoning_trace: string; question: string }[];
  const short = [...aux]
    .sort(
      (a, b) =>
        a.half_reasoning_trace.length +
        a.question.length -
        (b.half_reasoning_trace.length + b.question.length),
    )
    .slice(0, 2);
  mkdirSync(join(release, 'data/telemath'));
  writeFileSync(
    join(release, 'data/telemath/test.jsonl'),
    short.map((r) => JSON.stringify(r)).join('\n') + '\n',
  );
  const files = [FIRST_RUN_DATA, 'data/telemath/test.jsonl'].map((f) => join(release, f));
  expect(existsSync(files[0]!)).toBe(true);

  server = await serveModel(state);
  // Inspect: the shipped task, Inspect's default openai/ provider (the Responses API)
  const logs = join(dir, 'logs');
  ({ samples, evalLog, jsonLog } = await runInspect({
    task: 'inspect/teleresiliencebench/teleresiliencebench.py',
    args: ['-T', `data=${release}`, '-T', `max_tokens=${MAX_TOKENS}`],
    model: `openai/${SMOLLM2_NAME}`,
    baseUrl: server.url,
    logDir: logs,
  }));

  // telebench resilience-eval: the same instances, the same server (Chat Completions)
  const config = join(dir, 'eval.yaml');
  writeFileSync(
    config,
    `version: 1
resilience:
  prompts_dir: ${join(ROOT, 'config/prompts/resilience')}
resilience_eval:
  input: { source: file, files: [${files.join(', ')}] }
  targets:
    - model: ${SMOLLM2_NAME}
      profile: default
      think: false
      temperature: 0
      num_predict: ${MAX_TOKENS}
      llm:
        endpoints:
          # one request at a time; a loaded shared machine may take minutes before the first token
          - { kind: openai-compatible, base_url: ${server.url}, concurrency: 1, context_length: 4096, idle_timeout_ms: 1800000, retries: 0 }
`,
  );
  const evalState = join(dir, 'eval-state');
  const r = await runCli(['--state', evalState, 'run', 'resilience-eval', '--config', config]);
  expect(r.code, r.stderr).toBe(0);
  const store = new Store(join(evalState, 'state.db'));
  rows = new Map(
    [...store.items('resilience-eval.continue')].map((it) => {
      const o = it.output as ContinueOutput;
      const input = it.input as { request: { messages: { content: string }[] } };
      return [o.sample_id, { ...o, prompt: input.request.messages[0]!.content }];
    }),
  );
  store.close();
});

afterAll(() => {
  server?.child.kill('SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the TeleResilienceBench Inspect task on a release, SmolLM2 by serve-model', () => {
  it('runs every released instance with telebench prompt and gets the same replies', () => {
    expect(INSPECT_BIN).toContain('inspect');
    expect(samples.map((s) => s.id).sort()).toEqual([...rows.keys()].sort());
    // the first run's released rows plus the two TeleMath instances
    expect(samples.length).toBe(rows.size);
    expect(rows.size).toBeGreaterThanOrEqual(3);
    for (const s of samples) {
      const t = rows.get(String(s.id))!;
      expect(s.input[0]!.content, `${s.id} prompt`).toBe(t.prompt);
      expect(s.output.completion, `${s.id} reply`).toBe(t.content);
      expect(s.output.usage.output_tokens).toBe(t.output_tokens);
    }
  });

  it("the scorer's outcome is telebench's strict outcome on every row, and the metrics its rates", () => {
    for (const s of samples) {
      const t = rows.get(String(s.id))!;
      expect(s.scores.resilience_scorer!.metadata.outcome, String(s.id)).toBe(t.outcomes.strict);
    }
    const rate = (kind: 'mc' | 'numeric', outcome: string): number | null => {
      const scored = [...rows.values()].filter(
        (r) =>
          (r.subset === 'telemath') === (kind === 'numeric') && r.outcomes.strict !== 'excluded',
      );
      if (scored.length === 0) return null;
      return (100 * scored.filter((r) => r.outcomes.strict === outcome).length) / scored.length;
    };
    const m = JSON.parse(readFileSync(jsonLog, 'utf8').replace(/\bNaN\b/g, 'null')) as {
      results: { scores: { metrics: Record<string, { value: number | null }> }[] };
    };
    const metrics = m.results.scores[0]!.metrics;
    expect(metrics.CFR!.value).toBe(rate('mc', 'correct_flip'));
    expect(metrics.NFR!.value).toBe(rate('mc', 'no_flip'));
    expect(metrics.WFR!.value).toBe(rate('mc', 'wrong_flip'));
    expect(metrics.TeleMath_CR!.value).toBe(rate('numeric', 'correct_flip'));
  });

  it('telebench score reads the .eval and .json logs as it reads the JSON Lines of the same replies', async () => {
    const instances = [FIRST_RUN_DATA, 'data/telemath/test.jsonl'].map((f) => join(release, f));
    const jsonl = join(dir, 'replies.jsonl');
    writeFileSync(
      jsonl,
      [...rows.values()]
        .map((r) =>
          JSON.stringify({
            sample_id: r.sample_id,
            model: `openai/${SMOLLM2_NAME}`,
            content: r.content,
            done_reason: r.done_reason,
            prompt_tokens: r.prompt_tokens,
            output_tokens: r.output_tokens,
            // as the Inspect-log reader marks a sample stopped by max_tokens
            ...(r.excluded === 'budget_exhausted' ? { budget_exhausted: true } : {}),
          }),
        )
        .join('\n') + '\n',
    );
    const score = async (file: string) => {
      const out = join(dir, `${file.split('/').pop()}.score.json`);
      const r = await runCli(['score', file, '--instances', ...instances, '--json', out]);
      expect(r.code, r.stderr).toBe(0);
      const [res] = JSON.parse(readFileSync(out, 'utf8')) as {
        s: { modes: unknown; rows: number };
        scores: { sample_id: string; outcomes: unknown; parses: unknown }[];
      }[];
      const byId = Object.fromEntries(
        res!.scores.map((x) => [x.sample_id, { outcomes: x.outcomes, parses: x.parses }]),
      );
      return { modes: res!.s.modes, rows: res!.s.rows, byId };
    };
    const fromJsonl = await score(jsonl);
    expect(fromJsonl.rows).toBe(rows.size);
    for (const log of [evalLog, jsonLog]) expect(await score(log)).toEqual(fromJsonl);
    // the same per-row strict outcome as resilience-eval (a reply cut by the budget excluded)
    for (const [id, t] of rows) {
      const got = fromJsonl.byId[id]!.outcomes as Record<string, string>;
      expect(got.strict, `${id} score vs resilience-eval`).toBe(t.outcomes.strict);
    }
  });
});
