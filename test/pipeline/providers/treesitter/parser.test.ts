import { describe, it, expect } from 'vitest';
import {
  parseSource,
  leafTokens,
  grammarPath,
} from '../../../../pipeline/providers/treesitter/parser.js';

describe('tree-sitter provider (web-tree-sitter 0.25 + tree-sitter-wasms ABI 14)', () => {
  it('loads the Go, C and Python grammars and parses without errors', async () => {
    const src = {
      go: 'package p\n\n// c\nfunc f[T any](x *T) bool { return x != nil /* c */ }\n',
      c: '#include <stddef.h>\nint f(int *p) { return p != NULL; /* c */ }\n',
      python: 'def f(x):\n    # c\n    return x is not None\n',
    } as const;
    for (const [lang, text] of Object.entries(src) as [keyof typeof src, string][]) {
      expect(grammarPath(lang)).toMatch(new RegExp(`tree-sitter-${lang}\\.wasm$`));
      const tree = await parseSource(lang, text);
      expect({ lang, error: tree.rootNode.hasError }).toEqual({ lang, error: false });
      tree.delete();
    }
  });

  it('gives code tokens without comments, string literals whole', async () => {
    const tree = await parseSource(
      'go',
      'package p\nfunc f() { s := "a != nil" // b != nil\n_ = s != "" }\n',
    );
    const body = tree.rootNode.namedChildren[1]!.childForFieldName('body')!;
    expect(leafTokens(body)).toEqual([
      '{',
      's',
      ':=',
      '"a != nil"',
      '_',
      '=',
      's',
      '!=',
      '""',
      '}',
    ]);
    tree.delete();
    const py = await parseSource('python', 'x is not None  # y is None\n');
    expect(leafTokens(py.rootNode).join(' ')).toMatch(/^x is ?not None$/);
    py.delete();
  });
});
