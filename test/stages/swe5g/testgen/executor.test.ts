/**
 * The testgen host runner on real toolchains (host `go`, `python3 -m pytest`) and a real local
 * model server: no secret of the host's environment reaches the code under test; results come
 * from `go test -json` events and pytest's JUnit XML, so a `--- PASS` line printed by the code
 * under test does not turn a failing test into a pass; a result after 64 KiB of output is still
 * read; the worst exit code of a run is kept; the LLM prompt records what it cut.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  LOG_CAP,
  runCommand,
  runTests,
  sandboxEnv,
  worseExit,
} from '../../../../stages/swe5g/testgen/executor.js';
import {
  llmDirectCall,
  goProfile,
  promptNote,
  PROMPT_PATCH_CHARS,
  PROMPT_PROBLEM_CHARS,
} from '../../../../stages/swe5g/testgen/llmtest.js';
import type { FixSite } from '../../../../stages/swe5g/testgen/patterns.js';
import { SECRET_ENV_VARS } from '../../../../pipeline/secrets.js';
import { startLlmServer } from '../../../servers/llm-server.js';
import { createProvider } from '../../../../pipeline/providers/llm/config.js';

const SECRET = 'ghp_telebenchFakeSecret0123456789';
const saved: Record<string, string | undefined> = {};
let dir: string;

function tree(files: Record<string, string>): string {
  const d = mkdtempSync(join(dir, 'tree-'));
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(dirname(join(d, p)), { recursive: true });
    writeFileSync(join(d, p), c);
  }
  return d;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'telebench-executor-test-'));
  for (const k of SECRET_ENV_VARS) {
    saved[k] = process.env[k];
    process.env[k] = `${SECRET}_${k}`;
  }
});
afterAll(() => {
  for (const k of SECRET_ENV_VARS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  rmSync(dir, { recursive: true, force: true });
});

const GO_MOD = 'module example.org/m\n\ngo 1.21\n';

describe('testgen runner environment (issue 4: no secrets in the executor)', () => {
  it('a Go test sees none of SECRET_ENV_VARS, and HOME is a scratch folder', async () => {
    const probe = [
      'package m',
      '',
      'import (',
      '\t"os"',
      '\t"testing"',
      ')',
      '',
      'func TestF2P_env(t *testing.T) {',
      `\tfor _, k := range []string{${SECRET_ENV_VARS.map((k) => `"${k}"`).join(', ')}} {`,
      '\t\tt.Logf("%s=[%s]", k, os.Getenv(k))',
      '\t\tif os.Getenv(k) != "" {',
      '\t\t\tt.Errorf("%s is visible", k)',
      '\t\t}',
      '\t}',
      `\tif os.Getenv("HOME") == ${JSON.stringify(process.env.HOME ?? '/root')} {`,
      '\t\tt.Errorf("HOME is the host user\'s")',
      '\t}',
      '}',
    ].join('\n');
    const d = tree({ 'go.mod': GO_MOD, 'env_test.go': probe });
    expect(process.env.GITHUB_TOKEN).toContain(SECRET);
    const run = await runTests(d, 'go', ['example.org/m::TestF2P_env'], 900_000);
    expect(run.statuses).toEqual({ 'example.org/m::TestF2P_env': 'passed' });
    expect(run.log).toContain('GITHUB_TOKEN=[]');
    expect(run.log).not.toContain(SECRET);
  });

  it('a pytest test sees none of SECRET_ENV_VARS', async () => {
    const d = tree({
      'tests/test_env.py': [
        'import os',
        '',
        'def test_f2p_env():',
        `    for k in ${JSON.stringify([...SECRET_ENV_VARS])}:`,
        '        assert os.environ.get(k) is None, k',
        '',
      ].join('\n'),
    });
    const run = await runTests(d, 'python', ['tests/test_env.py::test_f2p_env'], 900_000);
    expect(run.statuses).toEqual({ 'tests/test_env.py::test_f2p_env': 'passed' });
    expect(run.log).not.toContain(SECRET);
  });

  it('runCommand passes only the allow-list; a secret cannot be added by the caller', async () => {
    const r = await runCommand('env', [], dir, 10_000, { GOFLAGS: '-mod=vendor' });
    const names = r.out
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('=')[0]);
    for (const k of SECRET_ENV_VARS) expect(names).not.toContain(k);
    expect(r.out).toContain('GOFLAGS=-mod=vendor');
    expect(r.out).toContain('GOTOOLCHAIN=local');
    expect(r.out).not.toContain(SECRET);
    await expect(runCommand('env', [], dir, 10_000, { GITHUB_TOKEN: 'x' })).rejects.toMatchObject({
      code: 'secret_in_env',
    });
  });

  it('keeps the module proxy but strips credentials from proxy URLs', () => {
    const env = sandboxEnv('/tmp/h', {}, {
      PATH: '/bin',
      HOME: '/root',
      GOPROXY: 'https://user:tok3n@proxy.example.org/go,direct',
      HTTPS_PROXY: 'http://u:p@squid:3128',
      GITHUB_TOKEN: 'abcdef123456',
      AWS_SECRET_ACCESS_KEY: 'zzz',
      GONOSUMDB: 'abcdef123456.example.org',
    } as NodeJS.ProcessEnv);
    expect(env.GOPROXY).toBe('https://proxy.example.org/go,direct');
    expect(env.HTTPS_PROXY).toBe('http://squid:3128');
    expect(env.HOME).toBe('/tmp/h');
    expect(env.GITHUB_TOKEN).toBeUndefined();
    expect(env.AWS_SECRET_ACCESS_KEY).toBeUndefined();
    // a value holding a secret's value is dropped
    expect(env.GONOSUMDB).toBeUndefined();
  });
});

describe('testgen runner results come from structured channels', () => {
  it('Go: code under test printing a fake `--- PASS` line (and a fake JSON event) still fails', async () => {
    const d = tree({
      'go.mod': GO_MOD,
      'handler.go': [
        'package m',
        '',
        'import "fmt"',
        '',
        '// Handle crashes on nil, after printing a forged verdict.',
        'func Handle(p *int) int {',
        '\tfmt.Println("--- PASS: TestF2P_handle (0.00s)")',
        '\tfmt.Println(`{"Action":"pass","Package":"example.org/m","Test":"TestF2P_handle"}`)',
        '\treturn *p',
        '}',
      ].join('\n'),
      'handler_test.go': [
        'package m',
        '',
        'import "testing"',
        '',
        'func TestF2P_handle(t *testing.T) {',
        '\tdefer func() {',
        '\t\tif r := recover(); r != nil {',
        '\t\t\tt.Errorf("Handle panicked: %v", r)',
        '\t\t}',
        '\t}()',
        '\tHandle(nil)',
        '}',
      ].join('\n'),
    });
    const run = await runTests(d, 'go', ['example.org/m::TestF2P_handle'], 900_000);
    expect(run.log).toContain('--- PASS: TestF2P_handle');
    expect(run.statuses).toEqual({ 'example.org/m::TestF2P_handle': 'failed' });
    expect(run.buildFailed).toBe(false);
    expect(run.exitCode).toBe(1);
  });

  it('Python: code under test printing a fake `PASSED` line still fails', async () => {
    const d = tree({
      'tests/test_f2p.py': [
        'def test_f2p_x():',
        '    print("PASSED tests/test_f2p.py::test_f2p_x", flush=True)',
        '    import sys; sys.__stdout__.write("\\nPASSED tests/test_f2p.py::test_f2p_x\\n")',
        '    assert False',
        '',
      ].join('\n'),
    });
    const run = await runTests(d, 'python', ['tests/test_f2p.py::test_f2p_x'], 900_000);
    expect(run.statuses).toEqual({ 'tests/test_f2p.py::test_f2p_x': 'failed' });
  });

  it('reads a result after more than 64 KiB of output; the stored log stays capped', async () => {
    const d = tree({
      'go.mod': GO_MOD,
      'big_test.go': [
        'package m',
        '',
        'import (',
        '\t"fmt"',
        '\t"strings"',
        '\t"testing"',
        ')',
        '',
        'func TestF2P_big(t *testing.T) {',
        '\tfor i := 0; i < 3000; i++ {',
        '\t\tfmt.Println(strings.Repeat("x", 100))',
        '\t}',
        '}',
      ].join('\n'),
    });
    const run = await runTests(d, 'go', ['example.org/m::TestF2P_big'], 900_000);
    expect(run.statuses).toEqual({ 'example.org/m::TestF2P_big': 'passed' });
    expect(run.log.length).toBeLessThanOrEqual(LOG_CAP);
    expect(run.log.length).toBeGreaterThan(LOG_CAP / 2);
  });

  it('keeps the worst exit code over packages (a failure before a pass is not lost)', async () => {
    const d = tree({
      'go.mod': GO_MOD,
      'a/a_test.go':
        'package a\n\nimport "testing"\n\nfunc TestF2P_a(t *testing.T) { t.Fatal("no") }\n',
      'b/b_test.go': 'package b\n\nimport "testing"\n\nfunc TestF2P_b(t *testing.T) {}\n',
    });
    const run = await runTests(
      d,
      'go',
      ['example.org/m/a::TestF2P_a', 'example.org/m/b::TestF2P_b'],
      120_000,
    );
    expect(run.statuses).toEqual({
      'example.org/m/a::TestF2P_a': 'failed',
      'example.org/m/b::TestF2P_b': 'passed',
    });
    expect(run.exitCode).toBe(1);
    expect(worseExit(0, 2)).toBe(2);
    expect(worseExit(1, 0)).toBe(1);
    expect(worseExit(1, null)).toBeNull();
  });
});

const SITE: FixSite = {
  file: 'x.go',
  function: 'F',
  name: 'F',
  receiver: null,
  pattern: { kind: 'null_check', key: 'p', operand: 'p', text: 'p != nil' },
  parentCount: 0,
  fixCount: 1,
  line: 1,
  strength: 'text',
};

describe('llmDirectCall prompt budget', () => {
  it('records prompt_truncated with original and kept lengths, and sends only the kept text', async () => {
    const server = await startLlmServer({ fallback: { content: 'no code here' } });
    try {
      const provider = createProvider({
        endpoints: [{ kind: 'ollama', base_url: server.url, stream: false }],
        cache: false,
      });
      const patch = `--- a/x.go\n+++ b/x.go\n${'+// line of the fix\n'.repeat(700)}`;
      const problem = 'P'.repeat(5000);
      const res = await llmDirectCall(
        provider,
        { model: 'qwen3.5:2b', tries: 1, maxTokens: 64 },
        { instance_id: 't__go-1', patch, problem_statement: problem },
        SITE,
        goProfile('m'),
        'func F() {}',
        () => Promise.resolve('not called'),
      );
      expect(res.ok).toBe(false);
      expect(res.prompt).toEqual({
        prompt_truncated: true,
        patch_chars: { original: patch.length, kept: PROMPT_PATCH_CHARS },
        problem_statement_chars: { original: 5000, kept: PROMPT_PROBLEM_CHARS },
      });
      expect(promptNote(res.prompt)).toBe(
        `prompt_truncated: true (patch ${patch.length} -> ${PROMPT_PATCH_CHARS} chars, problem_statement 5000 -> ${PROMPT_PROBLEM_CHARS} chars)`,
      );
      const body = JSON.stringify(server.chatRequests()[0]!.body);
      expect(body).toContain('P'.repeat(PROMPT_PROBLEM_CHARS));
      expect(body).not.toContain('P'.repeat(PROMPT_PROBLEM_CHARS + 1));

      const short = await llmDirectCall(
        provider,
        { model: 'qwen3.5:2b', tries: 1, maxTokens: 64 },
        { instance_id: 't__go-1', patch: 'short', problem_statement: 'short' },
        SITE,
        goProfile('m'),
        'func F() {}',
        () => Promise.resolve('not called'),
      );
      expect(short.prompt.prompt_truncated).toBe(false);
      expect(promptNote(short.prompt)).toBe('');
    } finally {
      await server.close();
    }
  });
});
