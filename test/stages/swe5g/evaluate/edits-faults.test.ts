/**
 * The four faults of issue 24 (re-indentation by line equality, a divider inside the content, the
 * file named in prose, CRLF files), each with Go, C and Python files, and replays of public
 * reports of edit appliers. Every written file is checked by the real language tool (gofmt,
 * gcc -fsyntax-only, python3's ast) and CRLF edits by a real git repository (diff and apply).
 */
import { describe, it, expect } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { applyEdits, parseEditBlocks } from '../../../../stages/swe5g/evaluate/edits.js';
import { toGitPatch } from '../../../../stages/swe5g/testgen/patchfile.js';
import { runTool as run, syntax } from '../../../fixtures/lang-syntax.js';

const reader =
  (files: Record<string, string>) =>
  (p: string): string | null =>
    files[p] ?? null;

/** One block: the line before it (a path, or a sentence), a fence, SEARCH / REPLACE. */
const block = (before: string, search: string, replace: string, lang = ''): string =>
  `${before}\n\`\`\`${lang}\n<<<<<<< SEARCH\n${search}\n=======\n${replace}\n>>>>>>> REPLACE\n\`\`\`\n`;

describe('re-indentation by relative depth', () => {
  it('Python: a REPLACE nesting `return None` under a new `if sticky:` keeps it nested (2-space answer, 4-space file)', () => {
    const py = [
      'def pick(cands, sticky):',
      '    for c in cands:',
      '        if c is None:',
      '            return None',
      '        use(c)',
      '    return cands[0]',
      '',
    ].join('\n');
    const r = applyEdits(
      reader({ 'lte/pick.py': py }),
      parseEditBlocks(
        block(
          'lte/pick.py',
          '  for c in cands:\n    if c is None:\n      return None',
          '  for c in cands:\n    if c is None:\n      if sticky:\n        return None\n      continue',
          'python',
        ),
      ),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: true, rule: 'whitespace', indent: 'units' });
    const after = r.files.get('lte/pick.py')!.after;
    expect(after).toBe(
      [
        'def pick(cands, sticky):',
        '    for c in cands:',
        '        if c is None:',
        '            if sticky:',
        '                return None',
        '            continue',
        '        use(c)',
        '    return cands[0]',
        '',
      ].join('\n'),
    );
    expect(syntax('py', after)).toBe('ok');
  });

  it('Go: a line equal to a SEARCH line moved one level deeper is written one tab deeper (4-space answer, tab file)', () => {
    const go = [
      'package ngap',
      '',
      'func Handle(ue *UE) error {',
      '\tif ue == nil {',
      '\t\treturn nil',
      '\t}',
      '\tran := ue.Ran',
      '\treturn ran.Send()',
      '}',
      '',
    ].join('\n');
    const r = applyEdits(
      reader({ 'internal/ngap/handler.go': go }),
      parseEditBlocks(
        block(
          'internal/ngap/handler.go',
          '    ran := ue.Ran\n    return ran.Send()',
          '    ran := ue.Ran\n    if ran != nil {\n        return ran.Send()\n    }\n    return nil',
          'go',
        ),
      ),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: true, rule: 'whitespace', indent: 'units' });
    const after = r.files.get('internal/ngap/handler.go')!.after;
    expect(after).toContain(
      '\tran := ue.Ran\n\tif ran != nil {\n\t\treturn ran.Send()\n\t}\n\treturn nil\n}',
    );
    expect(syntax('go', after)).toBe('ok');
  });

  it('C: a tab-indented answer for a 4-space Open5GS-style file keeps each line at its depth', () => {
    const c = [
      'struct ue { void *ran; };',
      'void send_to(void *ran);',
      '',
      'int handle(struct ue *ue)',
      '{',
      '    if (!ue)',
      '        return -1;',
      '    send_to(ue->ran);',
      '    return 0;',
      '}',
      '',
    ].join('\n');
    const r = applyEdits(
      reader({ 'src/amf/handler.c': c }),
      parseEditBlocks(
        block(
          'src/amf/handler.c',
          '\tsend_to(ue->ran);\n\treturn 0;',
          '\tif (ue->ran) {\n\t\tsend_to(ue->ran);\n\t\treturn 0;\n\t}\n\treturn -1;',
          'c',
        ),
      ),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: true, rule: 'whitespace', indent: 'units' });
    const after = r.files.get('src/amf/handler.c')!.after;
    expect(after).toContain(
      '    if (ue->ran) {\n        send_to(ue->ran);\n        return 0;\n    }\n    return -1;\n}',
    );
    expect(syntax('c', after)).toBe('ok');
  });

  it('keeps offsets character for character when the answer only shifts the file indentation (alignment spaces survive)', () => {
    const py = [
      'class Gw:',
      '    def send(self, msg):',
      '        self.out(msg,',
      '                 flush=True)',
      '',
    ].join('\n');
    const r = applyEdits(
      reader({ 'lte/gw.py': py }),
      parseEditBlocks(
        block(
          'lte/gw.py',
          'def send(self, msg):\n    self.out(msg,\n             flush=True)',
          'def send(self, msg):\n    if msg is None:\n        return\n    self.out(msg,\n             flush=True)',
        ),
      ),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: true, indent: 'shift' });
    expect(r.files.get('lte/gw.py')!.after).toBe(
      [
        'class Gw:',
        '    def send(self, msg):',
        '        if msg is None:',
        '            return',
        '        self.out(msg,',
        '                 flush=True)',
        '',
      ].join('\n'),
    );
  });

  it('refuses (`indentation`) a SEARCH flattened to one depth over nested file lines instead of guessing depths', () => {
    const py = 'def f(x):\n    if x:\n        return 1\n    return 0\n';
    const r = applyEdits(
      reader({ 'a.py': py }),
      parseEditBlocks(block('a.py', 'if x:\nreturn 1', 'if x:\nif x > 1:\nreturn 2\nreturn 1')),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: false, reason: 'indentation' });
    expect(r.outcomes[0]!.detail).toContain('nested differently');
    expect(r.files.size).toBe(0);
  });

  it('replays NousResearch/hermes-agent#88264: an unindented first SEARCH line on a CRLF file does not double the body indentation', () => {
    const crlf =
      'def outer():\r\n    x = 1\r\n    if x:\r\n        y = 2\r\n        print(y)\r\n    return x\r\n';
    const r = applyEdits(
      reader({ 'outer.py': crlf }),
      parseEditBlocks(
        block(
          'outer.py',
          'if x:\n        y = 2\n        print(y)',
          'if x:\n        y = 999\n        print(y * 2)',
        ),
      ),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: true, rule: 'whitespace' });
    const after = r.files.get('outer.py')!.after;
    expect(after).toBe(
      'def outer():\r\n    x = 1\r\n    if x:\r\n        y = 999\r\n        print(y * 2)\r\n    return x\r\n',
    );
    expect(syntax('py', after)).toBe('ok');
  });

  it('replays anomalyco/opencode#29573: an exact match writes the first REPLACE line with its own leading whitespace', () => {
    const py =
      'def f(c):\n    for i in c:\n        try:\n            if condition:\n                result = calculate()\n                return result\n        except E:\n            pass\n';
    const r = applyEdits(
      reader({ 'f.py': py }),
      parseEditBlocks(
        block(
          'f.py',
          '            if condition:\n                result = calculate()\n                return result',
          '            if condition:\n                new_result = calculate_v2()\n                return new_result',
        ),
      ),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: true, rule: 'exact' });
    expect(r.files.get('f.py')!.after).toContain(
      '        try:\n            if condition:\n                new_result = calculate_v2()\n',
    );
    expect(syntax('py', r.files.get('f.py')!.after)).toBe('ok');
  });
});

