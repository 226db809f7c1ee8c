/**
 * The pure parts of node builds (pipeline/providers/docker/swarm-build.ts) and their settings:
 * which FROM images travel to the node, and how many builds run at once. The builds themselves
 * run on a real two-node swarm in swarm.test.ts.
 */
import { describe, it, expect } from 'vitest';
import { availableParallelism } from 'node:os';
import { fromImages } from '../../../../pipeline/providers/docker/swarm-build.js';
import { nodeBuildOptions } from '../../../../stages/swe5g/executors.js';
import {
  buildConcurrency,
  environmentsSchema,
} from '../../../../stages/swe5g/environments-config.js';

describe('fromImages', () => {
  it('lists each FROM image once, leaving out earlier stages and scratch', () => {
    const df = [
      'FROM --platform=linux/amd64 telebench-go:go1.26.8 AS toolchain',
      'RUN true',
      'from telebench-env:abc',
      'COPY --from=toolchain /usr/local/go /usr/local/go',
      'FROM toolchain',
      'FROM scratch',
      'FROM telebench-env:abc',
    ].join('\n');
    expect(fromImages(df)).toEqual(['telebench-go:go1.26.8', 'telebench-env:abc']);
  });
});

describe('swarm.builds settings', () => {
  it('builds on the nodes run task_budget at once unless build_concurrency says otherwise', () => {
    const nodes = environmentsSchema.parse({
      executor: 'swarm',
      swarm: { task_budget: 12, builds: { on: 'nodes' } },
    });
    expect(buildConcurrency(nodes)).toBe(12);
    expect(buildConcurrency({ ...nodes, build_concurrency: 3 })).toBe(3);
    const here = environmentsSchema.parse({ executor: 'swarm', swarm: { task_budget: 12 } });
    expect(here.swarm.builds.on).toBe('coordinator');
    // the coordinator's cores (1 to 16), not the cluster's budget
    expect(buildConcurrency(here)).toBe(Math.max(1, Math.min(16, availableParallelism())));
    expect(nodeBuildOptions(nodes)).toEqual({
      registry: 'localhost:5000',
      builderImage: 'docker:cli',
      cpus: 2,
      memoryBytes: 4096 * 2 ** 20,
      timeoutMs: 14_400_000,
    });
  });

  it('refuses an unknown place to build, naming the allowed ones', () => {
    const r = environmentsSchema.safeParse({ swarm: { builds: { on: 'everywhere' } } });
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toMatch(/coordinator.*nodes/);
  });
});
