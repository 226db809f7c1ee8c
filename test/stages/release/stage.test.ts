/**
 * The local release stages in a real pipeline run (real runner, real SQLite store): each dataset's
 * release follows its branch's final stage; a branch stopped at preflight blocks only its own
 * release; a second run with the same rows does nothing; the TeleResilienceBench release reads the
 * JSON Lines the instances stage wrote.
 */
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPipeline, type StageRegistry } from '../../../pipeline/runner.js';
import { openState, type OpenState } from '../../../pipeline/state.js';
import { EventBus } from '../../../pipeline/events.js';
import { defineStage, type Pipeline, type Stage } from '../../../pipeline/stage.js';
import { PreflightError } from '../../../pipeline/errors.js';
import { sha256 } from '../../../pipeline/hash.js';
import { localReleaseStages } from '../../../stages/release/stage.js';
import type { ReleaseWiring } from '../../../stages/release/release.js';
import { datasetRegistry } from '../../../stages/release/entry.js';
import { swe5gEntry } from '../../../stages/swe5g/dataset.js';
import { resilienceEntry } from '../../../stages/resilience/dataset.js';
import { readReleaseRows } from '../../../stages/release/assemble.js';
import { swe5gInstances, resilienceInstance } from './rows.js';

let dir: string;
let state: OpenState;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'release-stage-'));
  state = openState(dir);
});
afterEach(() => {
  state.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Stand-in for swe5g.validate: emits hand-built validated instances. */
const validateStage = defineStage<{ i: number }, unknown, unknown>({
  name: 'swe5g.validate',
  version: 1,
  needs: [],
  description: 'hand-built validated instances',
  *plan() {
    for (const [i, v] of swe5gInstances().entries()) yield { key: v.instance_id, input: { i } };
  },
  async run(item) {
    return swe5gInstances()[item.input.i];
  },
});

/** Stand-in for resilience.instances: writes instances.jsonl as the real stage does, or stops at preflight. */
function instancesStage(opts: { preflightFails: boolean }) {
  return defineStage<null, unknown, unknown>({
    name: 'resilience.instances',
    version: 1,
    needs: [],
    description: 'hand-built instances file',
    async preflight() {
      if (opts.preflightFails)
        throw new PreflightError(
          'ollama http://127.0.0.1:11434',
          'no model server answers',
          'start ollama',
        );
    },
    *plan() {
      yield { key: 'instances', input: null };
    },
    async run(_item, ctx) {
      const d = join(ctx.stateDir, 'resilience', 'instances');
      mkdirSync(d, { recursive: true });
      const text =
        [resilienceInstance('teleqna', 4), resilienceInstance('telemath', 1)]
          .map((r) => JSON.stringify(r))
          .join('\n') + '\n';
      writeFileSync(join(d, 'instances.jsonl'), text);
      return {
        dir: d,
        files: { instances: { path: join(d, 'instances.jsonl'), rows: 2, sha256: sha256(text) } },
      };
    },
  });
}

async function runAll(preflightFails: boolean) {
  const wiring: ReleaseWiring = {
    datasets: datasetRegistry([swe5gEntry, resilienceEntry]),
    pipelineStages: (name) => (name === 'swe5g' ? ['swe5g.validate'] : ['resilience.instances']),
    stageVersion: (name) => registry.get(name)?.version,
  };
  const release = localReleaseStages(wiring);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const registry: StageRegistry = new Map<string, Stage<any, any, any>>(
    [validateStage, instancesStage({ preflightFails }), ...release].map((s) => [s.name, s]),
  );
  const pipeline: Pipeline = {
    name: 'all',
    description: 'test',
    stages: ['swe5g.validate', 'resilience.instances', 'release.swe5g', 'release.resilience'],
  };
  return runPipeline({
    pipeline,
    registry,
    // hand-built rows, never audited (the audit gate: test/datasets/swe5g-audit-gate.test.ts)
    config: {
      version: 1,
      release: { verify_before_release: false },
      swe5g: { audit: { release_unaudited: true } },
    },
    configFile: join(dir, 'config.yaml'),
    stateDir: dir,
    store: state.store,
    blobs: state.blobs,
    bus: new EventBus(),
    signal: new AbortController().signal,
  });
}

describe('local release stages', () => {
  it('a branch stopped at preflight blocks only its own release', async () => {
    const result = await runAll(true);
    expect(result.stages['resilience.instances']!.status).toBe('blocked');
    expect(result.stages['release.resilience']!.status).toBe('blocked');
    expect(result.stages['release.swe5g']!.status).toBe('completed');
    expect(result.exitCode).toBe(3);
    const versions = readdirSync(join(dir, 'releases', 'swe-bench-5g'));
    expect(versions).toHaveLength(1);
    expect(versions[0]).toMatch(/^0\.0\.0-local\.[0-9a-f]{12}$/);
    const rows = readReleaseRows(join(dir, 'releases', 'swe-bench-5g', versions[0]!));
    expect(rows.map((r) => r.instance_id).sort()).toEqual([
      'free5gc__amf-161',
      'free5gc__smf-77',
      'magma__magma-12001',
      'open5gs__open5gs-2345',
    ]);
    expect(existsSync(join(dir, 'releases', 'teleresiliencebench'))).toBe(false);
    const out = state.store.item('release.swe5g', 'swe-bench-5g')!.output as {
      rows: number;
      status: string;
    };
    expect(out).toMatchObject({ rows: 4, status: 'written' });
  });

  it('releases both branches, and a second run with the same rows changes nothing', async () => {
    const first = await runAll(false);
    expect(first.exitCode).toBe(0);
    const trb = readdirSync(join(dir, 'releases', 'teleresiliencebench'));
    expect(trb).toHaveLength(1);
    const rows = readReleaseRows(join(dir, 'releases', 'teleresiliencebench', trb[0]!));
    expect(rows.map((r) => r.sample_id)).toEqual(['ot-lite:telemath:1', 'ot-lite:teleqna:4']);
    expect(rows[1]!.license).toBe('MIT');
    const second = await runAll(false);
    expect(second.exitCode).toBe(0);
    expect(second.stages['release.swe5g']).toMatchObject({ status: 'completed', ran: 0 });
    expect(readdirSync(join(dir, 'releases', 'teleresiliencebench'))).toEqual(trb);
  });
});
