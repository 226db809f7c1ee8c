/**
 * The meson step of a C image with a kept build (registry `environment`, docs/environments.md):
 * one script, installed in the base layer at {@link MESON_STEP_PATH}, that the env layer, the
 * instance layer and every test step run, so all three build the same targets the same way:
 *  1. `meson setup` when the build directory has no `build.ninja` (else `ninja build.ninja`
 *     regenerates it when a `meson.build` changed, e.g. the f2p tests' registration);
 *  2. the selected tests (suites and/or names from the registry; the `f2p` suite always) from
 *     `meson introspect --tests`, written to `<build>/../tests.json` for the result parser;
 *  3. builds only what they need: each selected test's executable plus the objects of the source
 *     files the fix touches (from `compile_commands.json`; a header stands for the sources of its
 *     folder), never the whole project;
 *  4. `meson test --no-rebuild` of the selected tests (`--repeat N`).
 * A build failure exits 97 with `telebench: build failed` on stderr after the tools' own output.
 */

/** Where the base layer of a `c-meson` image puts the script. */
export const MESON_STEP_PATH = '/opt/telebench/meson_step.py';

/** The kept build directory (relative to /testbed). */
export const MESON_BUILD_DIR = '.telebench/build';

/** Which tests and objects the meson step builds and runs. */
export interface MesonSelection {
  /** Meson suites of the existing tests (empty: every suite). */
  suites: readonly string[];
  /** Meson test names within them (empty: every test of the suites). */
  tests: readonly string[];
  /** `meson setup` options. */
  setupOptions: readonly string[];
  /** Repository-relative source files whose objects are built (the fix's files). */
  compile: readonly string[];
}

const shq = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * The shell command running {@link MESON_STEP_PATH} for `sel`.
 * @param mode `test` (a step), `build` (env and instance layers: build the targets, run nothing)
 */
export function mesonStepCommand(sel: MesonSelection, mode: 'test' | 'build', repeats = 1): string {
  const args = [
    `python3 ${MESON_STEP_PATH}`,
    `--build-dir ${MESON_BUILD_DIR}`,
    ...sel.setupOptions.map((o) => `--setup-option=${shq(o)}`),
    ...sel.suites.map((s) => `--suite ${shq(s)}`),
    ...sel.tests.map((t) => `--test ${shq(t)}`),
    ...sel.compile.map((f) => `--compile ${shq(f)}`),
    ...(mode === 'build' ? ['--build-only'] : repeats > 1 ? [`--repeat ${repeats}`] : []),
  ];
  return args.join(' ');
}

/** The script (Python 3, standard library only: python3 is in every c-meson base). */
export const MESON_STEP_SCRIPT = `#!/usr/bin/env python3
# telebench meson step (pipeline/providers/docker/meson-step.ts). Every tool's output stays visible.
import argparse, json, os, subprocess, sys

p = argparse.ArgumentParser()
p.add_argument("--build-dir", required=True)
p.add_argument("--setup-option", action="append", default=[])
p.add_argument("--suite", action="append", default=[])
p.add_argument("--test", action="append", default=[])
p.add_argument("--compile", action="append", default=[])
p.add_argument("--repeat", type=int, default=1)
p.add_argument("--build-only", action="store_true")
a = p.parse_args()
b = a.build_dir
root = os.getcwd()


def run(cmd):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.call(cmd)


def fail(what):
    print("telebench: build failed (%s), see the output above" % what, file=sys.stderr, flush=True)
    sys.exit(97)


if not os.path.exists(os.path.join(b, "build.ninja")):
    if run(["meson", "setup", "--wrap-mode=nodownload"] + a.setup_option + [b]) != 0:
        fail("meson setup")
elif run(["ninja", "-C", b, "build.ninja"]) != 0:
    fail("meson regenerate")
out = subprocess.run(["meson", "introspect", "--tests", b], stdout=subprocess.PIPE)
if out.returncode != 0:
    fail("meson introspect")
tests = json.loads(out.stdout.decode("utf-8") or "[]")
with open(os.path.join(os.path.dirname(b.rstrip("/")) or ".", "tests.json"), "w") as f:
    f.write(json.dumps(tests))


def chosen(t):
    suites = [s.split(":", 1)[-1] for s in t.get("suite", [])]
    if "f2p" in suites:
        return True
    if a.suite and not any(s in a.suite for s in suites):
        return False
    return not a.test or t["name"] in a.test


sel = [t for t in tests if chosen(t)]
targets = []
absb = os.path.abspath(b)
for t in sel:
    exe = os.path.abspath((t.get("cmd") or [""])[0])
    if exe.startswith(absb + os.sep):
        targets.append(os.path.relpath(exe, absb))
try:
    with open(os.path.join(b, "compile_commands.json")) as f:
        cc = json.load(f)
except OSError:
    cc = []
want = set()
for c in a.compile:
    full = os.path.normpath(os.path.join(root, c))
    if c.endswith((".h", ".hh", ".hpp")):
        want.add(("dir", os.path.dirname(full)))
    else:
        want.add(("file", full))
for e in cc:
    src = os.path.normpath(os.path.join(e.get("directory", absb), e["file"]))
    if ("file", src) in want or ("dir", os.path.dirname(src)) in want:
        if e.get("output"):
            targets.append(e["output"])
targets = sorted(set(targets))
if targets and run(["ninja", "-C", b] + targets) != 0:
    fail("ninja")
if a.build_only:
    sys.exit(0)
names = sorted(set(t["name"] for t in sel))
if not names:
    print("telebench: no test selected", file=sys.stderr)
    sys.exit(0)
cmd = ["meson", "test", "-C", b, "--no-rebuild", "--print-errorlogs", "-t", "1"]
if a.repeat > 1:
    cmd += ["--repeat", str(a.repeat)]
sys.exit(run(cmd + names))
`;