describe('a divider inside the content', () => {
  const heading = (path: string, search: string, replace: string): string =>
    `${path}\n<<<<<<< SEARCH\n${search}\n=======\n${replace}\n>>>>>>> REPLACE\n`;

  it('Markdown: a setext heading quoted in SEARCH, where two splits match once, is refused `malformed` with the reason', () => {
    const md = '# telebench\n\nBuild\n=======\n\nRun `make`.\n';
    const r = applyEdits(
      reader({ 'docs/build.md': md }),
      parseEditBlocks(
        heading(
          'docs/build.md',
          'Build\n=======\n\nRun `make`.',
          'Build\n=======\n\nRun `make all`.',
        ),
      ),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: false, reason: 'malformed' });
    expect(r.outcomes[0]!.detail).toMatch(/3 ======= lines .* the divider is ambiguous/);
    expect(r.files.size).toBe(0);
  });

  it('Python: a reST heading in a docstring; the only split whose SEARCH matches once applies, and no marker line is written', () => {
    const doc = (name: string, what: string, body: string): string[] => [
      `def ${name}():`,
      '    """',
      '    Build',
      '    =======',
      `    ${what}`,
      '    """',
      `    return ${body}`,
    ];
    const py = [
      ...doc('build', 'Runs the build.', 'run()'),
      '',
      '',
      ...doc('rebuild', 'Runs it again.', 'run(again=True)'),
      '',
    ].join('\n');
    const r = applyEdits(
      reader({ 'lte/build.py': py }),
      parseEditBlocks(
        heading(
          'lte/build.py',
          '    Build\n    =======\n    Runs the build.\n    """\n    return run()',
          '    Build\n    =======\n    Runs the build, twice.\n    """\n    run()\n    return run()',
        ),
      ),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: true, rule: 'exact' });
    expect(r.outcomes[0]!.detail).toMatch(
      /divider: answer line 8, the only one of the 3 ======= lines \(4, 8, 10\)/,
    );
    const after = r.files.get('lte/build.py')!.after;
    expect(after.match(/=======/g)).toHaveLength(2);
    expect(after).toContain('    Runs the build, twice.\n    """\n    run()\n    return run()\n');
    expect(after).not.toMatch(/SEARCH|REPLACE/);
    expect(syntax('py', after)).toBe('ok');
  });

  it('Go: a raw string holding a heading; the true divider is found by the file, the heading line kept', () => {
    const go =
      'package docs\n\nconst readme = `\nBuild\n=======\nmake\n`\n\nconst help = `\nBuild\n=======\nmake help\n`\n';
    const r = applyEdits(
      reader({ 'docs/text.go': go }),
      parseEditBlocks(
        heading('docs/text.go', 'Build\n=======\nmake\n`', 'Build\n=======\nmake all\n`'),
      ),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: true, rule: 'exact' });
    const after = r.files.get('docs/text.go')!.after;
    expect(after).toBe(go.replace('make\n`', 'make all\n`'));
    expect(syntax('go', after)).toBe('ok');
  });

  it('C: a comment banner of = signs quoted in SEARCH, both splits matching once: refused, nothing written', () => {
    const c = '/*\nAMF\n=======\n*/\nint amf_init(void)\n{\n    return 0;\n}\n';
    const r = applyEdits(
      reader({ 'src/amf/init.c': c }),
      parseEditBlocks(heading('src/amf/init.c', 'AMF\n=======\n*/', 'AMF (5G core)\n=======\n*/')),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: false, reason: 'malformed' });
    expect(r.files.size).toBe(0);
    expect(syntax('c', c)).toBe('ok');
  });

  it('a new Markdown file whose text holds a setext heading is created from the empty-SEARCH split', () => {
    const r = applyEdits(
      reader({}),
      parseEditBlocks(heading('docs/new.md', '', 'Usage\n=======\nRun it.')),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: true, rule: 'create' });
    expect(r.files.get('docs/new.md')).toEqual({
      before: null,
      after: 'Usage\n=======\nRun it.\n',
    });
  });

  it('a REPLACE that adds a setext heading (one divider in SEARCH terms) still applies', () => {
    const md = 'Intro.\n';
    const r = applyEdits(
      reader({ 'README.md': md }),
      parseEditBlocks(heading('README.md', 'Intro.', 'Intro.\n\nUsage\n=======\nRun it.')),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: true, rule: 'exact' });
    expect(r.files.get('README.md')!.after).toBe('Intro.\n\nUsage\n=======\nRun it.\n');
  });
});

