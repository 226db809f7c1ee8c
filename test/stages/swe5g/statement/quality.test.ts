/**
 * The quality check of model-written problem statements (issue 31), after the leak check, on the
 * Go, C and Python fixture repositories (real git repositories; the buggy code is read at
 * base_commit by the writer's own `buggyCodeOf`, the failing output is in each runner's format):
 * SmolLM2-style filler, a generic report, a hedge and a restatement of the test's name are
 * refused with their rule; a quote of the fix is still refused by the leak check; two good
 * statements written differently (one naming the panic or error text, one naming the function and
 * the wrong behaviour in other words) are accepted. Then the writer's retry through a scripted
 * OpenAI-compatible server (real HTTP): a quote, then filler, then a good statement; and K
 * uninformative answers end with the quality check's reason.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { goFixture, GO_F2P } from '../../../fixtures/repos/go-nil.js';
import { cFixture, C_F2P } from '../../../fixtures/repos/c-null.js';
import { pyFixture, PY_F2P } from '../../../fixtures/repos/py-none.js';
import type { Fixture } from '../../../fixtures/repos/builder.js';
import { gitFileReader } from '../../../../stages/swe5g/testgen/generate.js';
import {
  buggyCodeOf,
  checkStatement,
  failingOutput,
  writeStatement,
  type StatementContext,
} from '../../../../stages/swe5g/statement/writer.js';
import { qualityCheck, repetition } from '../../../../stages/swe5g/statement/quality.js';
import { QUALITY_DEFAULTS } from '../../../../stages/swe5g/statement/quality.js';
import { createProvider } from '../../../../pipeline/providers/llm/config.js';
import { startLlmServer, type LlmServer } from '../../../servers/llm-server.js';

/** The real SmolLM2-135M answer for free5gc/amf PR 161 (docs/results/problem-statements.md). */
const SMOLLM2 =
  'The issue is that the code is not working correctly. ' +
  'The bug is not being reported because the bug is not being reported. '.repeat(12);
/** Filler without repetition: every sentence generic. */
const FILLER =
  'Bug report\n\nThe bug is being reported because the code does not work as expected. The issue is that the problem happens in the code, and it needs to be fixed so that it works correctly.';
const GENERIC =
  'There is a bug in the code. The code does not work correctly and this causes problems. Please fix the bug as soon as possible.';

interface Lang {
  name: string;
  build: (root: string) => Fixture;
  source: string;
  F2P: string;
  log: string;
  /** Good statement naming the panic / error text of the failing output. */
  byError: string;
  /** Good statement naming the function and the wrong behaviour in other words. */
  byFunction: string;
  hedge: string;
  echo: string;
  /** Quotes an added line of the fix. */
  quote: string;
}

const LANGS: Lang[] = [
  {
    name: 'Go',
    build: (root) => goFixture(root, 'good'),
    source: 'ngap/handler.go',
    F2P: GO_F2P,
    log: `=== RUN   TestHandleNGSetupRequestNilGNbId
--- FAIL: TestHandleNGSetupRequestNilGNbId (0.00s)
panic: runtime error: invalid memory address or nil pointer dereference [recovered]
	panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4f5c3a]

goroutine 7 [running]:
testing.tRunner.func1.2({0x516e20, 0x6488d0})
FAIL	example.com/amfmini/ngap	0.012s
`,
    byError:
      'AMF goes down during NG Setup\n\nWhen a gNB sends an NG Setup Request whose global RAN node id carries no gNB id, the AMF stops with "runtime error: invalid memory address or nil pointer dereference". It should answer the gNB with a setup failure and keep running.',
    byFunction:
      'HandleNGSetupRequest trusts the gNB identifier\n\nHandleNGSetupRequest reads the identifier of every request it is given. A request whose GlobalRANNodeID lacks its GNbId makes the handler read through an absent value, and the whole process dies instead of handing an error back to the caller.',
    hedge:
      'There might be a problem somewhere in handler.go. Something may be wrong with how requests are read, and it could possibly fail in some cases. Maybe someone should have a look at it.',
    echo: 'TestHandleNGSetupRequestNilGNbId fails. Running TestHandleNGSetupRequestNilGNbId does not pass at the moment, and TestHandleNGSetupRequestNilGNbId has to pass.',
    quote:
      'AMF crash on NG Setup\n\nHandleNGSetupRequest should start with if req.GlobalRANNodeID == nil || req.GlobalRANNodeID.GNbId == nil { and bail out.',
  },
  {
    name: 'C',
    build: cFixture,
    source: 'src/ngap.c',
    F2P: C_F2P,
    log: `ninja: Entering directory \`build'
1/2 cnull:unit / ngap_setup_ok        OK              0.01s
2/2 cnull:unit / ngap_null_gnb        FAIL            0.02s   killed by signal 11 SIGSEGV
>>> MALLOC_PERTURB_=87 build/tests/test_ngap null_gnb

Ok:                 1
Fail:               1
`,
    byError:
      'Segmentation fault on an NG Setup without gNB id\n\nParsing an NG Setup request that carries no gNB id takes the whole program down with signal 11 (SIGSEGV), rather than telling the caller that the id is absent.',
    byFunction:
      'ngap_gnb_id does not cope with a request lacking a gNB identifier: it follows the gnb_id pointer of the request without looking at it first, so the caller crashes rather than getting nothing back.',
    hedge:
      'Something could be off in ngap.c. It might possibly misbehave in some cases, perhaps when a request is unusual. Not sure what triggers it, maybe it is nothing.',
    echo: 'ngap_null_gnb fails. The ngap_null_gnb case of the unit suite does not pass right now, and ngap_null_gnb should pass.',
    quote:
      'Crash in the NGAP parser. It needs if (req == NULL || req->gnb_id == NULL) return NULL; at the top.',
  },
  {
    name: 'Python',
    build: pyFixture,
    source: 'amfpy/ngap.py',
    F2P: PY_F2P,
    log: `tests/test_ngap.py::test_ok PASSED
tests/test_ngap.py::test_none_gnb_id FAILED

    def gnb_id(req):
        """Return the gNB id value of an NG setup request (a dict)."""
>       return req["global_ran_node_id"]["gnb_id"]["value"]
E       TypeError: 'NoneType' object is not subscriptable

amfpy/ngap.py:6: TypeError
FAILED tests/test_ngap.py::test_none_gnb_id - TypeError: 'NoneType' object is not subscriptable
`,
    byError:
      "Looking up the gNB of a setup request blows up\n\nWith a request whose node has its gNB id set to None, the lookup raises TypeError: 'NoneType' object is not subscriptable. I expected a clear message saying the id is absent.",
    byFunction:
      'amfpy.ngap.gnb_id assumes every NG setup request has a gNB id. Given a global RAN node whose gnb_id is absent, it indexes into nothing and the caller gets an unhelpful crash rather than a message saying what is missing.',
    hedge:
      'Something may be wrong in amfpy. It could possibly break in some cases, probably with unusual input. Perhaps the handling there seems a bit fragile somehow.',
    echo: 'test_none_gnb_id fails. Running test_none_gnb_id does not pass right now, and test_none_gnb_id should pass after the work.',
    quote:
      'gnb_id crashes on a None id. It should do node = req.get("global_ran_node_id") or {} before reading the value.',
  },
];

