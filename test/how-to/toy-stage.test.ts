// docs/how-to/add-a-stage.md, done once: a toy stage defined as the recipe says, registered, run
// through the real runner on a real state directory, resumed, and redone after a version bump.
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPipeline, type StageRegistry } from '../../pipeline/runner.js';
import { openState, type OpenState } from '../../pipeline/state.js';
import { EventBus } from '../../pipeline/events.js';
import { defineStage, type Pipeline } from '../../pipeline/stage.js';
import { SkipItem } from '../../pipeline/errors.js';

interface ToyConfig {
  texts: Record<string, string>;
}

const loadStage = defineStage<{ text: string }, { text: string }, ToyConfig>({
  name: 'toy.load',
  version: 1,
  needs: [],
  description: 'one item per configured text',
  *plan(ctx) {
    for (const [key, text] of Object.entries(ctx.config.texts)) yield { key, input: { text } };
  },
  async run(item) {
    return { text: item.input.text };
  },
});

let runs = 0;
const countStage = (version: number) =>
  defineStage<{ text: string }, { words: number }, ToyConfig>({
    name: 'toy.count',
    version,
    needs: ['toy.load'],
    description: 'counts the words of every loaded text',
    itemNeeds: (item) => ({ 'toy.load': [item.key] }),
    *plan(ctx) {
      for (const o of ctx.store.outputs(loadStage))
        yield { key: o.key, input: { text: o.output.text } };
    },
    async run(item) {
      runs++;
      const words = item.input.text.split(/\s+/).filter(Boolean).length;
      if (words === 0) throw new SkipItem('empty_text', `${item.key} has no words`);
      return { words };
    },
  });

const toyPipeline: Pipeline<ToyConfig> = {
  name: 'toy',
  description: 'the how-to toy pipeline',
  stages: ['toy.load', 'toy.count'],
};

let dir: string;
let state: OpenState;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'telebench-howto-stage-'));
  state = openState(dir);
  runs = 0;
});
afterEach(() => {
  state.close();
  rmSync(dir, { recursive: true, force: true });
});

async function run(version: number, config: ToyConfig) {
  const registry: StageRegistry = new Map([loadStage, countStage(version)].map((s) => [s.name, s]));
  return runPipeline({
    pipeline: toyPipeline,
    registry,
    config,
    configFile: join(dir, 'config.yaml'),
    stateDir: dir,
    store: state.store,
    blobs: state.blobs,
    bus: new EventBus(),
    signal: new AbortController().signal,
  });
}

describe('how-to: add a stage', () => {
  const config = { texts: { a: 'the AMF registers the UE', b: '', c: 'N2 setup' } };

  it('runs, records a content outcome as a skip, resumes without repeating, redoes after a version bump', async () => {
    const first = await run(1, config);
    expect(first.exitCode).toBe(0);
    expect(runs).toBe(3);
    expect(state.store.item('toy.count', 'a')?.output).toEqual({ words: 5 });
    expect(state.store.item('toy.count', 'b')).toMatchObject({
      state: 'skipped',
      skipReason: 'empty_text',
    });

    const again = await run(1, config);
    expect(again.exitCode).toBe(0);
    expect(runs).toBe(3); // done and skipped items are not run again

    // a changed input re-runs only its item
    await run(1, { texts: { ...config.texts, c: 'N2 setup request' } });
    expect(runs).toBe(4);
    expect(state.store.item('toy.count', 'c')?.output).toEqual({ words: 3 });

    // a version bump makes every stored output stale
    await run(2, { texts: { ...config.texts, c: 'N2 setup request' } });
    expect(runs).toBe(7);
  });
});
