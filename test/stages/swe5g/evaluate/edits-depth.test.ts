/**
 * The depth check of SEARCH/REPLACE blocks (issue 30, edit-depth.ts): a block whose new lines are
 * indented by another offset than the lines it copies from the file (a model that pastes with a
 * stray space) is refused `indentation` in Python, Go and C, both ways round (the copied lines
 * carry the stray space and the whitespace rule re-indents, or the new lines carry it and SEARCH
 * matches exactly); what re-indenting by relative depth alone writes for the first case does not
 * parse (Python) or is not gofmt's (Go). The same blocks written consistently apply and the
 * language tools accept the result; a 2-space answer re-indented for a 4-space file still
 * applies, and lines that are not code starts (call arguments aligned to a bracket, docstrings,
 * ` * ` comment lines, a multi-line condition) are never refused.
 */
import { describe, it, expect } from 'vitest';
import { applyEdits, parseEditBlocks } from '../../../../stages/swe5g/evaluate/edits.js';
import { indentUnit, reindent } from '../../../../stages/swe5g/evaluate/edit-indent.js';
import { codeStarts } from '../../../../stages/swe5g/evaluate/edit-depth.js';
import { syntax } from '../../../fixtures/lang-syntax.js';

const reader =
  (files: Record<string, string>) =>
  (p: string): string | null =>
    files[p] ?? null;

const block = (path: string, search: string[], replace: string[]): string =>
  `${path}\n<<<<<<< SEARCH\n${search.join('\n')}\n=======\n${replace.join('\n')}\n>>>>>>> REPLACE\n`;

/** Applies one block to one file. */
function apply(path: string, text: string, search: string[], replace: string[]) {
  const r = applyEdits(reader({ [path]: text }), parseEditBlocks(block(path, search, replace)));
  return { outcome: r.outcomes[0]!, after: r.files.get(path)?.after };
}

/** A sibling per language: the file, the copied lines, the new lines, the tool's language. */
interface Sibling {
  lang: 'py' | 'go' | 'c';
  path: string;
  file: string;
  /** Lines of the file the block copies (SEARCH), as the file has them. */
  copied: string[];
  /** The REPLACE text: the new lines and the copies, as the file would have them. */
  replace: string[];
  /** A file line as the model writes it (Go: 4 spaces for a tab), before any stray space. */
  answer: (line: string) => string;
}

const siblings: Sibling[] = [
  {
    lang: 'py',
    path: 'lte/gateway/python/magma/mme/pick.py',
    file: 'def pick(ue):\n    ran = ue.ran\n    return ran.send()\n',
    copied: ['    ran = ue.ran', '    return ran.send()'],
    replace: [
      '    ran = ue.ran',
      '    if ran is None:',
      '        return None',
      '    return ran.send()',
    ],
    answer: (l) => l,
  },
  {
    lang: 'go',
    path: 'internal/ngap/handler.go',
    file: 'package ngap\n\nfunc Handle(ue *UE) error {\n\tran := ue.Ran\n\treturn ran.Send()\n}\n',
    copied: ['\tran := ue.Ran', '\treturn ran.Send()'],
    replace: [
      '\tran := ue.Ran',
      '\tif ran == nil {',
      '\t\treturn nil',
      '\t}',
      '\treturn ran.Send()',
    ],
    answer: (l) => l.replace(/^\t+/, (m) => '    '.repeat(m.length)),
  },
  {
    lang: 'c',
    path: 'src/amf/ngap-handler.c',
    file: 'struct ue { void *ran; };\nint send_to(void *ran);\n\nint handle(struct ue *ue)\n{\n    void *ran = ue->ran;\n    return send_to(ran);\n}\n',
    copied: ['    void *ran = ue->ran;', '    return send_to(ran);'],
    replace: [
      '    void *ran = ue->ran;',
      '    if (!ran)',
      '        return -1;',
      '    return send_to(ran);',
    ],
    answer: (l) => l,
  },
];
const isCopy = (s: Sibling, l: string): boolean => s.copied.includes(l);
/** A stray space before the line (the whole line shifted). */
const before = (l: string): string => ` ${l}`;
/** A stray space after the line's indentation. */
const after = (l: string): string => l.replace(/^[ \t]*/, (m) => `${m} `);

