import { describe, it, expect } from 'vitest';
import { dependencyFailure } from '../../../../stages/swe5g/testgen/generate.js';

describe('dependencyFailure (the harness classifier, as testgen reads it)', () => {
  it('names the refused module download, and nothing for a compile error', () => {
    const log =
      'internal/context/context.go:17:2: github.com/free5gc/util@v1.3.2-0.2026: reading https://proxy.golang.org/github.com/free5gc/util/@v/v1.3.2-0.2026.zip: 403 Forbidden\n\tserver response: This module version is not available.\nFAIL\tx [setup failed]\n';
    expect(dependencyFailure(log, 'go')).toBe(
      'internal/context/context.go:17:2: github.com/free5gc/util@v1.3.2-0.2026: reading https://proxy.golang.org/github.com/free5gc/util/@v/v1.3.2-0.2026.zip: 403 Forbidden',
    );
    expect(
      dependencyFailure('./a_test.go:3:2: undefined: Foo\nFAIL\tx [build failed]\n', 'go'),
    ).toBeNull();
  });

  it("reads the language's own patterns: a missing meson dependency for C, a pip refusal for Python", () => {
    const meson = 'meson.build:120:0: ERROR: Dependency "talloc" not found, tried pkgconfig';
    expect(dependencyFailure(meson, 'c')).toBe(meson);
    expect(dependencyFailure(meson, 'go')).toBeNull();
    const pip = 'ERROR: No matching distribution found for grpcio==1.16.1';
    expect(dependencyFailure(pip, 'python')).toBe(pip);
    expect(dependencyFailure("ModuleNotFoundError: No module named 'grpc'", 'python')).toBeNull();
  });
});