let root: string;
const ctx = new Map<string, { c: StatementContext; patch: string }>();

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'telebench-quality-'));
  for (const l of LANGS) {
    const f = l.build(join(root, l.name));
    const patch = execFileSync(
      'git',
      ['-C', f.dir, 'diff', f.candidate.base_commit, f.fixCommit, '--', l.source],
      { encoding: 'utf8' },
    );
    const buggyCode = await buggyCodeOf(patch, gitFileReader(f.dir, f.candidate.base_commit), 3000);
    ctx.set(l.name, {
      patch,
      c: {
        repo: f.candidate.repo,
        buggyCode,
        testOutput: failingOutput(l.log, [l.F2P], 1500),
        commitText: 'fix the bug',
        files: [l.source],
        FAIL_TO_PASS: [l.F2P],
      },
    });
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const check = (lang: string, statement: string) => {
  const { c, patch } = ctx.get(lang)!;
  return checkStatement(statement, c, patch, { ngram: 8, quality: QUALITY_DEFAULTS });
};

describe.each(LANGS.map((l) => [l.name, l] as const))('quality check, %s fixture', (lang, l) => {
  it('reads the buggy function at base_commit (what the rules ground on)', () => {
    const b = ctx.get(lang)!.c.buggyCode;
    expect(b).toContain(l.source);
    expect(b.length).toBeGreaterThan(40);
  });

  it("refuses SmolLM2's filler: repeated, or generic when not repeated", () => {
    expect(check(lang, SMOLLM2)).toMatchObject({
      ok: false,
      check: 'quality',
      rule: 'repetitive',
      reason: expect.stringMatching(/^repeats itself: \d+% of it in repeated sentences/),
    });
    expect(check(lang, FILLER)).toMatchObject({
      ok: false,
      check: 'quality',
      rule: 'boilerplate',
      reason: expect.stringContaining('say nothing about this bug'),
    });
  });

  it('refuses a generic report and a hedge', () => {
    expect(check(lang, GENERIC)).toMatchObject({ ok: false, rule: 'boilerplate' });
    expect(check(lang, l.hedge)).toMatchObject({
      ok: false,
      rule: 'hedged',
      reason: expect.stringMatching(/^hedges in \d+% of it/),
    });
  });

  it("refuses a statement that only repeats the failing test's name", () => {
    expect(check(lang, l.echo)).toMatchObject({
      ok: false,
      rule: 'restates_test',
      reason: expect.stringContaining(l.F2P.split('::').pop()!),
    });
  });

  it('still refuses a quote of the fix, by the leak check first', () => {
    expect(check(lang, l.quote)).toMatchObject({
      ok: false,
      check: 'leak',
      reason: expect.stringMatching(/^quotes /),
    });
  });

  it('accepts a statement naming the error text, and one naming the function in other words', () => {
    expect(check(lang, l.byError)).toEqual({ ok: true });
    expect(check(lang, l.byFunction)).toEqual({ ok: true });
    const c = ctx.get(lang)!.c;
    const e = qualityCheck(l.byError, c);
    const f = qualityCheck(l.byFunction, c);
    // grounded differently: the first on the failing output, the second on the buggy code
    expect(e.ok && e.grounding.output.length).toBeGreaterThan(0);
    expect(f.ok && f.grounding.code.length).toBeGreaterThan(0);
  });
});

describe('quality rules on their own', () => {
  const go = () => ctx.get('Go')!.c;

  it('refuses a too short or too long statement, and one grounded but with no symptom', () => {
    expect(qualityCheck('HandleNGSetupRequest is broken.', go())).toMatchObject({
      rule: 'too_short',
      reason: 'has 3 words (at least 10)',
    });
    const long = `HandleNGSetupRequest panics. ${'The gNB sends a request over the link to the core. '.repeat(1)}${Array.from({ length: 900 }, (_, i) => `w${i}`).join(' ')}`;
    expect(qualityCheck(long, go())).toMatchObject({ rule: 'too_long' });
    expect(
      qualityCheck(
        'HandleNGSetupRequest in handler.go is where the gNB identity of an NG Setup Request is read by the AMF.',
        go(),
      ),
    ).toMatchObject({
      rule: 'no_symptom',
      reason: expect.stringContaining('HandleNGSetupRequest'),
    });
  });

  it('refuses a statement naming nothing of the inputs, listing what it could have named', () => {
    const v = qualityCheck(
      'The core network crashes whenever a base station connects with an unusual setup message, and operators lose service.',
      go(),
    );
    expect(v).toMatchObject({
      rule: 'ungrounded',
      reason: expect.stringContaining('HandleNGSetupRequest'),
    });
  });

  it("measures Gopher's repetition: a repeated sentence and a repeated 5-word run", () => {
    expect(repetition(SMOLLM2).sentences).toBeGreaterThan(0.9);
    // 38 of the 41 word characters lie in the repeated 5-word run
    expect(repetition('one two three four five. one two three four five. six').ngrams).toBe(
      38 / 41,
    );
    expect(repetition(LANGS[0]!.byFunction)).toEqual({ sentences: 0, ngrams: 0 });
  });

  it('thresholds are settings: a looser boilerplate share accepts what the default refuses', () => {
    const s = `${GENERIC} HandleNGSetupRequest panics on it.`;
    expect(qualityCheck(s, go())).toMatchObject({ rule: 'boilerplate' });
    expect(qualityCheck(s, go(), { ...QUALITY_DEFAULTS, max_boilerplate: 0.9 })).toMatchObject({
      ok: true,
    });
  });
});

describe('writeStatement with the quality check, through a scripted OpenAI-compatible server', () => {
  const servers: LlmServer[] = [];
  afterAll(async () => Promise.all(servers.map((s) => s.close())));
  const opts = { model: 'qwen3.5:2b', maxTokens: 300, maxAttempts: 3, ngram: 8 };
  const provider = (url: string) =>
    createProvider({ endpoints: [{ kind: 'openai-compatible', base_url: url }], cache: false });

  it('refuses a quote (leak), then filler (quality) with the rule in the retry, accepts the third', async () => {
    const l = LANGS[0]!;
    const server = await startLlmServer({
      script: [{ content: l.quote }, { content: SMOLLM2 }, { content: l.byFunction }],
    });
    servers.push(server);
    const { c, patch } = ctx.get('Go')!;
    const w = await writeStatement(provider(server.url), opts, c, patch);
    expect(w).toMatchObject({ ok: true, statement: l.byFunction });
    expect(w.attempts).toEqual([
      { ok: false, check: 'leak', reason: expect.stringMatching(/^quotes /) },
      { ok: false, check: 'quality', rule: 'repetitive', reason: expect.any(String) },
      { ok: true },
    ]);
    const chats = server.chatRequests();
    expect(chats).toHaveLength(3);
    expect(JSON.stringify(chats[1]!.body)).toContain('it contains code of the fix');
    expect(JSON.stringify(chats[2]!.body)).toContain('That issue was refused: it repeats itself');
  });

  it('gives up after K uninformative answers with the quality check and its reason', async () => {
    const server = await startLlmServer({ fallback: { content: GENERIC } });
    servers.push(server);
    const { c, patch } = ctx.get('Python')!;
    const w = await writeStatement(provider(server.url), { ...opts, maxAttempts: 2 }, c, patch);
    expect(w).toMatchObject({
      ok: false,
      check: 'quality',
      reason: expect.stringContaining('boilerplate'),
    });
    expect(w.attempts).toHaveLength(2);
    // the leak check alone (quality: false) accepts the same answer
    const server2 = await startLlmServer({ fallback: { content: GENERIC } });
    servers.push(server2);
    const w2 = await writeStatement(provider(server2.url), { ...opts, quality: false }, c, patch);
    expect(w2).toMatchObject({ ok: true, statement: GENERIC });
  });
});
