import { describe, it, expect } from 'vitest';
import { dependencyFailure } from '../../../../stages/swe5g/testgen/generate.js';

describe('dependencyFailure', () => {
  it('names the refused module download, and nothing for a compile error', () => {
    const log =
      'internal/context/context.go:17:2: github.com/free5gc/util@v1.3.2-0.2026: reading https://proxy.golang.org/github.com/free5gc/util/@v/v1.3.2-0.2026.zip: 403 Forbidden\n\tserver response: This module version is not available.\nFAIL\tx [setup failed]\n';
    expect(dependencyFailure(log)).toBe(
      'https://proxy.golang.org/github.com/free5gc/util/@v/v1.3.2-0.2026.zip: 403 Forbidden',
    );
    expect(
      dependencyFailure('./a_test.go:3:2: undefined: Foo\nFAIL\tx [build failed]\n'),
    ).toBeNull();
  });
});
