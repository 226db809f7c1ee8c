import { describe, it, expect } from 'vitest';
import { assertToolchain } from '../../../../stages/swe5g/build/build.js';
import { SkipItem } from '../../../../pipeline/errors.js';

describe('assertToolchain', () => {
  const res = { instance_id: 'free5gc__amf-161', version: '1.21' };

  it('passes a Go toolchain at or above the go.mod line, and non-Go recipes', () => {
    expect(() => assertToolchain(res, 'go', 'go1.21.0', 'host')).not.toThrow();
    expect(() => assertToolchain(res, 'go', 'go1.22.3', 'img:base')).not.toThrow();
    expect(() => assertToolchain(res, 'python', 'python 3.11.2', 'img:base')).not.toThrow();
    // a version that is a tag, not major.minor, is not compared
    expect(() =>
      assertToolchain({ ...res, version: 'v1.0.0' }, 'go', 'go1.19', 'host'),
    ).not.toThrow();
  });

  it('skips an older toolchain as toolchain_mismatch naming image and versions', () => {
    const older = (): void => assertToolchain(res, 'go', 'go1.20.14', 'telebench-base:abc');
    expect(older).toThrow(SkipItem);
    expect(older).toThrow(
      expect.objectContaining({
        code: 'toolchain_mismatch',
        context: { toolchain: 'go1.20.14', required: '1.21', image: 'telebench-base:abc' },
        message: 'free5gc__amf-161: go.mod asks go 1.21 but telebench-base:abc has go1.20.14',
      }),
    );
    expect(() => assertToolchain(res, 'go', 'go1.20', 'host')).toThrow(/but the host has go1\.20/);
  });
});
