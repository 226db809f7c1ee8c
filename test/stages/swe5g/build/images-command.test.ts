import { describe, it, expect } from 'vitest';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPipeline } from '../../../../pipeline/runner.js';
import { openState } from '../../../../pipeline/state.js';
import { EventBus } from '../../../../pipeline/events.js';
import { defineStage } from '../../../../pipeline/stage.js';
import { SkipItem } from '../../../../pipeline/errors.js';
import { neededImages } from '../../../../stages/swe5g/build/images-command.js';

// Records shaped like swe5g.build outputs and a validate stage that rejects one instance: what
// `images prune` must keep is decided from the store alone.
const build = defineStage<string, unknown, unknown>({
  name: 'swe5g.build',
  version: 1,
  needs: [],
  description: 'fixture build records',
  *plan() {
    for (const k of ['kept', 'rejected', 'pending']) yield { key: k, input: k };
  },
  run: async (item) => ({
    images: { base: 'b:shared', env: `e:${item.input}`, instance: `i:${item.input}` },
  }),
});
const validate = defineStage<string, unknown, unknown>({
  name: 'swe5g.validate',
  version: 1,
  needs: ['swe5g.build'],
  description: 'fixture validation',
  *plan() {
    yield { key: 'kept', input: 'kept' };
    yield { key: 'rejected', input: 'rejected' };
  },
  run: async (item) => {
    if (item.input === 'rejected') throw new SkipItem('f2p_fails_after_fix', 'fixture');
    return {};
  },
});

describe('images prune: neededImages', () => {
  it('keeps images of validated and pending instances, not of rejected ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'telebench-prune-'));
    const st = openState(dir);
    await runPipeline({
      pipeline: { name: 'p', description: '', stages: ['swe5g.build', 'swe5g.validate'] },
      registry: new Map([build, validate].map((s) => [s.name, s as never])),
      config: {},
      configFile: join(dir, 'c.yaml'),
      stateDir: dir,
      store: st.store,
      blobs: st.blobs,
      bus: new EventBus(),
      signal: new AbortController().signal,
    });
    st.close();
    expect([...neededImages(dir)].sort()).toEqual([
      'b:shared',
      'e:kept',
      'e:pending',
      'i:kept',
      'i:pending',
    ]);
    // once `kept` is in a written release, its own images are no longer needed (verify rebuilds
    // them from the row); the shared base stays for the pending instance
    const rel = join(dir, 'releases', 'swe-bench-5g', '1.0.0');
    mkdirSync(join(rel, 'data'), { recursive: true });
    writeFileSync(join(rel, 'data', 'all.jsonl'), `${JSON.stringify({ instance_id: 'kept' })}\n`);
    writeFileSync(
      join(rel, 'manifest.json'),
      JSON.stringify({
        dataset: 'swe-bench-5g',
        version: '1.0.0',
        created_at: '2026-01-01T00:00:00Z',
        files: { 'data/all.jsonl': 'x' },
      }),
    );
    expect([...neededImages(dir)].sort()).toEqual(['b:shared', 'e:pending', 'i:pending']);
  });
});
