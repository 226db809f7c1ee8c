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
  it('reads path, search and replace of fenced blocks and reuses the previous path', () => {
    const answer = `I will fix it.\n\n${block('ngap/handler.go', 'a', 'b')}\nand\n\n\`\`\`go\n<<<<<<< SEARCH\nc\n=======\nd\n>>>>>>> REPLACE\n\`\`\``;
    const p = parseEditBlocks(answer);
    expect(p.malformed).toEqual([]);
    expect(p.blocks).toEqual([
      { index: 1, file: 'ngap/handler.go', search: 'a', replace: 'b' },
      { index: 2, file: 'ngap/handler.go', search: 'c', replace: 'd' },
    ]);
  });
  it('reports a block without divider, without end, without path, and a stray end marker', () => {
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
      [2, 'no'],
      [3, 'path'],
      [4, 'no'],
    ]);
    // block 2 has no path line of its own and none to reuse (block 1 was malformed)
    expect(p.blocks).toEqual([]);
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
      { index: 1, file: 'ngap/handler.go', applied: true, rule: 'exact', detail: 'lines 7-7' },
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
