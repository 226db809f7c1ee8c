/**
 * `swe5g.evaluation.skills.writer: model`: a model writes each instance's skill from the area
 * document and the issue; its answer goes through the same checks as a template skill. A skill
 * that names a gold-patch identifier is rejected, recorded and replaced by the template skill
 * (`fallback: template`) or leaves the instance without a skill (`fallback: none`); a clean one is
 * used as written. Scripted models on the local model server (real Ollama protocol), then once
 * with the real SmolLM2-135M in process. Real SQLite state and the real runner; the validated
 * instance comes from a stand-in `swe5g.validate` (the udm_pr85 gold patch and issue).
 */
import { UDM85_GOLD } from '../../../fixtures/udm-pr85.js';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { runStages } from '../../../fixtures/run-stages.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openState, type OpenState } from '../../../../pipeline/state.js';
import { defineStage } from '../../../../pipeline/stage.js';
import { PROJECT_ROOT } from '../../../../pipeline/manifest.js';
import { swe5gConfigSchema } from '../../../../stages/swe5g/config.js';
import { validateStage } from '../../../../stages/swe5g/validate/validate.js';
import { skillsStage, type SkillOutput } from '../../../../stages/swe5g/evaluate/stages.js';
import { skillsTable } from '../../../../stages/swe5g/evaluate/report.js';
import {
  assembleSkill,
  checkSkill,
  documentFor,
  goldLeaks,
  loadAreaDocuments,
} from '../../../../stages/swe5g/evaluate/skills.js';
import {
  startLlmServer,
  type LlmServer,
  type RecordedRequest,
} from '../../../servers/llm-server.js';
import { smollm2Path, SMOLLM2_NAME } from '../../../fixtures/smollm2.js';
import { storeReader } from '../../../../pipeline/runner.js';

const ID = 'free5gc__udm-85';
const gold = UDM85_GOLD;
const problem =
  'UDM panics in GenerateAuthData when the authentication subscription has no SequenceNumber.\n\nWhen the UDR returns an AuthenticationSubscription without a sequenceNumber, the UDM dereferences it and crashes (TS 29.503 Nudm_UEAU generate-auth-data); it must answer with a ProblemDetails instead.';

/** Stand-in `swe5g.validate` at the real version: one complete instance citing TS 29.503. */
const validateStub = defineStage<unknown, unknown, unknown>({
  name: 'swe5g.validate',
  version: validateStage.version,
  needs: [],
  description: 'stand-in',
  *plan() {
    yield {
      key: ID,
      input: {
        resolved: { registry_id: 'udm', test_dirs: [], test_patch: '', language: 'go' },
        testgen: { f2p_test_patch: '' },
        built: { source_dir: '/nonexistent', module_dir: '' },
      },
    };
  },
  run: async () => ({
    instance_id: ID,
    repo: 'free5gc/udm',
    base_commit: 'b'.repeat(40),
    problem_statement: problem,
    incomplete: false,
    patch: gold,
    test_patch: '',
    FAIL_TO_PASS: [],
    PASS_TO_PASS: [],
    bug_category: 'nil_pointer',
    nf: 'UDM',
    spec_refs: ['TS 29.503'],
    images: { instance: 'none' },
    image_recipe: 'go',
  }),
});

const docs = loadAreaDocuments(join(PROJECT_ROOT, 'skills'));
const found = documentFor(['TS 29.503'], docs)!;
/** A clean skill of the right size: what a capable writer could answer. */
const cleanSkill = assembleSkill(found.doc, found.ref, problem, 400);
/** The same skill with one sentence naming the gold patch's `authenticationRejected`. */
const leakySkill = cleanSkill.replace(
  '**Key implication.**',
  'Answer with `authenticationRejected` when the SQN is missing.\n\n**Key implication.**',
);

function reply(req: RecordedRequest): { content: string } {
  const body = req.body as { model: string };
  return { content: body.model.startsWith('skill-leaky') ? leakySkill : cleanSkill };
}

let server: LlmServer;
const states: OpenState[] = [];
beforeAll(async () => {
  server = await startLlmServer({
    models: ['skill-leaky', 'skill-clean'].map((name, i) => ({
      name,
      digest: `${i}`.padStart(64, '0'),
    })),
    fallback: reply,
  });
});
afterAll(async () => {
  await server?.close();
  states.forEach((s) => s.close());
});

async function runSkills(model: Record<string, unknown>, fallback: 'template' | 'none') {
  const root = mkdtempSync(join(tmpdir(), 'telebench-skill-writer-'));
  const state = openState(join(root, 'state'));
  states.push(state);
  const config = {
    version: 1,
    stages: {},
    swe5g: swe5gConfigSchema.parse({
      evaluation: { skills: { writer: 'model', model, fallback } },
    }),
  };
  const registry = new Map([validateStub, skillsStage].map((s) => [s.name, s as never]));
  const result = await runStages(state, {
    registry,
    stages: ['swe5g.validate', 'swe5g.eval.skills'],
    config,
    root,
  });
  return { result, item: state.store.item('swe5g.eval.skills', ID)!, state };
}

