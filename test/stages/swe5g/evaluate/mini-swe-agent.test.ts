/**
 * A real outside agent on SWE-Bench 5G: mini-swe-agent 2.4.6 from PyPI (`.ci/run` installs it),
 * run unchanged through its SWE-bench batch runner (`mini-extra swebench`, its own
 * `swebench.yaml` config, its own Docker environment), on a release this test makes: a small Go
 * repository built here, resolved, built into images and validated by telebench's own stages,
 * released with `telebench release --push` to a local Debian `docker-registry`, so each row's
 * `image_name` is a digest reference the agent runs in. The model is the scripted OpenAI-compatible
 * server (test/servers/llm-server.ts) reached by litellm through `openai/<name>` and `api_base`;
 * it answers with `bash` tool calls, as a tool-calling model does:
 * - `agent-fix` applies the gold fix with `patch` in /testbed, writes `git diff` to patch.txt and
 *   submits it (the submission command of mini-swe-agent's prompt);
 * - `agent-empty` submits at once, an empty `git diff`.
 * Each run's `preds.json` (the dict keyed by instance_id) is graded by `telebench evaluate
 * --predictions`: the first resolved, the second not. Then `telebench verify` of the pushed
 * release pulls the instance image by digest after its registry tag is removed locally, and
 * `telebench evaluate` pulls it (the digest `release --push` recorded) once the engine lost it.
 * Last, `telebench evaluate --dataset <release folder>` in a fresh state folder with the shipped
 * configuration, run from outside the checkout (a user with the release and a predictions file
 * only): the gold patch resolved, the empty one not, the image pulled by its image_name.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPipeline } from '../../../../pipeline/runner.js';
import { openState, type OpenState } from '../../../../pipeline/state.js';
import { EventBus } from '../../../../pipeline/events.js';
import type { Pipeline } from '../../../../pipeline/stage.js';
import { DockerClient } from '../../../../pipeline/providers/docker/client.js';
import { parseDigestRef } from '../../../../pipeline/providers/docker/registry.js';
import { swe5gConfigSchema } from '../../../../stages/swe5g/config.js';
import { resolveStage } from '../../../../stages/swe5g/resolve/resolve.js';
import { buildStage } from '../../../../stages/swe5g/build/build.js';
import { validateStage, type Validated } from '../../../../stages/swe5g/validate/validate.js';
import { readReleaseRows } from '../../../../stages/release/assemble.js';
import { buildFixture, type Fixture } from '../../../fixtures/repos/builder.js';
import { ensureTestBase } from '../../../fixtures/repos/harness.js';
import { startRegistry, type LocalRegistry } from '../../../fixtures/swarm.js';
import { runCli, ROOT } from '../../../fixtures/cli.js';
import {
  startLlmServer,
  type LlmServer,
  type RecordedRequest,
  type ScriptedReply,
} from '../../../servers/llm-server.js';
import { standInStages } from '../../../fixtures/swe5g-stand-ins.js';

const MINI_VERSION = '2.4.6';
// go-nil's module line: the same go.mod, so the env layer (the standard library compiled once)
// is the one the Go fixture tests already built; the instance layer is this test's own
const MODULE = 'example.com/amfmini';
const ID = 'fixture__amfagent-31';
const handler = (guard: boolean): string => `package ngap

import "errors"

// ErrMissingGNbID is returned when the request has no gNB id.
var ErrMissingGNbID = errors.New("missing GNbId")

// GNbID identifies a gNB.
type GNbID struct{ Value string }

// Request is the subset of an NG Setup Request the handler reads.
type Request struct{ GNbId *GNbID }

// HandleNGSetupRequest returns the gNB id of an NG Setup Request.
func HandleNGSetupRequest(req *Request) (string, error) {
${guard ? '\tif req.GNbId == nil {\n\t\treturn "", ErrMissingGNbID\n\t}\n' : ''}\treturn req.GNbId.Value, nil
}
`;
const existingTest = `package ngap

import "testing"

func TestHandleOK(t *testing.T) {
	id, err := HandleNGSetupRequest(&Request{GNbId: &GNbID{Value: "g1"}})
	if err != nil || id != "g1" {
		t.Fatalf("got %q %v", id, err)
	}
}
`;
const f2pTest = `package ngap

import (
	"errors"
	"fmt"
	"testing"
)

func TestSetupNilGNbId(t *testing.T) {
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		_, err = HandleNGSetupRequest(&Request{})
		return err
	}()
	if !errors.Is(err, ErrMissingGNbID) {
		t.Fatalf("want ErrMissingGNbID, got %v", err)
	}
}
`;
const PROBLEM =
  'AMF panics with a nil pointer dereference when an NG Setup Request carries no gNB id (GNbId is nil). HandleNGSetupRequest must return ErrMissingGNbID instead.';

const docker = new DockerClient();
let root: string;
let state: OpenState;
let fx: Fixture;
let server: LlmServer;
let registry: LocalRegistry;
let releaseDir: string;
let goldPatch: string;
let configFile: string;

const [filterFixture, testgenFixture] = standInStages(() => [fx]);
const stages = new Map<string, never>(
  [filterFixture, resolveStage, testgenFixture, buildStage, validateStage].map((s) => [
    s.name,
    s as never,
  ]),
);

/** The `bash` tool call mini-swe-agent's LitellmModel parses. */
const bash = (command: string): ScriptedReply => ({
  content: 'THOUGHT: next step.',
  toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command }) }],
});

