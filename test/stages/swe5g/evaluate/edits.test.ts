import { describe, it, expect } from 'vitest';
import {
  applyEdits,
  parseEditBlocks,
  similarity,
} from '../../../../stages/swe5g/evaluate/edits.js';

const handler = [
  'package ngap',
  '',
  'func Handle(req *Req) (string, error) {',
  '\tif req == nil {',
  '\t\treturn "", nil',
  '\t}',
  '\treturn req.ID.Value, nil',
  '}',
  '',
  'func Other(req *Req) string {',
  '\tif req == nil {',
  '\t\treturn ""',
  '\t}',
  '\treturn req.Name',
  '}',
  '',
].join('\n');
const files: Record<string, string> = { 'ngap/handler.go': handler };
const read = (p: string): string | null => files[p] ?? null;

const block = (file: string, search: string, replace: string): string =>
  `${file}\n\`\`\`go\n<<<<<<< SEARCH\n${search}\n=======\n${replace}\n>>>>>>> REPLACE\n\`\`\`\n`;

describe('SEARCH/REPLACE parsing', () => {
  it('reads path, search and replace of fenced blocks; a block without a path reuses the previous file', () => {
    const answer = `I will fix it.\n\n${block('ngap/handler.go', '\treturn req.Name', '\treturn req.Name + "!"')}\nand\n\n\`\`\`go\n<<<<<<< SEARCH\n\treturn req.Name + "!"\n=======\n\treturn req.Name + "?"\n>>>>>>> REPLACE\n\`\`\``;
    const p = parseEditBlocks(answer);
    expect(p.malformed).toEqual([]);
    expect(p.files).toEqual(['ngap/handler.go']);
    expect(p.blocks).toEqual([
      {
        index: 1,
        file: 'ngap/handler.go',
        named: ['ngap/handler.go'],
        path_from: 'line',
        search: '\treturn req.Name',
        replace: '\treturn req.Name + "!"',
      },
      {
        index: 2,
        file: '',
        named: [],
        path_from: 'none',
        search: '\treturn req.Name + "!"',
        replace: '\treturn req.Name + "?"',
      },
    ]);
    const r = applyEdits(read, p);
    expect(r.outcomes.map((o) => [o.file, o.applied, o.path_from])).toEqual([
      ['ngap/handler.go', true, 'line'],
      ['ngap/handler.go', true, 'previous'],
    ]);
    expect(r.files.get('ngap/handler.go')!.after).toContain('\treturn req.Name + "?"\n');
  });
  it('reports a block without divider, without end, with a path outside the repository, and a stray end marker', () => {
    const p = parseEditBlocks(
      [
        'x.go',
        '<<<<<<< SEARCH',
        'a',
        '>>>>>>> REPLACE',
        '<<<<<<< SEARCH',
        'b',
        '=======',
        'c',
        '>>>>>>> REPLACE',
        '../etc/passwd',
        '<<<<<<< SEARCH',
        'x',
        '=======',
        'y',
        '>>>>>>> REPLACE',
        'y.go',
        '<<<<<<< SEARCH',
        'z',
        '=======',
      ].join('\n'),
    );
    expect(p.malformed.map((m) => [m.index, m.reason.split(' ')[0]])).toEqual([
      [1, '>>>>>>>'],
      [3, 'path'],
      [4, 'no'],
    ]);
    // block 2 has no path line of its own; the answer names no file it could be for
    expect(p.blocks.map((b) => [b.index, b.path_from])).toEqual([[2, 'none']]);
    const r = applyEdits(read, p);
    expect(r.outcomes.map((o) => [o.index, o.reason])).toEqual([
      [1, 'malformed'],
      [2, 'no_path'],
      [3, 'malformed'],
      [4, 'malformed'],
    ]);
    expect(r.files.size).toBe(0);
    expect(parseEditBlocks('no blocks here\n>>>>>>> REPLACE').malformed[0]!.reason).toContain(
      'without a preceding',
    );
  });
});