const scripted = (name: string) => ({
  name,
  llm: { endpoints: [{ kind: 'ollama', base_url: server.url }], cache: false },
});

describe('skills written by a model', () => {
  it('the config asks for skills.model when the writer is a model', () => {
    expect(() => swe5gConfigSchema.parse({ evaluation: { skills: { writer: 'model' } } })).toThrow(
      /skills.writer is `model`: set skills.model/,
    );
  });

  it('a skill leaking a gold identifier is rejected, recorded, and the template skill is used', async () => {
    const { result, item, state } = await runSkills(scripted('skill-leaky'), 'template');
    expect(result.exitCode).toBe(0);
    // the report names the rejection
    // only item records are read: no stage version is needed
    const table = skillsTable({ store: storeReader(state.store, () => undefined) } as never);
    expect(table.rows).toHaveLength(1);
    expect(table.rows[0]!.slice(0, 3)).toEqual([ID, 'TS 29.503', 'template']);
    expect(table.rows[0]![4]).toMatch(
      /^skill-leaky: rejected \(.*names gold-patch identifier\(s\) authenticationRejected/,
    );
    expect(item.state).toBe('done');
    const out = item.output as SkillOutput;
    expect(out.writer).toBe('template');
    expect(out.text).not.toContain('authenticationRejected');
    expect(out.check.ok).toBe(true);
    expect(out.model_attempt?.check.ok).toBe(false);
    expect(out.model_attempt?.check.problems.join()).toContain(
      'names gold-patch identifier(s) authenticationRejected',
    );
    expect(out.model_attempt?.text).toContain('authenticationRejected');
    // the prompt carried the issue and the area document, never the gold patch
    const sent = JSON.stringify(
      server
        .chatRequests()
        .map((r) => r.body as { model: string })
        .find((b) => b.model === 'skill-leaky'),
    );
    expect(sent).toContain('SequenceNumber');
    expect(sent).toContain('**Key implication.**');
    expect(sent).not.toContain('authenticationRejected');
    expect(sent).not.toContain('generate_auth_data.go');
  });

  it('with fallback none the leaking skill leaves the instance without a skill (skipped, reasons kept)', async () => {
    const { item } = await runSkills(scripted('skill-leaky'), 'none');
    expect(item.state).toBe('skipped');
    expect(item.skipReason).toBe('skill_rejected');
    expect(item.skipDetail).toContain('skill written by skill-leaky rejected');
    expect(item.skipDetail).toContain('authenticationRejected');
  });

  it('a clean skill is used as the model wrote it', async () => {
    const { item } = await runSkills(scripted('skill-clean'), 'template');
    const out = item.output as SkillOutput;
    expect(out.writer).toBe('model');
    expect(out.text).toBe(cleanSkill.trim() + '\n');
    expect(out.model_attempt?.check.ok).toBe(true);
  });

  it('SmolLM2-135M writes a skill in process: its answer is checked like any other, never used unchecked', async () => {
    const { result, item, state } = await runSkills(
      {
        name: SMOLLM2_NAME,
        llm: {
          endpoints: [
            {
              kind: 'embedded',
              model: SMOLLM2_NAME,
              source: [{ path: smollm2Path() }],
              gpu: false,
              threads: 1,
            },
          ],
        },
        max_tokens: 600,
        num_ctx: 4096,
      },
      'template',
    );
    expect(result.exitCode).toBe(0);
    const out = item.output as SkillOutput;
    const attempt = out.model_attempt!;
    expect(attempt.model).toBe(SMOLLM2_NAME);
    expect(attempt.text.trim().length).toBeGreaterThan(0);
    expect(state.blobs.has(attempt.answer)).toBe(true);
    // the stored check is the check of the stored text
    expect(attempt.check).toEqual(
      checkSkill(attempt.text, goldLeaks(gold, problem), { min: 300, max: 400 }),
    );
    // used only when it passed; else the template skill, which passes
    expect(out.writer).toBe(attempt.check.ok ? 'model' : 'template');
    expect(out.check.ok).toBe(true);
    expect(out.text).toBe(
      attempt.check.ok ? attempt.text : assembleSkill(found.doc, found.ref, problem, 400),
    );
    console.log(
      `SmolLM2 skill: ${attempt.check.tokens} tokens, ${attempt.check.ok ? 'accepted' : `rejected: ${attempt.check.problems.join('; ')}`}`,
    );
  }, 3_600_000);
});