/**
 * The scripted models, by step (tool results so far in the conversation). Both end with the
 * submission mini-swe-agent's swebench.yaml prescribes: `git diff ... > patch.txt`, then
 * `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt` as its own command.
 */
function agent(req: RecordedRequest): ScriptedReply {
  const body = req.body as { model: string; messages: { role: string }[] };
  const step = body.messages.filter((m) => m.role === 'tool').length;
  const submit = 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt';
  if (body.model === 'agent-empty') return bash(step === 0 ? 'git diff > patch.txt' : submit);
  const plan = [
    `patch --batch -p1 <<'TELEBENCH_PATCH'\n${goldPatch}TELEBENCH_PATCH`,
    'git diff -- ngap/handler.go > patch.txt && cat patch.txt',
    submit,
  ];
  return bash(plan[Math.min(step, plan.length - 1)]!);
}

/** `mini-extra` on PATH at the pinned version, or a failure saying how to install it. */
function requireMini(): void {
  let version = '';
  try {
    version = execFileSync('python3', ['-m', 'pip', 'show', 'mini-swe-agent'], {
      encoding: 'utf8',
    });
  } catch {
    version = '';
  }
  const got = /^Version: (\S+)/m.exec(version)?.[1];
  if (got !== MINI_VERSION || !existsSync(binOf('mini-extra')))
    throw new Error(
      `this test runs mini-swe-agent ${MINI_VERSION} from PyPI (found ${got ?? 'none'}): python3 -m pip install mini-swe-agent==${MINI_VERSION} (.ci/run does)`,
    );
}

