/**
 * Test specs of tests chosen by id, for the checks swe5g.testgen makes on the host before any
 * image exists (Strategy A must fail at the parent and pass after the fix; Strategy B tests are
 * checked the same way). Where {@link testSpec} runs an instance's whole test selection in its
 * image, these run exactly the given ids (contract format `<package-or-file>::<test>`) in a
 * scratch checkout, and every step goes through the one step runner (run-step.ts) and the one
 * parser table (parse.ts) like validation's.
 *
 * One step per command:
 * - Go: one step per import path, `go test -json -count=1 -run '^(A|B)$' <pkg>` in the folder of
 *   the module that holds it (the test binary may run at most 120 s);
 * - Python: one step, pytest on the node ids with a JUnit XML report, `--rootdir=.` so the
 *   reported ids are the checkout-relative ones asked for (a `pytest.ini` above the test file,
 *   Magma's `lte/gateway/pytest.ini`, would root them there: `python/magma/...`);
 * - C, meson (`f2p::<name>` ids): one step, the images' meson step script
 *   (pipeline/providers/docker/meson-step.ts, fed on stdin) in {@link F2P_BUILD}: `meson setup
 *   --wrap-mode=nodownload` (subprojects come from the mirrors, testgen/c-subprojects.ts, never
 *   from the network), builds only the f2p tests' executables and what they link (never the
 *   whole project: Open5GS has 3,843 build steps), exit 97 when setup or build fails, then
 *   `meson test --no-rebuild` of the f2p suite;
 * - C, make: one step per target, its exit code in a make-results file.
 * Result files are written under {@link ID_RESULTS} in the checkout, so any executor reads them.
 */
import type { TestSpec } from './spec.js';
import { MESON_STEP_SCRIPT } from '../../../pipeline/providers/docker/meson-step.js';
import { GO_DIRECTIVE_GUARD } from '../../../pipeline/providers/docker/go-directive.js';

/** A Go module of the checkout: its folder (relative, '' for the root) and module path. */
export interface GoModule {
  dir: string;
  path: string;
}

/** One step of an id run: its name, its spec, the ids it reports. */
export interface IdStep {
  name: string;
  spec: TestSpec;
  ids: string[];
}

/** Folder of the result files (pytest's XML, make results), relative to the checkout. */
export const ID_RESULTS = '.telebench-ids';

/**
 * Meson build folder of the f2p checks (in {@link ID_RESULTS}, so the step script writes the
 * selected tests beside it as `tests.json`).
 */
export const F2P_BUILD = `${ID_RESULTS}/f2p_build`;

/** Exit code of the meson id step when setup or compile failed (as the harness's meson step). */
export const ID_BUILD_FAILED = 97;

/** `s` as one single-quoted POSIX shell word. */
const shq = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;
const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The steps that run `ids` (see the module comment).
 * @param opts.timeoutMs wall-clock limit of each step's command
 * @param opts.modules the checkout's Go modules (Go only): a package runs in the folder of the
 *   longest module path that prefixes it, the checkout's root when none does
 * @returns steps in run order; a language with no ids gives none
 */
export function idSteps(
  language: 'go' | 'c' | 'python',
  ids: readonly string[],
  opts: { timeoutMs: number; modules?: readonly GoModule[] },
): IdStep[] {
  const spec = (parser: TestSpec['parser'], command: string, collect: string[] = []): TestSpec => ({
    recipe: language === 'c' ? 'c-meson' : language,
    parser,
    command,
    collect,
    fresh: 'container',
    // memory, CPUs and pids are not limited on the host (the scratch executor runs processes)
    limits: { memory: 0, cpus: 0, pids: 0, timeoutMs: opts.timeoutMs },
    timeout_s: Math.floor(opts.timeoutMs / 1000),
    workdir: '.',
    excluded: [],
  });
  if (ids.length === 0) return [];
  if (language === 'go') {
    const byPkg = new Map<string, string[]>();
    for (const id of ids) {
      const [pkg, name] = id.split('::') as [string, string];
      byPkg.set(pkg, [...(byPkg.get(pkg) ?? []), name]);
    }
    const testTimeout = Math.min(120, Math.max(10, Math.floor(opts.timeoutMs / 1000) - 5));
    return [...byPkg].map(([pkg, names]) => {
      const mod = (opts.modules ?? [])
        .filter((m) => pkg === m.path || pkg.startsWith(`${m.path}/`))
        .sort((a, b) => b.path.length - a.path.length)[0];
      const cd = mod?.dir ? `cd ${shq(mod.dir)} && ` : '';
      const run = shq(`^(${names.map(escapeRe).join('|')})$`);
      return {
        name: `go test ${pkg}`,
        spec: spec(
          'go-test-json',
          `${cd}${GO_DIRECTIVE_GUARD} && go test -json -count=1 -timeout ${testTimeout}s -run ${run} ${shq(pkg)}`,
        ),
        ids: names.map((n) => `${pkg}::${n}`),
      };
    });
  }
  if (language === 'python') {
    const xml = `${ID_RESULTS}/junit.xml`;
    return [
      {
        name: 'pytest',
        spec: spec(
          'junit-xml',
          `mkdir -p ${ID_RESULTS} && rm -f ${xml}; python3 -m pytest -rA -p no:cacheprovider --rootdir=. --junitxml=${xml} -o junit_family=xunit1 ${ids.map(shq).join(' ')}`,
          [xml],
        ),
        ids: [...ids],
      },
    ];
  }
  if (ids.some((i) => i.startsWith('f2p::'))) {
    const tests = ids.map((i) => `--test ${shq(i.split('::')[1]!)}`).join(' ');
    return [
      {
        name: 'meson test f2p',
        spec: spec(
          'meson-testlog',
          `rm -f ${F2P_BUILD}/meson-logs/testlog.json\n` +
            `python3 - --build-dir ${F2P_BUILD} --suite f2p ${tests} <<'TELEBENCH_MESON_STEP'\n${MESON_STEP_SCRIPT}TELEBENCH_MESON_STEP\n`,
          [`${F2P_BUILD}/meson-logs/testlog.json`, `${ID_RESULTS}/tests.json`],
        ),
        ids: [...ids],
      },
    ];
  }
  const results = `${ID_RESULTS}/make-results.txt`;
  return ids.map((id) => {
    const target = id.split('::')[1]!;
    return {
      name: `make ${target}`,
      spec: spec(
        'make-results',
        `mkdir -p ${ID_RESULTS} || exit 98\nmake --no-print-directory ${shq(target)}; c=$?; echo "$c "${shq(id)} > ${results}; exit $c`,
        [results],
      ),
      ids: [id],
    };
  });
}
