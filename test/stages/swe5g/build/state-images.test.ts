/**
 * `images ls` shows the images of one state folder: the names its `swe5g.build` items recorded,
 * read from a real SQLite store; another state folder's images are not listed.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openState } from '../../../../pipeline/state.js';
import { stateImages } from '../../../../stages/swe5g/build/images-command.js';

const root = mkdtempSync(join(tmpdir(), 'telebench-stateimages-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function stateWith(name: string, images: Record<string, string>[]): string {
  const dir = join(root, name);
  const st = openState(dir);
  images.forEach((imgs, i) => {
    const key = `${name}-${i}`;
    st.store.planItem('swe5g.build', key, 1, 'h', '{}', false);
    st.store.startItem('swe5g.build', key, `a${i}`, 'run');
    st.store.finishItem('swe5g.build', key, `a${i}`, { state: 'done', output: { images: imgs } });
  });
  st.close();
  return dir;
}

describe('stateImages', () => {
  it("lists the images this state's builds recorded, not another state's", () => {
    const a = stateWith('a', [
      { base: 'telebench-base:1', env: 'telebench-env:a', instance: 'telebench-instance:a1' },
    ]);
    const b = stateWith('b', [
      { base: 'telebench-base:1', env: 'telebench-env:b', instance: 'telebench-instance:b1' },
    ]);
    expect([...stateImages(a)].sort()).toEqual([
      'telebench-base:1',
      'telebench-env:a',
      'telebench-instance:a1',
    ]);
    expect(stateImages(b).has('telebench-instance:a1')).toBe(false);
    expect(stateImages(join(root, 'none')).size).toBe(0);
  });
});