describe('the file named in prose, and blocks without a path', () => {
  const guard = '\tif ue.Ran == nil {\n\t\treturn\n\t}';
  const goFiles = {
    'internal/context/a.go': `package context\n\nfunc A(ue *UE) {\n${guard}\n\tue.Ran.Send()\n}\n`,
    'internal/context/b.go': `package context\n\nfunc B(ue *UE) {\n${guard}\n\tue.Ran.Close()\n}\n`,
  };

  it('Go: "Now update `internal/context/b.go` too:" edits b.go, not the previous block\'s a.go where the SEARCH also occurs', () => {
    const answer =
      `First the handler.\n\n${block('internal/context/a.go', '\tue.Ran.Send()', '\tue.Ran.Send()\n\tue.Sent = true', 'go')}\n` +
      block(
        'Now update `internal/context/b.go` too:',
        `${guard}\n\tue.Ran.Close()`,
        `${guard}\n\tue.Ran.Close()\n\tue.Ran = nil`,
        'go',
      );
    const r = applyEdits(reader(goFiles), parseEditBlocks(answer));
    expect(r.outcomes.map((o) => [o.file, o.applied, o.path_from])).toEqual([
      ['internal/context/a.go', true, 'line'],
      ['internal/context/b.go', true, 'sentence'],
    ]);
    expect(r.files.get('internal/context/b.go')!.after).toContain(
      '\tue.Ran.Close()\n\tue.Ran = nil\n}',
    );
    expect(r.files.get('internal/context/a.go')!.after).not.toContain('ue.Ran = nil');
    for (const f of r.files.values()) expect(syntax('go', f.after)).toBe('ok');
  });

  it('C and Python: a bare path inside a sentence, bold and backticked path lines', () => {
    const files = {
      'src/smf/context.c': 'int smf_a(int *s)\n{\n    return *s;\n}\n',
      'src/smf/gsm.c': 'int smf_b(int *s)\n{\n    return *s;\n}\n',
      'lte/gateway/python/magma/mme.py': 'def f(s):\n    return s.id\n',
    };
    const answer =
      block(
        '**src/smf/context.c**',
        'int smf_a(int *s)\n{\n    return *s;',
        'int smf_a(int *s)\n{\n    if (!s)\n        return -1;\n    return *s;',
        'c',
      ) +
      block(
        'Then in src/smf/gsm.c, the same guard:',
        '{\n    return *s;',
        '{\n    if (!s)\n        return -1;\n    return *s;',
        'c',
      ) +
      block(
        '`lte/gateway/python/magma/mme.py`',
        '    return s.id',
        '    if s is None:\n        return None\n    return s.id',
        'python',
      );
    const r = applyEdits(reader(files), parseEditBlocks(answer));
    expect(r.outcomes.map((o) => [o.file, o.applied, o.path_from])).toEqual([
      ['src/smf/context.c', true, 'line'],
      ['src/smf/gsm.c', true, 'sentence'],
      ['lte/gateway/python/magma/mme.py', true, 'line'],
    ]);
    expect(syntax('c', r.files.get('src/smf/gsm.c')!.after)).toBe('ok');
    expect(syntax('py', r.files.get('lte/gateway/python/magma/mme.py')!.after)).toBe('ok');
  });

  it('Go: a block with no determinable path in a multi-file answer is `no_path` when its SEARCH occurs in two files', () => {
    const answer =
      block('internal/context/a.go', '\tue.Ran.Send()', '\tue.Ran.Send()\n\tue.Sent = true', 'go') +
      block(
        'internal/context/b.go',
        '\tue.Ran.Close()',
        '\tue.Ran.Close()\n\tue.Closed = true',
        'go',
      ) +
      block(
        'And the guard as well:',
        guard,
        '\tif ue == nil || ue.Ran == nil {\n\t\treturn\n\t}',
        'go',
      );
    const r = applyEdits(reader(goFiles), parseEditBlocks(answer));
    expect(r.outcomes[2]).toMatchObject({ index: 3, file: '', applied: false, reason: 'no_path' });
    expect(r.outcomes[2]!.detail).toContain(
      'matches once in internal/context/a.go and internal/context/b.go',
    );
    expect(r.files.get('internal/context/a.go')!.after).not.toContain('ue == nil ||');
  });

  it('Python: a path-less block whose SEARCH matches one file only applies there and says so', () => {
    const files = {
      'lte/a.py': 'def a(s):\n    return s.a\n',
      'lte/b.py': 'def b(s):\n    return s.b\n',
    };
    const answer =
      block('lte/a.py', 'def a(s):', 'def a(s):\n    """A."""', 'python') +
      block('lte/b.py', 'def b(s):', 'def b(s):\n    """B."""', 'python') +
      block('Finally:', '    return s.b', '    return s.b if s else None', 'python');
    const r = applyEdits(reader(files), parseEditBlocks(answer));
    expect(r.outcomes[2]).toMatchObject({
      file: 'lte/b.py',
      applied: true,
      path_from: 'search_match',
    });
    expect(r.outcomes[2]!.detail).toContain('its SEARCH matches once only in lte/b.py');
    expect(r.files.get('lte/b.py')!.after).toBe(
      'def b(s):\n    """B."""\n    return s.b if s else None\n',
    );
  });

  it('replays Aider-AI/aider#2959: repeat blocks that skip the filename and carry a language fence stay on the one file', () => {
    const py =
      'def q(v):\n    run("SELECT 1 WHERE v = $1::BIGINT", v)\n    run("SELECT 2 WHERE v <= $1::BIGINT", v)\n';
    const answer =
      `Here are the changes:\n\nlte/db.py\n\n<<<<<<< SEARCH\n    run("SELECT 1 WHERE v = $1::BIGINT", v)\n=======\n    run("SELECT 1 WHERE v = $1", v)\n>>>>>>> REPLACE\n\n` +
      '```python\n<<<<<<< SEARCH\n    run("SELECT 2 WHERE v <= $1::BIGINT", v)\n=======\n    run("SELECT 2 WHERE v <= $1", v)\n>>>>>>> REPLACE\n```\n';
    const r = applyEdits(reader({ 'lte/db.py': py }), parseEditBlocks(answer));
    expect(r.outcomes.map((o) => [o.file, o.applied, o.path_from])).toEqual([
      ['lte/db.py', true, 'line'],
      ['lte/db.py', true, 'previous'],
    ]);
    expect(r.files.size).toBe(1);
    expect(r.files.get('lte/db.py')!.after).not.toContain('BIGINT');
  });

  it('replays Aider-AI/aider#1105: a block with no filename line whose SEARCH is unique among the named files applies', () => {
    const files = { 'src/a.c': 'int a = 1;\n', 'src/b.c': 'int b = 2;\n' };
    const answer =
      block('src/a.c', 'int a = 1;', 'int a = 10;', 'c') +
      '<<<<<<< SEARCH\nint b = 2;\n=======\nint b = 20;\n>>>>>>> REPLACE\n' +
      block('src/b.c', 'int b = 20;', 'int b = 21;', 'c');
    const r = applyEdits(reader(files), parseEditBlocks(answer));
    expect(r.outcomes.map((o) => [o.file, o.path_from])).toEqual([
      ['src/a.c', 'line'],
      ['src/b.c', 'search_match'],
      ['src/b.c', 'line'],
    ]);
    expect(r.files.get('src/b.c')!.after).toBe('int b = 21;\n');
  });

  it('a sentence naming an identifier-like `Node.js` that is no file falls back to the previous file', () => {
    const files = { 'web/app.py': 'x = 1\ny = 2\n' };
    const answer =
      block('web/app.py', 'x = 1', 'x = 10') + block('Like Node.js does, also:', 'y = 2', 'y = 20');
    const r = applyEdits(reader(files), parseEditBlocks(answer));
    expect(r.outcomes.map((o) => [o.file, o.applied, o.path_from])).toEqual([
      ['web/app.py', true, 'line'],
      ['web/app.py', true, 'previous'],
    ]);
  });
});

