/**
 * Where an LLM-written Strategy A test goes and how it runs, per language (issue 30: the
 * model-written path for C and Python too, not only Go). Each layout gives the prompt profile
 * (llmtest.ts) and turns an accepted answer into the test patch and its FAIL_TO_PASS id:
 * - Go: `<pkg dir>/f2p_llm_test.go`, id `<import path>::TestF2PLLM_X` (go test).
 * - Python: `<tests dir>/test_f2p_llm.py`, a pytest module the model writes after telebench's
 *   header (the package roots on `sys.path`, as the rule-based test has them), id
 *   `<path>::test_f2p_llm_x`.
 * - C (meson): the model writes `void f2p_llm_case(void)` (it may `#include` the fixed `.c`
 *   file, so static functions are reachable); telebench appends a `main` that runs the case in a
 *   forked child and fails when the child dies by a signal (a crash, an abort) or exits non-zero,
 *   and registers the program as meson test `f2p_llm_<fn>` in suite `f2p` (symbols the case does
 *   not reach may stay unresolved: `--unresolved-symbols=ignore-all`), id `f2p::f2p_llm_<fn>`.
 * The flip check (fails at base_commit, passes at merge_commit) is the caller's; a validated
 * instance's test, whoever wrote it, is then audited with the same mutants (stages/swe5g/audit).
 */
import { posix } from 'node:path';
import type { FixSite } from './patterns.js';
import { goImportPath, goPackageName, pythonTestDir, type ReadRepoFile } from './emit.js';
import { goProfile, type LlmTestProfile } from './llmtest.js';
import { pythonModuleOf } from './py-direct-call.js';
import { PY_CALL_HELPERS } from './py-call-helpers.js';
import { toGitPatch } from './patchfile.js';

/** An LLM test layout for one site, or why the language's test cannot be placed. */
export type LlmLayout =
  | {
      ok: true;
      profile: LlmTestProfile;
      /** The test patch and FAIL_TO_PASS id of an answer (`testName` from the profile). */
      place(content: string, testName: string): { patch: string; id: string };
    }
  | { ok: false; reason: string };

/** The sys.path header of an LLM-written Python module (the helpers' first block). */
function pythonHeader(depth: number, roots: string[]): string {
  const head = PY_CALL_HELPERS.slice(0, PY_CALL_HELPERS.indexOf('\n\nclass _F2PDict'));
  return `# telebench swe5g.testgen: LLM-written Strategy A test; the header puts the package roots on sys.path.\n${head
    .replace('__DEPTH__', String(depth))
    .replace('__ROOTS__', JSON.stringify(roots))}\n\n`;
}

/** The C main telebench appends: the case in a forked child, a signal or non-zero exit fails. */
export const C_LLM_MAIN = `
/* telebench swe5g.testgen: runs f2p_llm_case in a forked child; a signal (crash, abort) or a
 * non-zero exit there fails the test. */
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void)
{
    int status = 0;
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        f2p_llm_case();
        _exit(0);
    }
    if (waitpid(pid, &status, 0) < 0)
        return 2;
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "f2p_llm_case crashed: signal %d\\n", WTERMSIG(status));
        return 1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
`;

function pythonLayout(
  site: FixSite,
  readFix: ReadRepoFile,
  readBase: ReadRepoFile,
  roots: string[],
): LlmLayout {
  const mod = pythonModuleOf(site.file, (p) => readFix(p) !== null, roots);
  if (!mod) return { ok: false, reason: `${site.file} is not importable as a module` };
  const dir = pythonTestDir((p) => readBase(p) !== null);
  const path = dir === '.' ? 'test_f2p_llm.py' : `${dir}/test_f2p_llm.py`;
  return {
    ok: true,
    profile: {
      fence: 'python',
      system:
        'You write one pytest module that reproduces a crash. Answer with the module only, in one ```python block. ' +
        `Import the fixed code as \`import ${mod.module}\` (its package roots are on sys.path); use only the standard library (unittest.mock for collaborators). ` +
        'The test must call the function directly with the input that triggers the bug and fail when the call raises the crash the fix prevents. ' +
        'Name the test function test_f2p_llm_<something>. Do not print what the fix changes.',
      nameOf: (content) => /^def (test_f2p_llm\w*)\(\s*\)/m.exec(content)?.[1] ?? null,
      shapeError: 'the answer has no top-level def test_f2p_llm_<name>() test function',
    },
    place: (content, testName) => ({
      patch: toGitPatch([
        {
          path,
          content: pythonHeader(path.split('/').length - 1, mod.roots) + content,
          before: readBase(path),
        },
      ]),
      id: `${path}::${testName}`,
    }),
  };
}

