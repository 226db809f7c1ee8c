/**
 * Hand-built rows for the release tests (the upstream stages are built in parallel): validated
 * SWE-Bench 5G instances and TeleResilienceBench instances in the shapes those stages produce.
 */
import { execFileSync } from 'node:child_process';
import type { Resolved, TestGen, ValidatedInstance } from '../../../stages/swe5g/types.js';
import type { Fixture } from '../../fixtures/repos/builder.js';
import { mirrorPath } from '../../../stages/swe5g/resolve/resolve.js';
import { swe5gRowOf } from '../../../stages/swe5g/dataset.js';
import type { Swe5gRow } from '../../../datasets/index.js';

const hex = (n: number, c: string): string =>
  c.repeat(40).slice(0, 40 - String(n).length) + String(n);

/** A validated instance of `repo` PR `pr` (complete unless `incomplete`). */
export function validated(
  repo: string,
  pr: number,
  over: Partial<ValidatedInstance> = {},
): ValidatedInstance {
  const [owner, name] = repo.split('/') as [string, string];
  return {
    instance_id: `${owner}__${name}-${pr}`,
    repo,
    base_commit: hex(pr, 'a'),
    patch: `diff --git a/internal/ngap/handler.go b/internal/ngap/handler.go\n--- a/internal/ngap/handler.go\n+++ b/internal/ngap/handler.go\n@@ -1 +1,2 @@\n+if gnbId == nil { return }\n`,
    test_patch: `diff --git a/internal/ngap/handler_test.go b/internal/ngap/handler_test.go\n+++ b/internal/ngap/handler_test.go\n`,
    problem_statement: `AMF crashes on NGSetupRequest without GNbId (#${pr})`,
    hints_text: '',
    created_at: '2024-03-01T10:00:00Z',
    version: '1.21',
    environment_setup_commit: hex(pr, 'a'),
    FAIL_TO_PASS: [`github.com/${repo}/internal/ngap::TestNilGNbId`],
    PASS_TO_PASS: [`github.com/${repo}/internal/ngap::TestHandler`],
    alias: `${name}_pr${pr}`,
    nf: name.toUpperCase(),
    bug_category: 'nil_pointer',
    strategy: 'A',
    spec_refs: ['TS 38.413'],
    license: owner === 'free5gc' ? 'Apache-2.0' : owner === 'open5gs' ? 'AGPL-3.0' : 'BSD-3-Clause',
    images: { base: 'telebench-base:go', env: 'telebench-env:x', instance: 'telebench-inst:y' },
    image_recipe: 'go',
    toolchain: 'go1.26.8',
    executor: 'docker',
    step_logs: {},
    dropped_flaky: [],
    incomplete: false,
    ...over,
  };
}

/**
 * A validated instance of a resolved Go fixture: its real commits, version and patches (the test
 * patch followed by the generated F2P test), with the given test ids.
 */
export function validatedFixture(
  res: Resolved,
  testgen: Pick<TestGen, 'f2p_test_patch'>,
  tests: { FAIL_TO_PASS: string[]; PASS_TO_PASS: string[] },
): ValidatedInstance {
  return validated(res.repo, res.pr_number, {
    instance_id: res.instance_id,
    base_commit: res.base_commit,
    environment_setup_commit: res.environment_setup_commit,
    version: res.version,
    patch: res.patch,
    test_patch: res.test_patch + testgen.f2p_test_patch,
    ...tests,
    image_recipe: 'go',
  });
}

/**
 * The released row of a Go fixture (test/fixtures/repos/go-nil.ts) with its bare mirror cloned
 * into `state` (what the local executor exports): patch = the non-test diff of the PR, test_patch =
 * the generated fail-to-pass test.
 */
export function fixtureRow(
  fx: Fixture,
  state: string,
  tests: { FAIL_TO_PASS: string[]; PASS_TO_PASS: string[] },
): Swe5gRow {
  const { candidate: c, testgen: tg } = fx;
  const patch = execFileSync('git', ['diff', c.base_commit, fx.fixCommit, '--', ':!*_test.go'], {
    cwd: fx.dir,
    encoding: 'utf8',
  });
  execFileSync('git', ['clone', '-q', '--bare', fx.dir, mirrorPath(state, c.repo)]);
  return swe5gRowOf(
    validated(c.repo, c.pr_number, {
      instance_id: c.instance_id,
      base_commit: c.base_commit,
      environment_setup_commit: c.base_commit,
      patch,
      test_patch: tg.f2p_test_patch,
      ...tests,
      version: '1.21',
      image_recipe: 'go',
    }),
    'git',
  )!;
}

/** The SWE-Bench 5G rows of the tests: 2 free5GC, 1 Open5GS, 1 Magma, 1 incomplete. */
export function swe5gInstances(): ValidatedInstance[] {
  return [
    validated('free5gc/amf', 161),
    validated('free5gc/smf', 77, { bug_category: 'logic', strategy: 'shipped' }),
    validated('open5gs/open5gs', 2345, {
      nf: 'MME',
      image_recipe: 'c-meson',
      FAIL_TO_PASS: ['unit::s1ap-test'],
    }),
    validated('magma/magma', 12001, {
      nf: 'library',
      image_recipe: 'python',
      FAIL_TO_PASS: ['lte/tests/test_x.py::test_y'],
    }),
    validated('free5gc/udm', 9, { problem_statement: '', incomplete: true }),
  ];
}

/** A TeleResilienceBench instance as `resilience.truncate` stores it. */
export function resilienceInstance(
  subset: string,
  row: number,
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  const numeric = subset === 'telemath';
  return {
    sample_id: `ot-lite:${subset}:${row}`,
    sub_benchmark: subset,
    question: `Question ${row} of ${subset}?`,
    ...(numeric ? {} : { choices: ['alpha', 'beta', 'gamma', 'alpha'] }),
    correct_answer: numeric ? '0.033' : 'alpha',
    incorrect_answer: numeric ? '2.0' : 'beta',
    half_reasoning_trace: `Thinking Process:\n\n1. Read the question about ${subset}. It asks something.`,
    source: 'ot-lite',
    subset,
    row,
    role: numeric ? 'auxiliary' : 'main',
    kind: numeric ? 'numeric' : 'mc',
    difficulty: null,
    correct_index: numeric ? null : 0,
    incorrect_index: numeric ? null : 1,
    correct_value: numeric ? 0.033 : null,
    incorrect_value: numeric ? 2.0 : null,
    generator: {
      model: 'qwen3.5:2b',
      model_digest: null,
      server_version: '0.18.0',
      provider: 'ollama',
      profile: 'default',
      options: { think: true, num_ctx: 8192, num_predict: 4096, temperature: 0, seed: 0 },
    },
    prompt_template: 'base-mc',
    prompt_version: 'v1',
    parse_rule: 'strict',
    tokens: {
      prompt_server: 300,
      prompt_local: 298,
      output: 900,
      reasoning_full: 800,
      reasoning_half: 390,
      midpoint: 400,
    },
    half_trace: { tokenizer: 'cl100k_base', boundary: 'reference', cut: 'sentence' },
    ...over,
  };
}