describe('line endings kept per file', () => {
  /** A git repository holding `files` (no autocrlf), for diffs and `git apply`. */
  function repo(files: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), 'edits-crlf-'));
    run('git', ['init', '-q', dir]);
    run('git', ['config', 'core.autocrlf', 'false'], dir);
    for (const [p, t] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, p)), { recursive: true });
      writeFileSync(join(dir, p), t);
    }
    run('git', ['add', '-A'], dir);
    const c = run(
      'git',
      ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'base'],
      dir,
    );
    expect(c.status).toBe(0);
    return dir;
  }

  it('C: one changed line of a CRLF file is one changed line in git, the file stays CRLF, and the patch applies', () => {
    const c = 'int f(int *p)\r\n{\r\n    if (!p)\r\n        return -1;\r\n    return *p;\r\n}\r\n';
    const r = applyEdits(
      reader({ 'src/f.c': c }),
      parseEditBlocks(block('src/f.c', '    return *p;', '    return *p + 1;', 'c')),
    );
    expect(r.outcomes[0]).toMatchObject({
      applied: true,
      rule: 'exact',
      detail: 'lines 5-5, CRLF kept',
    });
    const after = r.files.get('src/f.c')!.after;
    expect(after).toBe(c.replace('return *p;', 'return *p + 1;'));
    expect(after.split('\n').every((l, k, all) => k === all.length - 1 || l.endsWith('\r'))).toBe(
      true,
    );
    const dir = repo({ 'src/f.c': c });
    try {
      writeFileSync(join(dir, 'src/f.c'), after);
      expect(run('git', ['diff', '--numstat'], dir).stdout.trim()).toBe('1\t1\tsrc/f.c');
      run('git', ['checkout', '--', 'src/f.c'], dir);
      const patch = toGitPatch([{ path: 'src/f.c', before: c, content: after }]);
      writeFileSync(join(dir, 'm.patch'), patch);
      const applied = run('git', ['apply', 'm.patch'], dir);
      expect(applied.stderr).toBe('');
      expect(readFileSync(join(dir, 'src/f.c'), 'utf8')).toBe(after);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(syntax('c', after)).toBe('ok');
  });

  it('Go: a whitespace-rule edit of a CRLF file is re-indented with tabs and written with CRLF', () => {
    const go = 'package n\r\n\r\nfunc F(u *U) int {\r\n\treturn u.ID\r\n}\r\n';
    const r = applyEdits(
      reader({ 'n/f.go': go }),
      parseEditBlocks(
        block(
          'n/f.go',
          '    return u.ID',
          '    if u == nil {\n        return 0\n    }\n    return u.ID',
          'go',
        ),
      ),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: true, rule: 'whitespace' });
    expect(r.files.get('n/f.go')!.after).toBe(
      'package n\r\n\r\nfunc F(u *U) int {\r\n\tif u == nil {\r\n\t\treturn 0\r\n\t}\r\n\treturn u.ID\r\n}\r\n',
    );
    expect(syntax('go', r.files.get('n/f.go')!.after.replace(/\r/g, ''))).toBe('ok');
  });

  it('replays anomalyco/opencode#45888 and earendil-works/pi#8544: mixed endings, each untouched line keeps its bytes', () => {
    const lfRegion = applyEdits(
      reader({ 'm.py': 'alpha\nbeta\r\ngamma\n' }),
      parseEditBlocks(block('m.py', 'gamma', 'GAMMA')),
    );
    expect(lfRegion.files.get('m.py')!.after).toBe('alpha\nbeta\r\nGAMMA\n');
    expect(lfRegion.outcomes[0]!.detail).toContain('mixed line endings kept');
    const crlfRegion = applyEdits(
      reader({ 'm.py': 'alpha\nbeta\r\ngamma\n' }),
      parseEditBlocks(block('m.py', 'beta', 'beta = 1\nbeta2 = 2')),
    );
    expect(crlfRegion.files.get('m.py')!.after).toBe('alpha\nbeta = 1\r\nbeta2 = 2\r\ngamma\n');
    const pi = applyEdits(
      reader({ 'f.txt': 'a\r\nb\nc' }),
      parseEditBlocks(block('f.txt', 'c', 'C')),
    );
    expect(pi.files.get('f.txt')!.after).toBe('a\r\nb\nC');
  });

  it('an answer written with CRLF is read as LF and still matches an LF file exactly', () => {
    const r = applyEdits(
      reader({ 'a.py': 'x = 1\n' }),
      parseEditBlocks(block('a.py', 'x = 1', 'x = 2').replace(/\n/g, '\r\n')),
    );
    expect(r.outcomes[0]).toMatchObject({ applied: true, rule: 'exact' });
    expect(r.files.get('a.py')!.after).toBe('x = 2\n');
  });
});