function cLayout(site: FixSite, readBase: ReadRepoFile): LlmLayout {
  const meson = readBase('meson.build');
  if (meson === null)
    return {
      ok: false,
      reason: 'no meson.build at base_commit: the LLM-written C test is built by meson',
    };
  const name = `f2p_llm_${site.function.replace(/\W/g, '_')}`;
  const path = `f2p/${name}.c`;
  const dir = posix.dirname(site.file);
  return {
    ok: true,
    profile: {
      fence: 'c',
      system:
        'You write one C source file that reproduces a crash. Answer with the file only, in one ```c block. ' +
        `Define \`void f2p_llm_case(void)\` and no main (telebench runs the case in a forked child: a signal such as SIGSEGV or SIGABRT, or a non-zero exit, is the failure). ` +
        `You may #include "${site.file}" (the include path has the repository root and ${dir}) to reach static functions; use only the C library and the project's headers. ` +
        'The case must call the function directly with the input that triggers the bug. Do not print what the fix changes.',
      nameOf: (content) =>
        /\bvoid\s+f2p_llm_case\s*\(\s*void\s*\)\s*\{/.test(content) ? name : null,
      shapeError: 'the answer defines no void f2p_llm_case(void) { ... }',
    },
    place: (content) => {
      const add = [
        '',
        '# telebench swe5g.testgen: LLM-written Strategy A test (forked child, a signal fails it)',
        `${name}_exe = executable('${name}', '${path}', include_directories: include_directories('.', '${dir}'), c_args: ['-w'], link_args: ['-Wl,--unresolved-symbols=ignore-all'])`,
        `test('${name}', ${name}_exe, suite: 'f2p')`,
        '',
      ].join('\n');
      return {
        patch: toGitPatch([
          {
            path,
            content: `${content.replace(/\n*$/, '\n')}${C_LLM_MAIN}`,
            before: readBase(path),
          },
          { path: 'meson.build', content: meson.replace(/\n*$/, '\n') + add, before: meson },
        ]),
        id: `f2p::${name}`,
      };
    },
  };
}

/**
 * The LLM test layout of `site` in the repository's language.
 * @param readFix / readBase files at merge_commit / base_commit; `pythonRoots` the registry's
 *   `environment.python.roots`
 */
export function llmLayout(
  language: 'go' | 'c' | 'python',
  site: FixSite,
  readFix: ReadRepoFile,
  readBase: ReadRepoFile,
  pythonRoots: string[] = [],
): LlmLayout {
  if (language === 'python') return pythonLayout(site, readFix, readBase, pythonRoots);
  if (language === 'c') return cLayout(site, readBase);
  const pkg = goPackageName(readFix(site.file) ?? '');
  if (!pkg) return { ok: false, reason: `no package clause in ${site.file}` };
  const dir = posix.dirname(site.file);
  const path = dir === '.' ? 'f2p_llm_test.go' : `${dir}/f2p_llm_test.go`;
  return {
    ok: true,
    profile: goProfile(pkg),
    place: (content, testName) => ({
      patch: toGitPatch([{ path, content, before: readBase(path) }]),
      id: `${goImportPath(dir, readFix)}::${testName}`,
    }),
  };
}
