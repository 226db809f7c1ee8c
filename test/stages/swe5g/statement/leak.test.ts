/**
 * The leak check of model-written problem statements (issue 31) and the writer's retry loop
 * through a scripted OpenAI-compatible server (test/servers/llm-server.ts, real HTTP): a statement
 * quoting an added line of the gold patch, or a long enough run of its tokens, is refused; a
 * paraphrase of the symptom and a quote of the buggy code the fix keeps are accepted. Go, C and
 * Python patches.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { leakCheck, tokens } from '../../../../stages/swe5g/statement/leak.js';
import { writeStatement, failingOutput } from '../../../../stages/swe5g/statement/writer.js';
import { createProvider } from '../../../../pipeline/providers/llm/config.js';
import { startLlmServer, type LlmServer } from '../../../servers/llm-server.js';

const GO_PATCH = `diff --git a/ngap/handler.go b/ngap/handler.go
--- a/ngap/handler.go
+++ b/ngap/handler.go
@@ -9,5 +9,8 @@ var ErrMissingGNbID = errors.New("missing GNbId")
 // HandleNGSetupRequest returns the gNB id of the request.
 func HandleNGSetupRequest(req *NGSetupRequest) (string, error) {
+	if req.GlobalRANNodeID == nil || req.GlobalRANNodeID.GNbId == nil {
+		return "", ErrMissingGNbID
+	}
 	return req.GlobalRANNodeID.GNbId.Value, nil
 }
`;
const GO_BUGGY = `func HandleNGSetupRequest(req *NGSetupRequest) (string, error) {
	return req.GlobalRANNodeID.GNbId.Value, nil
}`;

const C_PATCH = `--- a/src/smf/context.c
+++ b/src/smf/context.c
@@ -120,6 +120,8 @@ void smf_sess_remove(smf_sess_t *sess)
 {
     ogs_assert(sess);
+    if (sess->pfcp_node == NULL)
+        return;
     ogs_list_remove(&sess->pfcp_node->sess_list, sess);
`;
const C_BUGGY = `void smf_sess_remove(smf_sess_t *sess)
{
    ogs_assert(sess);
    ogs_list_remove(&sess->pfcp_node->sess_list, sess);
}`;

const PY_PATCH = `--- a/smf/handler.py
+++ b/smf/handler.py
@@ -1,3 +1,5 @@
 class SessionHandler:
     def release(self, session):
+        if session.pdu is None:
+            raise ValueError("session has no PDU to release")
         return session.pdu.upper()
`;
const PY_BUGGY = `    def release(self, session):
        return session.pdu.upper()`;

describe('leakCheck', () => {
  it('refuses a statement quoting an added line, whatever its whitespace (Go, C, Python)', () => {
    const go = leakCheck(
      'AMF crash\n\nThe handler should do   if req.GlobalRANNodeID == nil ||\n  req.GlobalRANNodeID.GNbId == nil { before reading the id.',
      GO_PATCH,
      GO_BUGGY,
    );
    expect(go).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^quotes the added line "if req\.GlobalRANNodeID == nil/),
    });
    const py = leakCheck(
      'release() crashes. Suggested: raise ValueError("session has no PDU to release")',
      PY_PATCH,
      PY_BUGGY,
    );
    expect(py.ok).toBe(false);
    // C: the guard is short (trivial as a line) but 8 of its tokens with the code around it leak
    const c = leakCheck(
      'SMF aborts on session removal; guard it: if (sess->pfcp_node == NULL) return;',
      C_PATCH,
      C_BUGGY,
    );
    expect(c).toMatchObject({ ok: false });
  });

  it('refuses a run of n tokens of an added line inside prose (n-gram), not a shorter one', () => {
    const text =
      'The AMF panics. It should check req.GlobalRANNodeID.GNbId == nil first and return an error.';
    // "req . GlobalRANNodeID . GNbId == nil" is 6 tokens, new in the fix (the buggy code has no `== nil`)
    expect(leakCheck(text, GO_PATCH, GO_BUGGY, 6)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('quotes 6 tokens of an added line'),
    });
    expect(leakCheck(text, GO_PATCH, GO_BUGGY, 8).ok).toBe(true);
  });

  it('accepts a paraphrase of the symptom, and a quote of the buggy code the fix keeps', () => {
    const paraphrase =
      'AMF crashes on NGSetupRequest without a gNB identifier\n\nWhen a gNB sends an NG Setup Request whose global RAN node id carries no gNB id, the AMF dereferences a nil pointer in HandleNGSetupRequest and the process panics. Expected: the request is rejected with an error.';
    expect(leakCheck(paraphrase, GO_PATCH, GO_BUGGY)).toEqual({ ok: true });
    // the unchanged buggy line is context, not the fix
    const quotingBug =
      'Crash in the NGAP handler: `return req.GlobalRANNodeID.GNbId.Value, nil` reads the id without looking at it.';
    expect(leakCheck(quotingBug, GO_PATCH, GO_BUGGY)).toEqual({ ok: true });
    expect(
      leakCheck(
        'smf_sess_remove crashes when the session has no PFCP node: ogs_list_remove(&sess->pfcp_node->sess_list, sess) dereferences it.',
        C_PATCH,
        C_BUGGY,
      ),
    ).toEqual({ ok: true });
    expect(
      leakCheck(
        'SessionHandler.release fails with AttributeError when the session has no PDU.',
        PY_PATCH,
        PY_BUGGY,
      ),
    ).toEqual({ ok: true });
  });

  it('does not count trivial added lines (a brace, `return`) and rejects n below 3', () => {
    const patch = '--- a/x.go\n+++ b/x.go\n@@ -1,2 +1,4 @@\n+}\n+return nil\n func f() {\n';
    expect(leakCheck('The function should return nil here }', patch, '')).toEqual({ ok: true });
    expect(() => leakCheck('x', patch, '', 2)).toThrow(/below 3/);
    expect(tokens('a.b != nil && c')).toEqual(['a', '.', 'b', '!=', 'nil', '&&', 'c']);
  });
});

describe('writeStatement through a scripted OpenAI-compatible server', () => {
  const servers: LlmServer[] = [];
  afterAll(async () => Promise.all(servers.map((s) => s.close())));
  const context = {
    repo: 'fixture/amfmini',
    buggyCode: GO_BUGGY,
    testOutput: failingOutput(
      '=== RUN   TestOther\n--- PASS: TestOther\n=== RUN   TestHandleNil\n--- FAIL: TestHandleNil (0.00s)\n    handler_test.go:12: panic: runtime error: invalid memory address or nil pointer dereference\nFAIL\n',
      ['example.com/amfmini/ngap::TestHandleNil'],
      1500,
    ),
    commitText: 'Merge pull request #161',
    files: ['ngap/handler.go'],
    FAIL_TO_PASS: ['example.com/amfmini/ngap::TestHandleNil'],
  };
  const opts = { model: 'qwen3.5:2b', maxTokens: 300, maxAttempts: 3, ngram: 8 };
  const QUOTE =
    'AMF crash\n\nFix: if req.GlobalRANNodeID == nil || req.GlobalRANNodeID.GNbId == nil { return "", ErrMissingGNbID }';
  const PARAPHRASE =
    'AMF panics on NG Setup without gNB id\n\nAn NG Setup Request whose RAN node id has no gNB id makes HandleNGSetupRequest dereference a nil pointer; the AMF crashes instead of rejecting the request.';

  it('refuses the quoting answer with the reason, asks again, accepts the paraphrase', async () => {
    const server = await startLlmServer({ script: [{ content: QUOTE }, { content: PARAPHRASE }] });
    servers.push(server);
    const llm = createProvider({
      endpoints: [{ kind: 'openai-compatible', base_url: server.url }],
      cache: false,
    });
    const w = await writeStatement(llm, opts, context, GO_PATCH);
    expect(w).toMatchObject({ ok: true, statement: PARAPHRASE });
    expect(w.attempts).toEqual([
      { ok: false, check: 'leak', reason: expect.stringMatching(/^quotes the added line/) },
      { ok: true },
    ]);
    const chats = server.chatRequests();
    expect(chats).toHaveLength(2);
    const first = JSON.stringify(chats[0]!.body);
    // the writer saw the buggy code and the failing output, never the fix's added lines
    expect(first).toContain('return req.GlobalRANNodeID.GNbId.Value, nil');
    expect(first).toContain('nil pointer dereference');
    expect(first).not.toContain('ErrMissingGNbID');
    expect(JSON.stringify(chats[1]!.body)).toContain('That issue was refused');
  });

  it('gives up after K refusals with the last reason', async () => {
    const server = await startLlmServer({ fallback: { content: QUOTE } });
    servers.push(server);
    const llm = createProvider({
      endpoints: [{ kind: 'openai-compatible', base_url: server.url }],
      cache: false,
    });
    const w = await writeStatement(llm, { ...opts, maxAttempts: 2 }, context, GO_PATCH);
    expect(w).toMatchObject({
      ok: false,
      check: 'leak',
      reason: expect.stringMatching(/^quotes the added line/),
    });
    expect(w.attempts).toHaveLength(2);
    expect(server.chatRequests()).toHaveLength(2);
  });
});
