/**
 * What re-validates an instance (validateStage.cacheKey): a rebuild of the same images (a new
 * build version: other seconds, no `.git` note when the image was already there) does not; other
 * images, another module folder or another test do; a Go validation made before the go-directive
 * guard does once.
 */
import { describe, it, expect } from 'vitest';
import { sha256 } from '../../../../pipeline/hash.js';
import { validateStage, type ValidateInput } from '../../../../stages/swe5g/validate/validate.js';
import type { Built } from '../../../../stages/swe5g/build/build.js';

const built: Built = {
  instance_id: 'open5gs__open5gs-1272',
  image_recipe: 'c-meson',
  images: { base: 'telebench-base:c1', env: 'telebench-env:e1', instance: 'telebench-instance:i1' },
  base_from: 'telebench-offline:bookworm',
  toolchain: 'gcc 12.2.0',
  sizes: { base: 1, env_layer: 2, instance_layer: 3, instance_total: 6 },
  source_dir: 'swe5g/instances/open5gs__open5gs-1272/testbed',
  module_dir: '',
  build_seconds: { base: 10, env: 600, instance: 90 },
  c_build: {
    env_commit: 'a'.repeat(40),
    subprojects: [],
    missing_subprojects: [],
    delta: { changed: 3, deleted: 0 },
    git: { commits: 2 } as never,
  },
};
const input = (b: Built, f2p = 'diff --git a/x b/x\n'): ValidateInput =>
  ({
    resolved: { instance_id: b.instance_id, problem_statement: 'p', issues: [] },
    testgen: { f2p_test_patch: f2p, FAIL_TO_PASS: ['f2p::t'] },
    built: b,
  }) as never;
const key = (i: ValidateInput) => sha256(JSON.stringify(validateStage.cacheKey!(i)));

describe('validateStage.cacheKey', () => {
  it('is the same for a rebuild of the same images', () => {
    const again: Built = {
      ...built,
      build_seconds: { base: 0, env: 0, instance: 4 },
      c_build: { ...built.c_build!, git: undefined },
    };
    expect(key(input(again))).toBe(key(input(built)));
  });
  it('differs for another instance image, module folder or test', () => {
    const other = { ...built, images: { ...built.images, instance: 'telebench-instance:i2' } };
    expect(key(input(other))).not.toBe(key(input(built)));
    expect(key(input({ ...built, module_dir: 'lib' }))).not.toBe(key(input(built)));
    expect(key(input(built, 'diff --git a/y b/y\n'))).not.toBe(key(input(built)));
  });
  it('re-runs a Go validation once for the go-directive guard, and keeps C and Python ones', () => {
    // the stored keys of C and Python validations (made before the guard) are what they were:
    // resolved, testgen and built only
    const keyOf = (b: Built) => validateStage.cacheKey!(input(b)) as Record<string, unknown>;
    expect(Object.keys(keyOf(built)).sort()).toEqual(['built', 'resolved', 'testgen']);
    expect(Object.keys(keyOf({ ...built, image_recipe: 'python' })).sort()).toEqual([
      'built',
      'resolved',
      'testgen',
    ]);
    const goBuilt: Built = { ...built, image_recipe: 'go', c_build: undefined };
    expect(keyOf(goBuilt)).toMatchObject({ go_directive: '1.16' });
  });
});
