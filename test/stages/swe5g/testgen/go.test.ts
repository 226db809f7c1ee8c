/**
 * Go, end to end on a repository this test builds (stdlib only, host `go`): Strategy A and B
 * tests fail at the parent and pass after the fix; fake fixes (pattern in a comment, a string, or
 * another function) do not pass the B test; a function with a channel parameter falls back to B.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { generateTestGen, hostRunner } from '../../../../stages/swe5g/testgen/generate.js';
import { testgenSchema } from '../../../../stages/swe5g/testgen/config.js';
import { buildRepo, resolvedOf, type BuiltRepo } from './repos.js';
import { startLlmServer } from '../../../servers/llm-server.js';
import { createProvider } from '../../../../pipeline/providers/llm/config.js';

const HANDLER = `package ngap

// GNbID is a gNB identifier.
type GNbID struct{ Value string }

// RanNodeID is the target RAN node.
type RanNodeID struct {
	GNbId *GNbID
	Name  string
}

// Describe returns the gNB id of the target node.
func Describe(id *RanNodeID) string {
	if id.GNbId.Value != "" {
		return id.GNbId.Value
	}
	return "none"
}
`;
const FIXED = HANDLER.replace(
  'if id.GNbId.Value != "" {',
  'if id.GNbId != nil && id.GNbId.Value != "" {',
);
const FORWARD = `package ngap

// Forward sends the gNB id on out.
func Forward(id *RanNodeID, out chan string) {
	out <- id.GNbId.Value
}
`;

let repo: BuiltRepo;
const settings = testgenSchema.parse({ verify: 'all' });

beforeAll(() => {
  repo = buildRepo({
    'go.mod': 'module example.org/amfish\n\ngo 1.21\n',
    'internal/ngap/handler.go': HANDLER,
    'internal/ngap/forward.go': FORWARD,
    'internal/ngap/handler_test.go':
      'package ngap\n\nimport "testing"\n\nfunc TestName(t *testing.T) {\n\tif (&RanNodeID{Name: "a"}).Name != "a" {\n\t\tt.Fatal("name")\n\t}\n}\n',
  });
});
afterAll(() => repo?.cleanup());

describe('swe5g.testgen on a Go nil-pointer fix', () => {
  it('Strategy A: the direct call panics at the parent and returns after the fix', async () => {
    const fix = repo.commit({ 'internal/ngap/handler.go': FIXED }, 'fix nil GNbId');
    const gen = await generateTestGen(repo.dir, resolvedOf(repo, fix, 'go'), settings);
    expect(gen.testgen.strategy).toBe('A');
    expect(gen.testgen.FAIL_TO_PASS).toEqual([
      'example.org/amfish/internal/ngap::TestF2PCall_Describe',
    ]);
    expect(gen.testgen.f2p_test_patch).toContain('+++ b/internal/ngap/f2p_call_test.go');
    expect(gen.testgen.f2p_test_patch).toContain(
      'f2pFill(reflect.ValueOf(&f2pArg0).Elem(), 5, map[reflect.Type]bool{})',
    );
    expect(gen.testgen.f2p_test_patch).toContain('f2pArg0.GNbId = nil');
    expect(
      gen.strategyA.check?.parent?.statuses[
        'example.org/amfish/internal/ngap::TestF2PCall_Describe'
      ],
    ).toBe('failed');
    // the log names where the call panicked (issue 16: why A was not kept on real code)
    expect(gen.strategyA.check?.parent?.log).toMatch(
      /Describe panicked on nil\/zero input: runtime error: invalid memory address or nil pointer dereference at example\.org\/amfish\/internal\/ngap\.Describe \(handler\.go:\d+\)/,
    );
    expect(gen.testgen.bug_category).toBe('nil_pointer');
    expect(gen.testgen.spec_refs).toEqual(['TS 29.518 §6.1']);
  });

  it('Strategy B: fails at the parent, passes after the fix; fake fixes do not pass', async () => {
    const fix = repo.commit({ 'internal/ngap/handler.go': FIXED }, 'fix nil GNbId');
    const gen = await generateTestGen(repo.dir, resolvedOf(repo, fix, 'go'), {
      ...settings,
      strategy_a: false,
    });
    expect(gen.testgen.strategy).toBe('B');
    expect(gen.checkB?.ok).toBe(true);
    const id = 'example.org/amfish/internal/ngap::TestF2P_Describe';
    expect(gen.testgen.FAIL_TO_PASS).toEqual([id]);
    // the failure names the function, never the pattern
    const parentLog = gen.checkB!.parent!.log;
    expect(parentLog).toMatch(
      /Describe in internal\/ngap\/handler.go does not contain the expected fix \(site 1 of 1: \d+ of \d+ uses unguarded\)/,
    );
    expect(parentLog).not.toMatch(/GNbId/);
    const fakes = {
      comment: HANDLER.replace(
        '\tif id.GNbId.Value',
        '\t// if id.GNbId != nil {\n\tif id.GNbId.Value',
      ),
      string: HANDLER.replace('\treturn "none"', '\treturn "none: id.GNbId != nil"'),
      otherFunction: HANDLER + '\nfunc check(id *RanNodeID) bool {\n\treturn id.GNbId != nil\n}\n',
    };
    for (const [name, text] of Object.entries(fakes)) {
      const fake = repo.commit({ 'internal/ngap/handler.go': text }, `fake fix: ${name}`);
      const run = await hostRunner(repo.dir, fake, gen.testgen.f2p_test_patch, 'go', [id], 900_000);
      expect({ name, build: run.buildFailed, status: run.statuses[id] }).toEqual({
        name,
        build: false,
        status: 'failed',
      });
    }
    const alt = repo.commit(
      {
        'internal/ngap/handler.go': HANDLER.replace(
          '\tif id.GNbId.Value',
          '\tif id.GNbId == nil {\n\t\treturn "none"\n\t}\n\tif id.GNbId.Value',
        ),
      },
      'alternative fix',
    );
    const altRun = await hostRunner(repo.dir, alt, gen.testgen.f2p_test_patch, 'go', [id], 900_000);
    expect(altRun.statuses[id]).toBe('passed');
  });

  it('falls back to B and says why when a parameter cannot be built; a fix over two files gets one test per function', async () => {
    const fix = repo.commit(
      {
        'internal/ngap/forward.go': FORWARD.replace(
          '\tout <- id.GNbId.Value',
          '\tif id.GNbId == nil {\n\t\treturn\n\t}\n\tout <- id.GNbId.Value',
        ),
        'internal/ngap/handler.go': FIXED,
      },
      'fix two files',
    );
    const gen = await generateTestGen(repo.dir, resolvedOf(repo, fix, 'go'), settings);
    expect(gen.testgen.strategy).toBe('A'); // Describe is callable
    const onlyForward = repo.commit(
      {
        'internal/ngap/forward.go': FORWARD.replace(
          '\tout <- id.GNbId.Value',
          '\tif id.GNbId == nil {\n\t\treturn\n\t}\n\tout <- id.GNbId.Value',
        ),
      },
      'fix forward',
    );
    const g2 = await generateTestGen(repo.dir, resolvedOf(repo, onlyForward, 'go'), settings);
    expect(g2.testgen.strategy).toBe('B');
    expect(g2.testgen.strategy_reason).toMatch(
      /parameter out of Forward is a channel \(chan string\); cannot be built simply/,
    );
    expect(g2.checkB?.ok).toBe(true);
    const both = await generateTestGen(repo.dir, resolvedOf(repo, fix, 'go'), {
      ...settings,
      strategy_a: false,
    });
    expect(both.testgen.FAIL_TO_PASS.sort()).toEqual([
      'example.org/amfish/internal/ngap::TestF2P_Describe',
      'example.org/amfish/internal/ngap::TestF2P_Forward',
    ]);
    expect(both.checkB?.ok).toBe(true);
  });

  it('skips a formatting-only change and a fix that only deletes lines, with the reason', async () => {
    const fmt = repo.commit(
      {
        'internal/ngap/handler.go': HANDLER.replace('return "none"', 'return  "none" // unchanged'),
      },
      'fmt',
    );
    await expect(
      generateTestGen(repo.dir, resolvedOf(repo, fmt, 'go'), settings),
    ).rejects.toMatchObject({
      code: 'no_fix_pattern',
      message: expect.stringMatching(/formatting or comments only/),
    });
    const del = repo.commit(
      {
        'internal/ngap/handler.go': HANDLER.replace(
          '\tif id.GNbId.Value != "" {\n\t\treturn id.GNbId.Value\n\t}\n',
          '',
        ),
      },
      'delete',
    );
    await expect(
      generateTestGen(repo.dir, resolvedOf(repo, del, 'go'), settings),
    ).rejects.toMatchObject({
      code: 'no_fix_pattern',
      message: expect.stringMatching(/only deletes lines/),
    });
  });
  it('handles a Go module in a subfolder (registry path entries such as magma lte/gateway/go)', async () => {
    const sub = buildRepo({
      'README.md': 'monorepo\n',
      'lte/gateway/go/go.mod': 'module magma/gateway\n\ngo 1.21\n',
      'lte/gateway/go/svc/handler.go': HANDLER,
    });
    try {
      const fix = sub.commit({ 'lte/gateway/go/svc/handler.go': FIXED }, 'fix');
      const b = await generateTestGen(sub.dir, resolvedOf(sub, fix, 'go'), {
        ...settings,
        strategy_a: false,
      });
      expect(b.testgen.FAIL_TO_PASS).toEqual(['magma/gateway/svc::TestF2P_Describe']);
      expect(b.checkB?.ok).toBe(true);
      const a = await generateTestGen(sub.dir, resolvedOf(sub, fix, 'go'), settings);
      expect(a.testgen.strategy).toBe('A');
    } finally {
      sub.cleanup();
    }
  });

  it('optionally asks a model for the direct-call test, feeding the compile-and-run outcome back (scripted local model server)', async () => {
    const llmTest = [
      'package ngap',
      '',
      'import "testing"',
      '',
      'func TestF2PLLM_Forward(t *testing.T) {',
      '\tdefer func() {',
      '\t\tif r := recover(); r != nil {',
      '\t\t\tt.Errorf("Forward panicked: %v", r)',
      '\t\t}',
      '\t}()',
      '\tout := make(chan string, 1)',
      '\tForward(&RanNodeID{}, out)',
      '}',
    ].join('\n');
    const server = await startLlmServer({
      script: [
        { content: 'Here is an idea: call Forward.' },
        { content: '```go\n' + llmTest + '\n```' },
      ],
    });
    try {
      const fix = repo.commit(
        {
          'internal/ngap/forward.go': FORWARD.replace(
            '\tout <- id.GNbId.Value',
            '\tif id.GNbId == nil {\n\t\treturn\n\t}\n\tout <- id.GNbId.Value',
          ),
        },
        'fix forward',
      );
      const llm = createProvider({
        endpoints: [{ kind: 'ollama', base_url: server.url, stream: false }],
        cache: false,
      });
      const withLlm = testgenSchema.parse({
        llm: {
          model: 'qwen3.5:2b',
          tries: 3,
          endpoints: [{ kind: 'ollama', base_url: server.url }],
        },
      });
      const gen = await generateTestGen(repo.dir, resolvedOf(repo, fix, 'go'), withLlm, undefined, {
        llm,
      });
      expect(gen.testgen.strategy).toBe('A');
      expect(gen.testgen.strategy_reason).toMatch(
        /^A \(LLM-written by qwen3.5:2b, try 2 of 3\): calls Forward/,
      );
      expect(gen.testgen.FAIL_TO_PASS).toEqual([
        'example.org/amfish/internal/ngap::TestF2PLLM_Forward',
      ]);
      const chats = server.chatRequests();
      expect(chats).toHaveLength(2);
      expect(JSON.stringify(chats[1]!.body)).toMatch(
        /That test was rejected: the answer has no package clause/,
      );
    } finally {
      await server.close();
    }
  });

  it('Strategy A reaches the guarded code through a logger held three pointers deep (issue 16, real free5GC shape)', async () => {
    // free5GC's RanUe.Log is a *logrus.Entry whose Logger is one more pointer: filled 4 levels
    // counting every struct, Logger stayed nil and the call panicked in the logger at both commits.
    const UE = `package ngap

// Logger is a leveled logger (logrus' shape: a zero Logger discards below its level).
type Logger struct{ Level int }

// Entry is a log entry bound to a Logger.
type Entry struct{ Logger *Logger }

// Infof logs when the level allows it.
func (e *Entry) Infof(format string, args ...any) {
	if e.Logger.Level > 3 {
		println(format)
	}
}

// Target is the handover target.
type Target struct{ Name string }

// RanUe is a UE of one RAN.
type RanUe struct {
	Log    *Entry
	Target *Target
}

// HandoverAck answers a handover request acknowledge.
func HandoverAck(ue *RanUe) string {
	ue.Log.Infof("handover ack")
	return ue.Target.Name
}
`;
    const deep = buildRepo({
      'go.mod': 'module example.org/deep\n\ngo 1.21\n',
      'internal/ngap/ue.go': UE,
    });
    try {
      const fix = deep.commit(
        {
          'internal/ngap/ue.go': UE.replace(
            '\treturn ue.Target.Name',
            '\tif ue.Target == nil {\n\t\treturn ""\n\t}\n\treturn ue.Target.Name',
          ),
        },
        'fix nil target',
      );
      const gen = await generateTestGen(deep.dir, resolvedOf(deep, fix, 'go'), settings);
      expect([gen.testgen.strategy, gen.strategyA.reason]).toEqual([
        'A',
        'fails at base_commit, passes at merge_commit',
      ]);
      expect(gen.strategyA.check?.parent?.log).toMatch(
        /at example\.org\/deep\/internal\/ngap\.HandoverAck/,
      );
    } finally {
      deep.cleanup();
    }
  });
});
