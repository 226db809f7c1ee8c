/**
 * The optional LLM judge of model-written problem statements (issue 31): asked only after the
 * deterministic checks accept, through a scripted OpenAI-compatible server (real HTTP) standing in
 * for the judge model and another for the writer. An `uninformative` verdict refuses the statement
 * with rule `judge` and the judge's reason, which goes back to the writer; the judge never sees the
 * gold patch's added lines; an unreadable verdict is an error, not a pass.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { goFixture, GO_F2P } from '../../../fixtures/repos/go-nil.js';
import { gitFileReader } from '../../../../stages/swe5g/testgen/generate.js';
import {
  buggyCodeOf,
  writeStatement,
  type StatementContext,
} from '../../../../stages/swe5g/statement/writer.js';
import { parseJudge } from '../../../../stages/swe5g/statement/judge.js';
import { modelWrittenSchema } from '../../../../stages/swe5g/statement/config.js';
import { createProvider } from '../../../../pipeline/providers/llm/config.js';
import { startLlmServer, type LlmServer } from '../../../servers/llm-server.js';

const GOOD_1 =
  'HandleNGSetupRequest trusts the gNB identifier\n\nA request whose GlobalRANNodeID lacks its GNbId makes HandleNGSetupRequest read through an absent value, and the process dies instead of returning an error.';
const GOOD_2 =
  'AMF panics on NG Setup without gNB id\n\nSend an NG Setup Request whose global RAN node id has no gNB id: HandleNGSetupRequest stops the AMF with "invalid memory address or nil pointer dereference" instead of rejecting the request.';
const FILLER =
  'The issue is that the code is not working correctly. ' +
  'The bug is not being reported because the bug is not being reported. '.repeat(8);
const verdict = (v: string, reason: string) => ({
  content: `Here is my review.\n\`\`\`json\n{"verdict": "${v}", "reason": "${reason}"}\n\`\`\``,
});

let root: string;
let c: StatementContext;
let patch: string;
const servers: LlmServer[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'telebench-judge-'));
  const f = goFixture(join(root, 'go'), 'good');
  patch = execFileSync(
    'git',
    ['-C', f.dir, 'diff', f.candidate.base_commit, f.fixCommit, '--', 'ngap/handler.go'],
    { encoding: 'utf8' },
  );
  c = {
    repo: f.candidate.repo,
    buggyCode: await buggyCodeOf(patch, gitFileReader(f.dir, f.candidate.base_commit), 3000),
    testOutput:
      '--- FAIL: TestHandleNGSetupRequestNilGNbId (0.00s)\npanic: runtime error: invalid memory address or nil pointer dereference [recovered]\n',
    commitText: 'fix the bug',
    files: ['ngap/handler.go'],
    FAIL_TO_PASS: [GO_F2P],
  };
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(root, { recursive: true, force: true });
});

const serve = async (o: Parameters<typeof startLlmServer>[0]) => {
  const s = await startLlmServer(o);
  servers.push(s);
  return s;
};
const provider = (url: string) =>
  createProvider({ endpoints: [{ kind: 'openai-compatible', base_url: url }], cache: false });
const opts = { model: 'qwen3.5:2b', maxTokens: 300, maxAttempts: 3, ngram: 8 };

describe('the LLM judge after the deterministic checks', () => {
  it("refuses what the judge finds uninformative, with its reason in the record and the writer's retry", async () => {
    const writer = await serve({ script: [{ content: GOOD_1 }, { content: GOOD_2 }] });
    const judge = await serve({
      script: [
        verdict('uninformative', 'It does not say how to trigger the crash.'),
        verdict('Informative', 'Names the handler and the panic.'),
      ],
    });
    const w = await writeStatement(
      provider(writer.url),
      { ...opts, judge: { llm: provider(judge.url), model: 'qwen3.5:2b', maxTokens: 200 } },
      c,
      patch,
    );
    expect(w).toMatchObject({ ok: true, statement: GOOD_2 });
    expect(w.attempts).toEqual([
      {
        ok: false,
        check: 'quality',
        rule: 'judge',
        reason: 'was judged uninformative by qwen3.5:2b: It does not say how to trigger the crash.',
      },
      { ok: true },
    ]);
    expect(JSON.stringify(writer.chatRequests()[1]!.body)).toContain(
      'It does not say how to trigger the crash.',
    );
    const asked = judge.chatRequests().map((r) => JSON.stringify(r.body));
    expect(asked).toHaveLength(2);
    // the judge sees the buggy code, the failing output and the statement, never the fix
    expect(asked[0]).toContain('return req.GlobalRANNodeID.GNbId.Value, nil');
    expect(asked[0]).toContain('nil pointer dereference');
    expect(asked[0]).toContain('HandleNGSetupRequest trusts the gNB identifier');
    expect(asked[0]).not.toContain('ErrMissingGNbID');
  });

  it('is not asked about what the rules refuse, and K judge refusals give up with its reason', async () => {
    const writer = await serve({ script: [{ content: FILLER }, { content: GOOD_1 }] });
    const judge = await serve({ fallback: verdict('uninformative', 'Too vague.') });
    const w = await writeStatement(
      provider(writer.url),
      {
        ...opts,
        maxAttempts: 2,
        judge: { llm: provider(judge.url), model: 'qwen3.5:2b', maxTokens: 200 },
      },
      c,
      patch,
    );
    expect(w).toMatchObject({
      ok: false,
      check: 'quality',
      reason: 'was judged uninformative by qwen3.5:2b: Too vague.',
    });
    expect(w.attempts.map((a) => (a.ok ? 'ok' : a.check === 'quality' ? a.rule : a.check))).toEqual(
      ['repetitive', 'judge'],
    );
    expect(judge.chatRequests()).toHaveLength(1); // only GOOD_1 reached the judge
  });
});

describe('parseJudge and the judge setting', () => {
  it('reads a verdict inside prose or a fence, case-insensitively; an unreadable one throws', () => {
    expect(parseJudge('{"verdict":"INFORMATIVE"}')).toEqual({ ok: true });
    expect(parseJudge(verdict('uninformative', 'No symptom.').content)).toEqual({
      ok: false,
      reason: 'No symptom.',
    });
    expect(parseJudge('{"verdict": "uninformative"}')).toEqual({ ok: false, reason: 'no reason' });
    expect(() => parseJudge('Looks good to me!')).toThrow(/holds no \{"verdict"/);
    expect(() => parseJudge('{"verdict": "maybe"}')).toThrow(/holds no/);
  });

  it('is off by default and takes a model and endpoints when given', () => {
    expect(modelWrittenSchema.parse({}).quality).toMatchObject({ enabled: true, min_words: 10 });
    expect(modelWrittenSchema.parse({}).quality.judge).toBeUndefined();
    const s = modelWrittenSchema.parse({
      quality: {
        judge: {
          model: 'qwen3.5:9b',
          endpoints: [{ kind: 'openai-compatible', base_url: 'http://127.0.0.1:9' }],
        },
      },
    });
    expect(s.quality.judge).toMatchObject({ model: 'qwen3.5:9b', max_tokens: 200 });
    expect(() => modelWrittenSchema.parse({ quality: { min_words: 50, max_words: 40 } })).toThrow(
      /min_words must be below/,
    );
  });
});