describe('applying edits: exact, whitespace, fuzzy, failures', () => {
  it('applies an exact block and records the rule and range', () => {
    const r = applyEdits(
      read,
      parseEditBlocks(
        block(
          'ngap/handler.go',
          '\treturn req.ID.Value, nil',
          '\tif req.ID == nil {\n\t\treturn "", nil\n\t}\n\treturn req.ID.Value, nil',
        ),
      ),
    );
    expect(r.outcomes).toEqual([
      {
        index: 1,
        file: 'ngap/handler.go',
        applied: true,
        rule: 'exact',
        detail: 'lines 7-7',
        path_from: 'line',
      },
    ]);
    expect(r.files.get('ngap/handler.go')!.after).toContain(
      '\tif req.ID == nil {\n\t\treturn "", nil\n\t}\n\treturn req.ID.Value',
    );
  });
  it('applies a block indented with spaces through the whitespace rule, re-indented with tabs', () => {
    const r = applyEdits(
      read,
      parseEditBlocks(
        block(
          'ngap/handler.go',
          'func Handle(req *Req) (string, error) {\n    if req == nil {',
          'func Handle(req *Req) (string, error) {\n    if req == nil || req.ID == nil {',
        ),
      ),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: true, rule: 'whitespace' });
    expect(r.files.get('ngap/handler.go')!.after).toContain(
      '\tif req == nil || req.ID == nil {\n\t\treturn "", nil',
    );
  });
  it('re-indents a new nested line by its depth relative to the SEARCH line above it', () => {
    const r = applyEdits(
      read,
      parseEditBlocks(
        block(
          'ngap/handler.go',
          '  return req.ID.Value, nil',
          '  if req.ID == nil {\n    return "", nil\n  }\n  return req.ID.Value, nil',
        ),
      ),
    );
    expect(r.outcomes[0]).toMatchObject({ rule: 'whitespace' });
    expect(r.files.get('ngap/handler.go')!.after).toContain(
      '\tif req.ID == nil {\n\t\treturn "", nil\n\t}\n\treturn req.ID.Value, nil',
    );
  });
  it('places a block with a typo by the fuzzy rule, and refuses one below the threshold', () => {
    const r = applyEdits(
      read,
      parseEditBlocks(
        block(
          'ngap/handler.go',
          '\treturn req.ID.Valeu, nil\n}',
          '\treturn req.ID.Value, nil\n}\n// done',
        ),
      ),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: true, rule: 'fuzzy' });
    expect(r.outcomes[0]!.score).toBeGreaterThan(0.85);
    expect(r.outcomes[0]!.score).toBeLessThan(1);
    const none = applyEdits(
      read,
      parseEditBlocks(block('ngap/handler.go', 'completely different text here', 'x')),
    );
    expect(none.outcomes[0]).toMatchObject({ applied: false, reason: 'no_match' });
    expect(none.files.size).toBe(0);
  });
  it('refuses an ambiguous SEARCH block (two exact places), a missing file, an empty search', () => {
    const r = applyEdits(
      read,
      parseEditBlocks(
        block('ngap/handler.go', '\tif req == nil {', '\tif req == nil || true {') +
          block('ngap/missing.go', 'x', 'y') +
          block('ngap/handler.go', '', 'y'),
      ),
    );
    expect(r.outcomes.map((o) => [o.applied, o.reason])).toEqual([
      [false, 'ambiguous'],
      [false, 'no_match'],
      [false, 'ambiguous'],
    ]);
    expect(r.outcomes[0]!.detail).toContain('2 places');
    expect(r.files.size).toBe(0);
  });
  it('creates a new file from an empty SEARCH and chains edits on one file', () => {
    const r = applyEdits(
      read,
      parseEditBlocks(
        block('ngap/new.go', '', 'package ngap') +
          block('ngap/handler.go', '\treturn req.Name', '\treturn req.Name + "!"') +
          block('ngap/handler.go', '\treturn req.Name + "!"', '\treturn req.Name + "?"'),
      ),
    );
    expect(r.outcomes.map((o) => o.rule)).toEqual(['create', 'exact', 'exact']);
    expect(r.files.get('ngap/new.go')).toEqual({ before: null, after: 'package ngap\n' });
    expect(r.files.get('ngap/handler.go')!.before).toBe(handler);
    expect(r.files.get('ngap/handler.go')!.after).toContain('req.Name + "?"');
  });
  it('similarity is 2*LCS/(|a|+|b|)', () => {
    expect(similarity('abcd', 'abcd')).toBe(1);
    expect(similarity('abcd', 'abxd')).toBeCloseTo(0.75, 5);
    expect(similarity('abcd', 'wxyz', 0.5)).toBe(0);
  });
});

