import { UDM85_GOLD } from '../../../fixtures/udm-pr85.js';
import { describe, it, expect } from 'vitest';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../../../pipeline/manifest.js';
import {
  assembleSkill,
  checkSkill,
  documentFor,
  goldLeaks,
  loadAreaDocuments,
} from '../../../../stages/swe5g/evaluate/skills.js';
import {
  byCategory,
  failureStage,
  skillsAB,
  summarize,
  type Attempt,
} from '../../../../stages/swe5g/evaluate/metrics.js';
import { chooseContext } from '../../../../stages/swe5g/evaluate/context.js';
import { reportTables } from '../../../../stages/swe5g/evaluate/report.js';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

const gold = UDM85_GOLD;
const issue =
  'UDM panics when the AuthenticationSubscription has no SequenceNumber (TS 29.503 Nudm_UEAU generate-auth-data).';

describe('skills: assembly and checks', () => {
  const docs = loadAreaDocuments(join(PROJECT_ROOT, 'skills'));
  it('assembles a 300-400 token skill citing TS 29.503 from the area document, accepted', () => {
    const found = documentFor(['TS 29.503'], docs)!;
    expect(found.doc.file).toBe('ts29503-nudm.md');
    const text = assembleSkill(found.doc, found.ref, issue, 400);
    const check = checkSkill(text, goldLeaks(gold, issue), { min: 300, max: 400 });
    expect(check.problems).toEqual([]);
    expect(check.tokens).toBeGreaterThanOrEqual(300);
    expect(check.tokens).toBeLessThanOrEqual(400);
    expect(text).toContain('**Key implication.**');
    expect(text.trim().split('\n').at(-1)).not.toBe('');
  });
  it('finds the gold identifiers (not those the issue names) and rejects a skill that leaks one', () => {
    const leaks = goldLeaks(gold, issue);
    expect(leaks.identifiers).toContain('problemDetails');
    expect(leaks.identifiers).toContain('authenticationRejected');
    expect(leaks.identifiers).toContain('GenerateAuthDataProcedure');
    expect(leaks.identifiers).not.toContain('SequenceNumber'); // named by the issue
    const found = documentFor(['TS 29.503 §6.3'], docs)!;
    const leaky = assembleSkill(
      {
        ...found.doc,
        body: `${found.doc.body}\n\n- Use \`authenticationRejected\` when the SQN is missing.`,
      },
      found.ref,
      issue,
      400,
    );
    const check = checkSkill(leaky, leaks, { min: 100, max: 800 });
    expect(check.ok).toBe(false);
    expect(check.problems.join()).toContain('authenticationRejected');
    const line = checkSkill(
      `TS 29.503 text\n\tif authSubs.AuthenticationSubscription.SequenceNumber == nil {\n`,
      leaks,
      { min: 1, max: 800 },
    );
    expect(line.problems.join()).toContain('added line');
    expect(checkSkill('no citation here', leaks, { min: 1, max: 100 }).problems.join()).toContain(
      'cited',
    );
  });
});

const att = (over: Partial<Attempt>): Attempt => ({
  run: 'm multi',
  model: 'm',
  mode: 'multi',
  condition: 'none',
  instance_id: 'i1',
  bug_category: 'nil_pointer',
  gold_patch: 'diff --git a/a.go b/a.go\n',
  excluded: null,
  files_named: ['a.go'],
  last_edits: [{ index: 1, file: 'a.go', applied: true, rule: 'exact', detail: '' }],
  last_blocks: 1,
  model_patch: 'diff --git a/a.go b/a.go\n',
  grade: { patch_applied: true, resolved: true, build_failures: [] },
  tokens: 1000,
  skill_spec: null,
  turns: 1,
  ...over,
});