describe('a block whose new and copied lines carry different offsets is refused', () => {
  it.each(siblings)(
    '$lang: the copied lines carry a stray space, the new ones not (whitespace rule)',
    (s) => {
      const search = s.copied.map((l) => before(s.answer(l)));
      const replace = s.replace.map((l) => (isCopy(s, l) ? before(s.answer(l)) : s.answer(l)));
      const placed = apply(s.path, s.file, search, replace);
      expect(placed.outcome).toMatchObject({ applied: false, reason: 'indentation' });
      expect(placed.outcome.detail).toMatch(
        /^whitespace match at lines \d+-\d+, but REPLACE line 2 is indented 1 column\(s\) off the SEARCH lines' depths/,
      );
      expect(placed.after).toBeUndefined();
      // what re-indenting by relative depth alone writes: new lines one column off their neighbours
      const lines = s.file.split('\n');
      const at = lines.indexOf(s.copied[0]!);
      const re = reindent(search, s.copied, replace, indentUnit(lines));
      expect('lines' in re).toBe(true);
      const written = [...lines.slice(0, at), ...(re as { lines: string[] }).lines];
      written.push(...lines.slice(at + s.copied.length));
      // Python does not parse, gofmt would rewrite Go; gcc takes C at any indentation
      if (s.lang !== 'c') expect(syntax(s.lang, written.join('\n'))).not.toBe('ok');
    },
  );

  it.each(siblings)(
    '$lang: the new lines carry a stray space, the copied ones not (exact rule)',
    (s) => {
      const replace = s.replace.map((l) => (isCopy(s, l) ? l : after(l)));
      const placed = apply(s.path, s.file, s.copied, replace);
      expect(placed.outcome).toMatchObject({ applied: false, reason: 'indentation' });
      expect(placed.outcome.detail).toMatch(/^exact match at lines \d+-\d+, but REPLACE line 2 /);
      expect(placed.after).toBeUndefined();
    },
  );

  it('a stray space short of the depth (3 columns in a 4-space file) is refused too', () => {
    const s = siblings[0]!;
    const replace = s.replace.map((l) => (isCopy(s, l) ? l : l.slice(1)));
    expect(apply(s.path, s.file, s.copied, replace).outcome).toMatchObject({
      reason: 'indentation',
    });
  });
});

describe('consistent blocks still apply', () => {
  it.each(siblings)('$lang: the block as the file indents it (exact rule)', (s) => {
    const { outcome, after } = apply(s.path, s.file, s.copied, s.replace);
    expect(outcome).toMatchObject({ applied: true, rule: 'exact' });
    expect(syntax(s.lang, after!)).toBe('ok');
  });

  it.each(siblings)('$lang: the whole block shifted by one space (whitespace rule)', (s) => {
    const { outcome, after } = apply(s.path, s.file, s.copied.map(before), s.replace.map(before));
    expect(outcome).toMatchObject({ applied: true, rule: 'whitespace', indent: 'shift' });
    expect(syntax(s.lang, after!)).toBe('ok');
  });

  it('Python: a 2-space answer for a 4-space file is re-indented by units and applies', () => {
    const s = siblings[0]!;
    const two = (l: string): string => l.replace(/^( +)/, (m) => ' '.repeat(m.length / 2));
    const { outcome, after } = apply(s.path, s.file, s.copied.map(two), s.replace.map(two));
    expect(outcome).toMatchObject({ applied: true, rule: 'whitespace', indent: 'units' });
    expect(after).toBe(
      'def pick(ue):\n    ran = ue.ran\n    if ran is None:\n        return None\n    return ran.send()\n',
    );
    expect(syntax('py', after!)).toBe('ok');
  });

  it('Python: call arguments aligned to the bracket and a docstring are not code starts', () => {
    const file = 'def send(gw, msg):\n    gw.out(msg)\n';
    const replace = [
      '    """Send one message.',
      '',
      '      Indented example inside the docstring.',
      '    """',
      '    gw.out(msg,',
      '           flush=True)',
    ];
    const { outcome, after } = apply('lte/gw.py', file, ['    gw.out(msg)'], replace);
    expect(outcome).toMatchObject({ applied: true, rule: 'exact' });
    expect(syntax('py', after!)).toBe('ok');
  });

  it('C: a ` * ` comment block and a condition continued on the next line apply', () => {
    const s = siblings[2]!;
    const replace = [
      '    /*',
      '     * A UE without a RAN context is refused.',
      '     */',
      '    void *ran = ue->ran;',
      '    if (!ran ||',
      '            !ue)',
      '        return -1;',
      '    return send_to(ran);',
    ];
    const { outcome, after } = apply(s.path, s.file, s.copied, replace);
    expect(outcome).toMatchObject({ applied: true, rule: 'exact' });
    expect(syntax('c', after!)).toBe('ok');
  });

  it('prose and YAML are not checked (their indentation is free)', () => {
    const md = '# Notes\n\n- item\n';
    const { outcome } = apply('docs/notes.md', md, ['- item'], ['- item', '   continued', '- two']);
    expect(outcome).toMatchObject({ applied: true });
  });
});

describe('code starts', () => {
  it('skips blank lines, bracket and operator continuations, strings and comment lines', () => {
    const lines = [
      'x = f(a,', //  0 code
      '      b)', //  1 inside a bracket
      '', //           2 blank
      's = """', //    3 code
      '  text', //     4 inside a string
      '"""', //        5 closes the string
      'y = a +', //    6 code
      '    b', //      7 operator continuation
      ' * note', //    8 comment continuation
      'z = "(" # )', // 9 code: brackets in a string and a comment do not count
      'w = 1', //     10 code
    ];
    expect([...codeStarts(lines)]).toEqual([0, 3, 6, 9, 10]);
  });
});
