import { describe, it, expect } from 'vitest';
import { ownsChange } from '../../../../stages/swe5g/mine/mine.js';
import { registryEntrySchema } from '../../../../stages/swe5g/registry.js';

const entry = (path?: string) =>
  registryEntrySchema.parse({
    id: `magma/magma${path ? `:${path}` : ''}`,
    owner: 'magma',
    name: 'magma',
    ...(path ? { path } : {}),
    language: 'python',
    nf: 'SMF',
    issues_repo: 'magma/magma',
    license: 'BSD-3-Clause',
    test: { scope: 'touched' },
    image: 'python',
  });

const f = (path: string, additions: number) => ({ path, additions, deletions: 0 });

describe('monorepo entries (registry path)', () => {
  const mobilityd = 'lte/gateway/python/magma/mobilityd';
  const pipelined = 'lte/gateway/python/magma/pipelined';
  it('a PR belongs to the entry whose folder holds most of its changed lines', () => {
    const files = [f(`${mobilityd}/ip_allocator.py`, 30), f(`${pipelined}/app.py`, 2)];
    expect(ownsChange(entry(mobilityd), [pipelined], files)).toBe(true);
    expect(ownsChange(entry(pipelined), [mobilityd], files)).toBe(false);
  });
  it('a PR outside the folder is not the entry’s; an entry without path owns everything', () => {
    expect(ownsChange(entry(mobilityd), [], [f('orc8r/cloud/go/main.go', 5)])).toBe(false);
    expect(ownsChange(entry(), [], [f('orc8r/cloud/go/main.go', 5)])).toBe(true);
  });
  it('a tie goes to exactly one entry', () => {
    const files = [f(`${mobilityd}/a.py`, 3), f(`${pipelined}/b.py`, 3)];
    const owners = [mobilityd, pipelined].filter((p) =>
      ownsChange(
        entry(p),
        [mobilityd, pipelined].filter((o) => o !== p),
        files,
      ),
    );
    expect(owners).toHaveLength(1);
  });
});
