/**
 * Found by the SmolLM2 run on real free5GC instances: a small model mostly answers without any
 * well-formed SEARCH/REPLACE block, so its turns change nothing, yet each turn paid a full sandbox
 * run (1-2 minutes in Docker on a busy machine) to learn the same result again. The loop now runs
 * the sandbox once per distinct cumulative patch and records which turn's run a turn reuses.
 * Scripted model on the local model server (real Ollama protocol, real provider); the sandbox is a
 * counting stand-in that grades by the patch text (the solver's `runTests` seam).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createProvider } from '../../../../pipeline/providers/llm/config.js';
import { solve } from '../../../../stages/swe5g/evaluate/solver.js';
import type { GradedRun } from '../../../../stages/swe5g/evaluate/grade.js';
import {
  startLlmServer,
  type LlmServer,
  type RecordedRequest,
} from '../../../servers/llm-server.js';

const base = 'package ngap\n\nfunc ID(p *string) string {\n\treturn *p\n}\n';
const block =
  'ngap/id.go\n<<<<<<< SEARCH\n\treturn *p\n=======\n\tif p == nil {\n\t\treturn ""\n\t}\n\treturn *p\n>>>>>>> REPLACE\n';

/** Turns 1 and 2: prose without a block; turn 3: the fix; later: prose again. */
function reply(req: RecordedRequest): { content: string } {
  const body = req.body as { messages: { role: string }[] };
  const turn = body.messages.filter((m) => m.role === 'user').length;
  return { content: turn === 3 ? block : 'The function should check the pointer first.' };
}

let server: LlmServer;
beforeAll(async () => {
  server = await startLlmServer({
    models: [{ name: 'm-late', digest: '1'.padStart(64, '0') }],
    fallback: reply,
  });
});
afterAll(async () => server?.close());

const F2P = 'example.com/p/ngap::TestIDNil';

describe('multi-turn sandbox runs', () => {
  it('runs once per distinct patch: turns that change nothing reuse the earlier run', async () => {
    const ran: string[] = [];
    const runTests = async (patch: string, step: string): Promise<GradedRun> => {
      ran.push(step);
      const fixed = patch.includes('+\tif p == nil {');
      return {
        grade: {
          instance_id: 'i',
          patch_applied: true,
          apply_error: '',
          resolved: false,
          FAIL_TO_PASS: { [F2P]: fixed ? 'pass' : 'fail' },
          PASS_TO_PASS: { 'example.com/p/ngap::TestOther': fixed ? 'fail' : 'pass' },
          build_failures: [],
          timed_out: false,
          ambiguous_log: '',
          touched_test_files: [],
          exit_code: 1,
          executor: 'local',
          log: '',
        },
        result: null,
        parsed: null,
      };
    };
    const result = await solve(
      {
        mode: 'multi',
        turns: 5,
        feedback: 'names',
        feedbackTokens: 300,
        fuzzy: { threshold: 0.85, margin: 0.03 },
        language: 'Go',
        recipe: 'go',
        problem: 'ID panics on a nil pointer.',
        context: base,
      },
      {
        provider: createProvider({
          endpoints: [{ kind: 'ollama', base_url: server.url }],
          cache: false,
        }),
        request: {
          model: 'm-late',
          maxTokens: 256,
          temperature: 0,
          providerOptions: { ollama: { numCtx: 8192 } },
        },
        readBase: (p) => (p === 'ngap/id.go' ? base : null),
        runTests,
        saveAnswer: (t) => `answer-${t}`,
      },
    );
    expect(result.turns).toHaveLength(5);
    // turn 1: empty patch, run; turn 2: still empty, reused; turn 3: the fix, run; turn 4: same
    // fix, reused; turn 5: the last turn, never run
    expect(ran).toEqual(['turn_1', 'turn_3']);
    expect(result.turns.map((t) => t.run?.from_turn ?? null)).toEqual([1, 1, 3, 3, null]);
    expect(result.turns[1]!.run!.failing).toEqual([F2P]);
    expect(result.turns[3]!.run!.failing).toEqual(['example.com/p/ngap::TestOther']);
    // the feedback after a reused run still says what failed
    const fourth = server
      .chatRequests()
      .map((r) => r.body as { messages: { role: string; content: string }[] })
      .find((b) => b.messages.filter((m) => m.role === 'user').length === 4)!;
    expect(fourth.messages.at(-1)!.content).toContain('example.com/p/ngap::TestOther');
  });
});