describe('metrics against hand counts', () => {
  // 7 attempts of one run: resolved, incomplete, compile, apply (git apply refused the patch),
  // format (malformed), excluded, format (a SEARCH that matched nothing: the paper's format error)
  const attempts: Attempt[] = [
    att({ instance_id: 'i1' }),
    att({
      instance_id: 'i2',
      bug_category: 'logic',
      grade: { patch_applied: true, resolved: false, build_failures: [] },
    }),
    att({
      instance_id: 'i3',
      grade: { patch_applied: true, resolved: false, build_failures: ['x/ngap'] },
    }),
    att({
      instance_id: 'i4',
      files_named: ['b.go'],
      model_patch: 'diff --git a/b.go b/b.go\n',
      grade: { patch_applied: false, resolved: false, build_failures: [] },
    }),
    att({
      instance_id: 'i5',
      bug_category: 'logic',
      last_edits: [{ index: 1, file: 'a.go', applied: false, reason: 'malformed', detail: '' }],
      model_patch: '',
      grade: { patch_applied: true, resolved: false, build_failures: [] },
    }),
    att({ instance_id: 'i6', excluded: 'prompt_too_long', grade: null, tokens: 0 }),
    att({
      instance_id: 'i7',
      bug_category: 'logic',
      files_named: ['b.go'],
      last_edits: [{ index: 1, file: 'b.go', applied: false, reason: 'no_match', detail: '' }],
      model_patch: '',
      grade: { patch_applied: true, resolved: false, build_failures: [] },
    }),
  ];
  it('funnel, failure stages, tokens', () => {
    const [s] = summarize(attempts);
    expect(s).toMatchObject({ attempted: 7, excluded: 1, diagnosed: 4, applied: 3, resolved: 1 });
    expect(s!.stages).toEqual({ format: 2, apply: 1, compile: 1, incomplete: 1 });
    expect(s!.tokens_total).toBe(6000);
    expect(failureStage(attempts[0]!)).toBeNull();
    expect(failureStage(attempts[5]!)).toBeNull();
  });
  it('the report names where each attempt failed', () => {
    const each = reportTables(attempts).find((t) => t.title.startsWith('Where each attempt'))!;
    expect(each.rows.map((r) => [r[1], r[4]])).toEqual([
      ['i1', 'resolved'],
      ['i2', 'incomplete'],
      ['i3', 'compile'],
      ['i4', 'apply'],
      ['i5', 'format'],
      ['i6', 'excluded (prompt_too_long)'],
      ['i7', 'format'],
    ]);
  });
  it('resolve rate by category (Table IV)', () => {
    const cats = byCategory(attempts);
    expect(cats.find((c) => c.category === 'nil_pointer')).toMatchObject({
      attempted: 4,
      resolved: 1,
      rate: 0.25,
    });
    expect(cats.find((c) => c.category === 'logic')).toMatchObject({
      attempted: 3,
      resolved: 0,
      rate: 0,
    });
  });
  it('skills A/B per specification (Table VI): Pass-, Pass+, dP, C+, rho', () => {
    const no = (id: string, resolved: boolean): Attempt =>
      att({
        instance_id: id,
        grade: { patch_applied: true, resolved, build_failures: [] },
        tokens: 1000,
      });
    const yes = (id: string, resolved: boolean, spec: string): Attempt =>
      att({
        run: 'm multi +skill',
        condition: 'skill',
        instance_id: id,
        skill_spec: spec,
        grade: { patch_applied: true, resolved, build_failures: [] },
        tokens: 1100,
      });
    const rows = skillsAB([
      no('p1', false),
      yes('p1', true, 'TS 29.514'),
      no('p2', false),
      yes('p2', false, 'TS 29.514'),
      no('p3', true),
      yes('p3', true, 'TS 29.514'),
      no('p4', true),
      yes('p4', true, 'TS 38.413'),
    ]);
    const r514 = rows.find((r) => r.spec === 'TS 29.514')!;
    expect(r514.instances).toBe(3);
    expect(r514.pass_minus).toBeCloseTo(1 / 3);
    expect(r514.pass_plus).toBeCloseTo(2 / 3);
    expect(r514.delta).toBeCloseTo(1 / 3);
    expect(r514.cost_plus).toBe(1100);
    expect(r514.overhead).toBeCloseTo(0.1);
    expect(rows.find((r) => r.spec === 'TS 38.413')!.delta).toBe(0);
  });
});

describe('source context rule', () => {
  it('chooses declarations from the issue signals, never reads a gold file list', () => {
    const root = mkdtempSync(join(tmpdir(), 'telebench-ctx-'));
    mkdirSync(join(root, 'internal/ngap'), { recursive: true });
    writeFileSync(
      join(root, 'internal/ngap/handler.go'),
      'package ngap\n\n// A does a.\nfunc handleUplinkRANConfigurationTransferMain(x *T) {\n\tx.GNbId.Value = 1\n}\n\nfunc unrelated() {}\n',
    );
    writeFileSync(
      join(root, 'internal/ngap/handler_test.go'),
      'package ngap\n\nfunc TestUplinkRANConfigurationTransfer() {}\n',
    );
    const ctx = chooseContext(
      root,
      'go',
      'panic: runtime error\ngoroutine 1:\nngap.handleUplinkRANConfigurationTransferMain(0x0)\n\tinternal/ngap/handler.go:5',
      { maxTokens: 2000, minIdentifier: 6 },
    );
    expect(ctx.chunks).toEqual([
      {
        path: 'internal/ngap/handler.go',
        start: 3,
        end: 6,
        score: expect.any(Number),
        why: expect.arrayContaining([
          'frame:handleUplinkRANConfigurationTransferMain',
          'file',
          'dir',
        ]),
      },
    ]);
    expect(ctx.text).toContain('// A does a.');
    expect(ctx.text).not.toContain('TestUplinkRANConfigurationTransfer');
  });
});