describe('what already worked keeps working', () => {
  it('a fence inside the REPLACE code is content, not the end of the block', () => {
    const py = 'def usage():\n    return "run it"\n';
    const answer = [
      'lte/usage.py',
      '```python',
      '<<<<<<< SEARCH',
      '    return "run it"',
      '=======',
      '    return """',
      '```sh',
      'run it',
      '```',
      '"""',
      '>>>>>>> REPLACE',
      '```',
    ].join('\n');
    const r = applyEdits((p) => (p === 'lte/usage.py' ? py : null), parseEditBlocks(answer));
    expect(r.outcomes[0]).toMatchObject({ applied: true, rule: 'exact' });
    expect(r.files.get('lte/usage.py')!.after).toBe(
      'def usage():\n    return """\n```sh\nrun it\n```\n"""\n',
    );
  });
  it('prose before, between and after the blocks is ignored', () => {
    const answer =
      'The nil check is missing.\n\nHere is the fix:\n\n' +
      block('ngap/handler.go', '\treturn req.Name', '\treturn req.Name + "!"') +
      '\nThis makes the handler safe.\n\nThat is all; the tests should now pass.\n';
    const r = applyEdits(read, parseEditBlocks(answer));
    expect(r.outcomes).toHaveLength(1);
    expect(r.outcomes[0]).toMatchObject({ applied: true, rule: 'exact', path_from: 'line' });
  });
  it('a rename: the new file created from an empty SEARCH, the old one emptied by a whole-file SEARCH', () => {
    const answer =
      block('ngap/handler_v2.go', '', handler.trimEnd()) +
      block('ngap/handler.go', handler.trimEnd(), '');
    const r = applyEdits(read, parseEditBlocks(answer));
    expect(r.outcomes.map((o) => [o.file, o.rule])).toEqual([
      ['ngap/handler_v2.go', 'create'],
      ['ngap/handler.go', 'exact'],
    ]);
    expect(r.files.get('ngap/handler_v2.go')).toEqual({ before: null, after: handler });
    expect(r.files.get('ngap/handler.go')).toEqual({ before: handler, after: '' });
  });
  it('deletions: an empty REPLACE removes the lines, also at the end of a file without a final newline', () => {
    const r = applyEdits(
      read,
      parseEditBlocks(block('ngap/handler.go', '\tif req == nil {\n\t\treturn ""\n\t}', '')),
    );
    expect(r.files.get('ngap/handler.go')!.after).toContain(
      'func Other(req *Req) string {\n\treturn req.Name',
    );
    const end = applyEdits(
      (p) => (p === 'a.py' ? 'x = 1\ny = 2' : null),
      parseEditBlocks(block('a.py', 'y = 2', '')),
    );
    expect(end.files.get('a.py')!.after).toBe('x = 1');
  });
  it('empty patches: no block changes nothing, and a block whose REPLACE equals its SEARCH leaves the text as it was', () => {
    expect(applyEdits(read, parseEditBlocks('I could not find the bug.'))).toEqual({
      outcomes: [],
      files: new Map(),
    });
    const same = applyEdits(
      read,
      parseEditBlocks(block('ngap/handler.go', '\treturn req.Name', '\treturn req.Name')),
    );
    expect(same.outcomes[0]).toMatchObject({ applied: true });
    expect(same.files.get('ngap/handler.go')!.after).toBe(handler);
  });
});