function binOf(name: string): string {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

/** Runs `mini-extra swebench` unchanged on the release folder with model `openai/<model>`. */
function runMini(model: string, out: string): Promise<{ code: number; log: string }> {
  const args = [
    'swebench',
    '--subset',
    releaseDir,
    '--split',
    'test',
    '-o',
    out,
    '-m',
    `openai/${model}`,
    '-c',
    'swebench.yaml',
    '-c',
    `model.model_kwargs.api_base=${server.url}/v1`,
    '-c',
    'model.cost_tracking=ignore_errors',
    '-c',
    'agent.step_limit=12',
  ];
  const home = join(root, 'mini-home');
  return new Promise((done, fail) => {
    const child = spawn(binOf('mini-extra'), args, {
      cwd: root,
      env: {
        ...process.env,
        OPENAI_API_KEY: 'sk-telebench-test',
        MSWEA_SILENT_STARTUP: '1',
        MSWEA_GLOBAL_CONFIG_DIR: home,
        HF_HOME: join(home, 'hf'),
        HF_DATASETS_OFFLINE: '1',
        HF_HUB_OFFLINE: '1',
        LITELLM_LOCAL_MODEL_COST_MAP: 'True',
        TERM: 'dumb',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code: code ?? -1, log }));
  });
}

beforeAll(async () => {
  requireMini();
  await docker.ping();
  await ensureTestBase(docker);
  root = mkdtempSync(join(tmpdir(), 'telebench-mini-swe-agent-'));
  state = openState(join(root, 'state'));
  fx = buildFixture(join(root, 'src'), {
    owner: 'fixture',
    name: 'amfagent',
    language: 'go',
    pr: 31,
    base: {
      'go.mod': `module ${MODULE}\n\ngo 1.21\n`,
      'ngap/handler.go': handler(false),
      'ngap/handler_test.go': existingTest,
    },
    fix: { 'ngap/handler.go': handler(true) },
    f2pFiles: { 'ngap/handler_nil_test.go': f2pTest },
    FAIL_TO_PASS: [`${MODULE}/ngap::TestSetupNilGNbId`],
  });
  fx.candidate.problem_statement = PROBLEM;
  server = await startLlmServer({
    models: ['agent-fix', 'agent-empty'].map((name, i) => ({
      name,
      digest: `${i}`.padStart(64, '0'),
    })),
    fallback: agent,
  });
  registry = await startRegistry(docker);
  const config = {
    version: 1,
    stages: {},
    swe5g: swe5gConfigSchema.parse({
      environments: {
        git_url_base: join(root, 'src'),
        base_source: 'offline',
        limits: { timeout_s: 300, memory_mib: 1024 },
      },
    }),
  };
  configFile = join(root, 'config.yaml');
  writeFileSync(
    configFile,
    [
      'version: 1',
      'swe5g:',
      `  registry: ${join(ROOT, 'config', 'repos.yaml')}`,
      '  environments:',
      `    git_url_base: ${join(root, 'src')}`,
      '    base_source: offline',
      '    limits: { timeout_s: 300, memory_mib: 1024 }',
      // the pipeline above stops at validation (the agent's run is this test's subject; the
      // audit gate of a release has its own test, test/datasets/swe5g-audit-gate.test.ts)
      '  audit: { release_unaudited: true }',
      '',
    ].join('\n'),
  );
  const pipeline: Pipeline = {
    name: 'agent-fixture',
    description: 'fixture -> validated',
    stages: [...stages.keys()],
  };
  const r = await runPipeline({
    pipeline,
    registry: stages,
    config,
    configFile,
    stateDir: state.dir,
    store: state.store,
    blobs: state.blobs,
    bus: new EventBus(),
    signal: new AbortController().signal,
  });
  expect(r.exitCode).toBe(0);
  const v = state.store.item('swe5g.validate', ID);
  expect(v?.state, JSON.stringify(v?.error ?? v?.skipDetail)).toBe('done');
  goldPatch = (v!.output as Validated).patch;
  state.close();
  // the release, through the CLI as a user makes it (verified below by `telebench verify`)
  const rel = await runCli([
    '--state',
    join(root, 'state'),
    'release',
    'swe-bench-5g',
    '--version',
    '0.1.0',
    '--no-verify',
    '--push',
    registry.address,
    '--config',
    configFile,
  ]);
  expect(rel.code, rel.stderr).toBe(0);
  releaseDir = join(root, 'state', 'releases', 'swe-bench-5g', '0.1.0');
  state = openState(join(root, 'state'), { mode: 'read' });
}, 3_600_000);

afterAll(async () => {
  await server?.close();
  await registry?.stop();
  state?.close();
});

describe('mini-swe-agent on a SWE-Bench 5G release', () => {
  it('the released row names the pushed instance image by digest', () => {
    const rows = readReleaseRows(releaseDir);
    expect(rows).toHaveLength(1);
    const ref = parseDigestRef(String(rows[0]!.image_name));
    expect(ref?.registry).toBe(registry.address);
    expect(ref?.repo).toBe('telebench-instance');
  });

  it.each([
    ['agent-fix', true],
    ['agent-empty', false],
  ] as const)(
    '%s: its preds.json graded by telebench evaluate is resolved=%s',
    async (model, resolved) => {
      const out = join(root, `mini-${model}`);
      const run = await runMini(model, out);
      const preds = join(out, 'preds.json');
      expect(existsSync(preds), run.log.slice(-3000)).toBe(true);
      const dict = JSON.parse(readFileSync(preds, 'utf8')) as Record<
        string,
        { model_name_or_path: string; instance_id: string; model_patch: string | null }
      >;
      expect(Object.keys(dict)).toEqual([ID]);
      expect(dict[ID]!.model_name_or_path).toBe(`openai/${model}`);
      // the agent really worked in the image: its own git diff is the submission
      if (resolved) {
        expect(dict[ID]!.model_patch).toContain('+\tif req.GNbId == nil {');
        expect(dict[ID]!.model_patch).toMatch(
          /^diff --git a\/ngap\/handler\.go b\/ngap\/handler\.go/,
        );
      } else expect(dict[ID]!.model_patch ?? '').toBe('');
      const asked = server
        .chatRequests()
        .filter((r) => (r.body as { model: string }).model === model);
      expect(JSON.stringify(asked[0]!.body)).toContain('GNbId is nil');
      const graded = await runCli([
        '--state',
        state.dir,
        'evaluate',
        '--predictions',
        preds,
        '--config',
        configFile,
      ]);
      const line = graded.stderr.split('\n').find((l) => l.startsWith('evaluate: '));
      expect(line, graded.stderr.slice(-3000)).toContain(
        `(JSON object keyed by instance_id, sha256`,
      );
      expect(line).toContain(
        resolved ? '1 resolved, 0 not resolved' : '0 resolved, 1 not resolved',
      );
      expect(graded.code).toBe(0);
    },
  );

  it('telebench verify pulls the pushed image by digest when the engine lacks it', async () => {
    const ref = parseDigestRef(String(readReleaseRows(releaseDir)[0]!.image_name))!;
    // the registry-named tag the push made (this test's): gone, so only the registry has it
    await docker.docker.getImage(`${ref.registry}/${ref.repo}:${ref.tag}`).remove();
    expect(await docker.hasImage(ref.pullName)).toBe(false);
    const r = await runCli([
      '--state',
      state.dir,
      'verify',
      'swe-bench-5g',
      '0.1.0',
      '--config',
      configFile,
    ]);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      attempted: 1,
      gold_resolved: 1,
      empty_patch_resolved: 0,
    });
    expect(await docker.hasImage(ref.pullName)).toBe(true);
  });

  it('telebench evaluate pulls the pushed image when the engine lost it', async () => {
    const row = readReleaseRows(releaseDir)[0]!;
    const ref = parseDigestRef(String(row.image_name))!;
    const local = `${ref.repo}:${ref.tag}`;
    // this test's own instance image (no other test builds its tree): every name of it removed
    for (const name of [local, ref.pullName, `${ref.registry}/${local}`])
      await docker.docker
        .getImage(name)
        .remove({ force: true })
        .catch(() => undefined);
    expect(await docker.hasImage(local)).toBe(false);
    const preds = join(root, 'again.jsonl');
    writeFileSync(
      preds,
      `${JSON.stringify({ instance_id: ID, model_name_or_path: 'gold-again', model_patch: goldPatch })}\n`,
    );
    const graded = await runCli([
      '--state',
      state.dir,
      'evaluate',
      '--predictions',
      preds,
      '--config',
      configFile,
    ]);
    const line = graded.stderr.split('\n').find((l) => l.startsWith('evaluate: '));
    expect(line, graded.stderr.slice(-3000)).toContain('1 resolved, 0 not resolved');
    expect(await docker.hasImage(ref.pullName)).toBe(true);
  });

  it('telebench evaluate --dataset grades from the release folder alone: a fresh state, the image pulled', async () => {
    const ref = parseDigestRef(String(readReleaseRows(releaseDir)[0]!.image_name))!;
    // this test's own instance image: every name gone again, so only the registry has it
    for (const name of [
      `${ref.repo}:${ref.tag}`,
      ref.pullName,
      `${ref.registry}/${ref.repo}:${ref.tag}`,
    ])
      await docker.docker
        .getImage(name)
        .remove({ force: true })
        .catch(() => undefined);
    expect(await docker.hasImage(ref.pullName)).toBe(false);
    const preds = join(root, 'dataset-preds.jsonl');
    writeFileSync(
      preds,
      [
        { instance_id: ID, model_name_or_path: 'gold-dataset', model_patch: goldPatch },
        { instance_id: ID, model_name_or_path: 'empty-dataset', model_patch: '' },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    // no state of the build, the shipped default configuration: the release folder and the file
    const fresh = mkdtempSync(join(root, 'fresh-state-'));
    const graded = await runCli(
      ['--state', fresh, 'evaluate', '--dataset', releaseDir, '--predictions', preds],
      {},
      mkdtempSync(join(root, 'user-')),
    );
    const line = graded.stderr.split('\n').find((l) => l.startsWith('evaluate: '));
    expect(line, graded.stderr.slice(-3000)).toContain('1 resolved, 1 not resolved');
    expect(graded.code).toBe(0);
    expect(await docker.hasImage(ref.pullName)).toBe(true);
  });
});
