/**
 * The evaluation report notices that construction changed the instances after the evaluation read
 * them (new-user trial: construction grew to 18 instances, the report still showed 12 replies and
 * said nothing). A real SQLite store, the digest the `resilience-eval.instances` plan records.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../../pipeline/store/store.js';
import { staleNote } from '../../../stages/resilience-eval/pipeline.js';
import { constructionDigest } from '../../../stages/resilience-eval/stages.js';
import { stageContext } from '../../../pipeline/runner.js';
import { registry } from '../../../stages/index.js';
import type { HasResilienceEval } from '../../../stages/resilience-eval/config.js';

const dir = mkdtempSync(join(tmpdir(), 'telebench-stale-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function put(store: Store, stage: string, key: string, input: unknown, output: unknown): void {
  const json = JSON.stringify(input);
  const version = registry.get(stage)!.version;
  store.planItem(stage, key, version, `h-${stage}-${key}-${json.length}`, json, false);
  store.startItem(stage, key, 'a1', 'run1');
  store.finishItem(stage, key, 'a1', { state: 'done', output });
}

describe('report resilience-eval: stale evaluation', () => {
  it('says so when resilience.truncate changed after resilience-eval.instances read it', () => {
    const store = new Store(join(dir, 'state.db'));
    const ctxOf = (config: HasResilienceEval) =>
      stageContext<HasResilienceEval>(
        { config, configFile: join(dir, 'c.yaml'), stateDir: dir, log: () => undefined } as never,
        store,
        registry,
      );
    const ctx = ctxOf({});
    put(store, 'resilience.truncate', 'teleqna:1', {}, { sample_id: 'teleqna:1' });
    put(
      store,
      'resilience-eval.instances',
      'instances',
      { construction: constructionDigest(ctx.store) },
      {},
    );
    expect(staleNote(ctx)).toBeNull();
    put(store, 'resilience.truncate', 'teleqna:2', {}, { sample_id: 'teleqna:2' });
    expect(staleNote(ctx)).toMatch(
      /^The constructed instances changed after this evaluation read them \(resilience\.truncate has 2 now\): run `telebench run resilience-eval` again/,
    );
    // a file or Hub input is not construction's: never stale by it
    const fileCtx = ctxOf({
      resilience_eval: { input: { source: 'file', files: ['x.jsonl'] } },
    } as never);
    expect(staleNote(fileCtx)).toBeNull();
    store.close();
  });
});
