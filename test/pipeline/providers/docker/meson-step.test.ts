/**
 * The meson step script (meson-step.ts) with the host's meson, ninja, gcc and g++ on a meson
 * project this test writes: C and C++ (`project(..., 'c', 'cpp')`), a system library through
 * pkg-config (libcrypto), a `unit` suite, a `service` suite whose test needs a database (it fails
 * when run) and an `f2p` suite. The step runs the selected suite and f2p only, builds only their
 * executables and the objects of the files it is told the fix touches, and a build error exits 97.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  MESON_BUILD_DIR,
  MESON_STEP_SCRIPT,
  mesonStepCommand,
} from '../../../../pipeline/providers/docker/meson-step.js';
import { parseMesonTestLog } from '../../../../stages/swe5g/harness/parsers.js';
import { firstErrorLines } from '../../../../stages/swe5g/validate/validate.js';

let root: string;
const write = (rel: string, text: string): void => {
  mkdirSync(dirname(join(root, 'src', rel)), { recursive: true });
  writeFileSync(join(root, 'src', rel), text);
};
const step = (args: string): { code: number; out: string } => {
  const r = spawnSync(
    'sh',
    ['-c', args.replace('/opt/telebench/meson_step.py', join(root, 'meson_step.py'))],
    { cwd: join(root, 'src'), encoding: 'utf8', timeout: 3_600_000 },
  );
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
};

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'telebench-meson-step-'));
  writeFileSync(join(root, 'meson_step.py'), MESON_STEP_SCRIPT);
  write(
    'meson.build',
    `project('nf', 'c', 'cpp')
crypto = dependency('libcrypto')
core = static_library('core', 'lib/core.c', 'lib/hash.cpp', dependencies: crypto)
amf = static_library('amf', 'src/amf/handler.c')
t_core = executable('t_core', 'tests/t_core.c', link_with: core)
t_db = executable('t_db', 'tests/t_db.c')
test('core', t_core, suite: 'unit')
test('needs_db', t_db, suite: 'service')
py = find_program('python3')
test('f2p_check', py, args: ['-c', 'print(1)'], suite: 'f2p')
`,
  );
  write('lib/core.c', 'int core_add(int a, int b) { return a + b; }\n');
  write(
    'lib/hash.cpp',
    '#include <openssl/crypto.h>\nextern "C" const char *core_ver(void) { return OpenSSL_version(0); }\n',
  );
  write('src/amf/handler.c', 'int amf_handle(int *p) { return p ? *p : -1; }\n');
  write(
    'tests/t_core.c',
    'int core_add(int, int);\nint main(void) { return core_add(1, 2) == 3 ? 0 : 1; }\n',
  );
  write('tests/t_db.c', 'int main(void) { return 1; /* no MongoDB here */ }\n');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const sel = {
  suites: ['unit'],
  tests: [],
  setupOptions: ['-Dbuildtype=debug'],
  compile: ['src/amf/handler.c'],
};

describe('meson step (kept build, registry selection)', () => {
  it('builds only the selected tests and the fix objects, runs unit + f2p, never the service suite', () => {
    const built = step(mesonStepCommand(sel, 'build'));
    expect(built.out).not.toMatch(/telebench: build failed/);
    expect(built.code).toBe(0);
    const b = join(root, 'src', MESON_BUILD_DIR);
    expect(existsSync(join(b, 't_core'))).toBe(true);
    expect(existsSync(join(b, 't_db'))).toBe(false); // the service suite's test is never built
    expect(existsSync(join(b, 'libamf.a'))).toBe(false); // only the fix's object, not its library
    expect(existsSync(join(b, 'libamf.a.p', 'src_amf_handler.c.o'))).toBe(true);

    const ran = step(mesonStepCommand(sel, 'test', 2));
    expect(ran.code).toBe(0);
    const parsed = parseMesonTestLog(
      readFileSync(join(b, 'meson-logs', 'testlog.json'), 'utf8'),
      readFileSync(join(root, 'src', '.telebench', 'tests.json'), 'utf8'),
      2,
    );
    expect(parsed.tests).toEqual({ 'unit::core': 'pass', 'f2p::f2p_check': 'pass' });
  });

  it('exits 97 naming the build failure when a touched file does not compile', () => {
    write('src/amf/handler.c', 'int amf_handle(int *p) { return p ? *p : -1 }\n');
    const r = step(mesonStepCommand(sel, 'test'));
    expect(r.code).toBe(97);
    expect(r.out).toMatch(/handler.c:1:44: error: expected/);
    expect(r.out).toMatch(/telebench: build failed \(ninja\)/);
    // the skip detail of build_failed_at_parent quotes these lines
    expect(firstErrorLines(r.out)[0]).toMatch(/^FAILED: libamf\.a\.p\/src_amf_handler\.c\.o/);
    expect(firstErrorLines(r.out)[1]).toMatch(/handler\.c:1:44: error: expected/);
  });
});
