"""Install a Python env layer's requirements at the era's pins, lifting the pins that do not install.

telebench (issue 31; docs/environments.md, "A pin of the era that does not install"). The env
layer installs the requirements with uv at the era date (``--exclude-newer``). When a package of
the era's pins cannot be built or installed under the era's interpreter, this script takes, for
that package only, the oldest later release that installs, and installs again; at most
``--max-lifts`` packages. Two kinds of failure are lifted:

- the package's own: its sdist's ``setup.py`` or build fails (``Failed to build `name==v```), or
  it has no wheel for this Python (``name==v has no wheels with a matching ...``). The package is
  then overridden (uv ``--override``) with the oldest later release that builds alone (a probe:
  ``uv pip install --no-deps --resolution lowest 'name>v'`` into a scratch folder, the date
  lifted for that package; a release that fails there is stepped over);
- a build dependency's: the build's traceback ends inside a module of the build environment
  (the setuptools of 2019 does not import on Python 3.9). That dependency is then constrained
  (uv ``--build-constraint``) to the oldest later release with which the failing package builds,
  or fails for another reason than the dependency (then the package is lifted next).

The date is lifted (``--exclude-newer-package name=false``) for each lifted name only. Each lift
is recorded in ``--report`` (JSON: ``{"python", "lifts": [{package, date_version, version,
tried, error, kind[, for]}]}``), which the build reads back. A package none of whose later
releases installs, a failure that names no package (a resolution conflict, a download error), or
a package beyond ``--max-lifts``, exits 1 with a last ``telebench:`` line naming it.

Usage: python3 py_era_install.py --uv UV --requirements FILE --exclude-newer DATE
           [--exempt NAME]... --report FILE [--max-lifts N] [--max-probes N] [--python PYTHON]
``--python`` is the interpreter installed for (default ``python3``, the image's own): uv's
``--system`` passes over a virtual environment's ``python3`` on the PATH, not one named by path.
Standard library only (Python 3.6 and later); uv's output goes to stderr as it comes.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

NAME = r"[A-Za-z0-9][A-Za-z0-9._-]*"
# ``error: Failed to build `pystemd==0.5.0``` (an sdist whose build backend fails)
FAILED_BUILD = re.compile(r"Failed to build `(" + NAME + r")==([^`\s]+)`")
# ``Because tensorflow==1.13.1 has no wheels with a matching Python ABI tag (e.g., `cp39`)``
NO_WHEEL = re.compile(r"\b(" + NAME + r")==([0-9][^\s,]*?),? (?:has|have) no (?:usable )?wheels")
# a C compiler's diagnostic: ``c/_cffi_backend.c:15:10: fatal error: ffi.h: No such file``
COMPILER_ERROR = re.compile(r"^\S+:\d+:(?:\d+:)? (?:fatal )?error: .+$")
# a Python exception or a distutils ``error:`` line inside the build backend's output
EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*(?:Error|Exception|Exit)\b.*|error: .+)$")
# a traceback frame inside the build environment uv made for an sdist
BUILD_ENV_FRAME = re.compile(r"/builds-v\d+/[^/]+/lib/python[\d.]+/site-packages/([A-Za-z_]\w*)/")
# modules whose distribution has another name
MODULE_DIST = {"pkg_resources": "setuptools", "_distutils_hack": "setuptools", "pyximport": "cython"}
# ``+ pystemd==0.7.0`` (what an install took)
INSTALLED = re.compile(r"^\s*\+ (" + NAME + r")==(\S+)\s*$", re.M)
# ``setuptools==40.9.0`` (what ``uv pip compile`` resolved)
COMPILED = re.compile(r"^(" + NAME + r")==(\S+)\s*$", re.M)


def emit(text):
    """Writes ``text`` to stderr as UTF-8, whatever the locale."""
    sys.stderr.flush()
    sys.stderr.buffer.write(text.encode("utf-8", "replace"))
    sys.stderr.buffer.flush()


def normalized(name):
    """A project name as PEP 503 compares names: lower case, runs of ``-_.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def error_line(output):
    """The line of uv's ``output`` that says why, at most 300 characters ('' for no output): a
    C compiler's first error, else the last exception or distutils ``error:`` line of the build
    backend (indented under uv's ``[stderr]``), else uv's last ``cause:`` (its prefix left out), else its first ``error:`` line,
    else the last non-empty line."""
    lines = [l.strip() for l in output.splitlines() if l.strip()]
    # the build backend's output is indented under uv's `[stderr]`; uv's own lines are not
    inner = [l.strip() for l in output.splitlines() if l.startswith("  ") and l.strip()]
    compiler = [l for l in inner if COMPILER_ERROR.match(l)]
    backend = [l for l in inner if EXCEPTION_LINE.match(l)]
    causes = [re.sub(r"^(?:cause|Caused by):\s*", "", l) for l in lines if re.match(r"(cause|Caused by):", l)]
    causes = [c for c in causes if not c.startswith("The build backend returned") and not c.startswith("Call to `")]
    errors = [l for l in lines if l.startswith("error:")]
    for pick in (compiler[:1], backend[-1:], causes[-1:], errors[:1], lines[-1:]):
        if pick:
            return pick[0][:300]
    return ""


def failing_package(output):
    """The package uv's output says failed to build or has no wheel for this interpreter:
    ``(name, version, kind)`` with ``kind`` ``build`` or ``no_wheel``; None when the output names
    none (a resolution conflict, a download error: no pin to lift)."""
    m = FAILED_BUILD.search(output)
    if m:
        return m.group(1), m.group(2), "build"
    m = NO_WHEEL.search(output)
    if m:
        return m.group(1), m.group(2), "no_wheel"
    return None


def failing_build_dependency(output):
    """The build dependency a failed build's traceback ends in (its last frame is a module of the
    build environment's site-packages: ``setuptools`` for ``setuptools/py33compat.py``, also for
    ``pkg_resources``), or None (the package's own code, a compiler, no traceback)."""
    m = FAILED_BUILD.search(output)
    if not m:
        return None
    frames = re.findall(r'File "([^"]+)", line \d+', output[m.start():])
    # ``<frozen importlib._bootstrap>``: the import machinery, not code of the build environment
    frames = [f for f in frames if not f.startswith("<frozen")]
    # ``<string>`` as the last frame: the setup.py the backend ran, a package's own code
    # (the setuptools of mid-2022 on exec()s its text; earlier ones compiled it as "setup.py")
    if not frames or frames[-1].startswith("<"):
        return None
    d = BUILD_ENV_FRAME.search(frames[-1])
    if not d:
        return None
    return normalized(MODULE_DIST.get(d.group(1), d.group(1)))


def requirement_extras(requirements_text, name):
    """The ``[extras]`` of the requirement line naming ``name`` ('' when none or not direct)."""
    for line in requirements_text.splitlines():
        m = re.match(r"\s*(" + NAME + r")\s*(\[[^\]]*\])?", line)
        if m and normalized(m.group(1)) == normalized(name):
            return m.group(2) or ""
    return ""


class Uv:
    """Runs uv with the era date, the exempt packages and the lifts so far (overrides, build
    constraints, the date lifted for each)."""

    def __init__(self, uv, exclude_newer, exempt, scratch, python="python3"):
        self.uv = uv
        self.python = python
        self.exclude_newer = exclude_newer
        self.exempt = [normalized(n) for n in exempt]
        self.scratch = scratch
        self.lifts = []

    def _write(self, name, lines):
        path = os.path.join(self.scratch, name)
        with open(path, "w") as f:
            f.write("".join(l + "\n" for l in lines))
        return path

    def _args(self, extra_lifted=(), extra_constraints=()):
        names = set(self.exempt) | {normalized(l["package"]) for l in self.lifts} | set(extra_lifted)
        args = ["--exclude-newer", self.exclude_newer]
        for n in sorted(names):
            args += ["--exclude-newer-package", n + "=false"]
        constraints = ["%s==%s" % (l["package"], l["version"]) for l in self.lifts if l["kind"] == "build_dependency"]
        constraints += list(extra_constraints)
        if constraints:
            args += ["--build-constraint", self._write("build-constraints.txt", constraints)]
        return args

    def _run(self, sub, args, stdin=None):
        env = dict(os.environ, UV_CACHE_DIR=os.path.join(self.scratch, "cache"))
        env.pop("UV_NO_CACHE", None)
        cmd = [self.uv, "pip", sub] + args
        emit("telebench: " + " ".join(cmd) + "\n")
        p = subprocess.run(
            cmd,
            env=env,
            input=None if stdin is None else stdin.encode(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        out = p.stdout.decode("utf-8", "replace")
        emit(out)
        return p.returncode, out

    def install(self, requirements, extras):
        """The full install of ``requirements`` into the interpreter's site (``--system``), the
        package lifts as overrides; returns (exit code, uv's output)."""
        args = ["--system", "--break-system-packages", "--python", self.python] + self._args()
        overrides = [
            "%s%s==%s" % (l["package"], extras.get(normalized(l["package"]), ""), l["version"])
            for l in self.lifts
            if l["kind"] != "build_dependency"
        ]
        if overrides:
            args += ["--override", self._write("overrides.txt", overrides)]
        return self._run("install", args + ["-r", requirements])

    def probe(self, requirement, lifted, constraints=()):
        """Installs ``requirement`` alone (``--no-deps``, lowest release) into a scratch folder,
        the date also lifted for ``lifted``; returns (exit code, output, {name: version taken})."""
        target = os.path.join(self.scratch, "probe")
        shutil.rmtree(target, ignore_errors=True)
        args = ["--python", self.python, "--target", target, "--no-deps", "--resolution", "lowest"]
        code, out = self._run("install", args + self._args(lifted, constraints) + [requirement])
        shutil.rmtree(target, ignore_errors=True)
        return code, out, {normalized(m.group(1)): m.group(2) for m in INSTALLED.finditer(out)}

    def resolve(self, requirement, lifted=(), lowest=False):
        """The version ``uv pip compile`` takes for ``requirement`` alone (None when none)."""
        args = ["-", "--no-header", "--no-annotate", "--no-deps", "--python", self.python]
        args += ["--resolution", "lowest"] if lowest else []
        code, out = self._run("compile", args + self._args(lifted), stdin=requirement + "\n")
        m = COMPILED.search(out) if code == 0 else None
        return m.group(2) if m else None


def later_package(uv, name, version, max_probes):
    """The oldest release of ``name`` after ``version`` that builds alone; (taken or None, the
    later releases that failed)."""
    tried = []
    after = version
    for _ in range(max_probes):
        code, out, got = uv.probe("%s>%s" % (name, after), [normalized(name)])
        if code == 0 and normalized(name) in got:
            return got[normalized(name)], tried
        failed = failing_package(out)
        if not failed or normalized(failed[0]) != normalized(name):
            return None, tried  # no later release, or a failure of another kind
        tried.append(failed[1])
        after = failed[1]
    return None, tried


def later_build_dependency(uv, dep, after, package, version, max_probes):
    """The oldest release of build dependency ``dep`` after ``after`` with which ``package==version``
    builds, or fails for a reason outside ``dep``; (taken or None, the releases that failed)."""
    tried = []
    for _ in range(max_probes):
        nxt = uv.resolve("%s>%s" % (dep, after), [dep], lowest=True)
        if nxt is None:
            return None, tried
        code, out, _ = uv.probe("%s==%s" % (package, version), [dep], ["%s==%s" % (dep, nxt)])
        if code == 0 or failing_build_dependency(out) != dep:
            return nxt, tried
        tried.append(nxt)
        after = nxt
    return None, tried


def lift_build_dependency(uv, dep, name, version, out, max_probes):
    """Lifts (or lifts again) build dependency ``dep`` for ``name==version``; the lift or None."""
    lift = next((l for l in uv.lifts if normalized(l["package"]) == dep), None)
    after = lift["version"] if lift else uv.resolve(dep)
    if after is None:
        return None
    taken, tried = later_build_dependency(uv, dep, after, name, version, max_probes)
    if taken is None:
        return None
    if lift is None:
        lift = {"package": dep, "date_version": after, "tried": [], "error": error_line(out)}
        lift.update({"kind": "build_dependency", "version": taken, "for": []})
        uv.lifts.append(lift)
    else:
        lift["tried"].append(after)  # the release taken before failed for this package
    lift["tried"] += tried
    lift["version"] = taken
    lift["for"].append("%s==%s" % (name, version))
    return lift


def install(args, uv):
    """The install rounds (module docstring). Returns (exit code, final message)."""
    req_text = open(args.requirements).read()
    extras = {}
    rounds = 2 * args.max_lifts + 1
    for _ in range(rounds):
        code, out = uv.install(args.requirements, extras)
        if code == 0:
            return 0, ""
        failed = failing_package(out)
        if not failed:
            return 1, "telebench: the era's requirements do not install, and no package is to blame: %s" % (
                error_line(out) or "uv exit %d" % code
            )
        name, version, kind = failed
        key = normalized(name)
        lift = next((l for l in uv.lifts if normalized(l["package"]) == key), None)
        dep = failing_build_dependency(out) if kind == "build" else None
        known = lift is not None or (dep and any(normalized(l["package"]) == dep for l in uv.lifts))
        if not known and args.max_lifts == 0:
            said = "telebench: python package %s: %s does not install (%s), and lifting is off (--max-lifts 0)"
            return 1, said % (name, version, error_line(out))
        if not known and len(uv.lifts) >= args.max_lifts:
            done = ", ".join("%s %s -> %s" % (l["package"], l["date_version"], l["version"]) for l in uv.lifts)
            return 1, (
                "telebench: python package %s: %s does not install (%s), and %d pins were lifted already, the most allowed (%s)"
                % (name, version, error_line(out), len(uv.lifts), done)
            )
        if dep and dep != key:
            got = lift_build_dependency(uv, dep, name, version, out, args.max_probes)
            if got is not None:
                emit("telebench: lifted build dependency %s: %s -> %s (%s)\n" % (dep, got["date_version"], got["version"], got["error"]))
                continue
        taken, tried = later_package(uv, name, version, args.max_probes)
        if lift is None:
            lift = {"package": name, "date_version": version, "tried": [], "error": error_line(out), "kind": kind}
            extras[key] = requirement_extras(req_text, name)
        else:
            lift["tried"].append(version)  # the release taken before failed in the full install
        lift["tried"] += tried
        if taken is None:
            said = " (tried %s)" % ", ".join(lift["tried"]) if lift["tried"] else ""
            return 1, (
                "telebench: python package %s: %s (the era's) does not install on %s, nor any later release%s: %s"
                % (name, lift["date_version"], python_version(uv.python), said, lift["error"])
            )
        lift["version"] = taken
        if lift not in uv.lifts:
            uv.lifts.append(lift)
        emit("telebench: lifted %s: %s -> %s (%s)\n" % (name, lift["date_version"], taken, lift["error"]))
    return 1, "telebench: the era's requirements still fail after %d install rounds" % rounds


def python_version(python):
    """``Python 3.9.2``: the interpreter the packages are installed for (``python``)."""
    try:
        p = subprocess.run([python, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        return p.stdout.decode("utf-8", "replace").strip() or python
    except OSError:
        return python


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--uv", required=True)
    p.add_argument("--requirements", required=True)
    p.add_argument("--exclude-newer", required=True)
    p.add_argument("--exempt", action="append", default=[])
    p.add_argument("--report", required=True)
    p.add_argument("--max-lifts", type=int, default=10)
    p.add_argument("--max-probes", type=int, default=12)
    p.add_argument("--python", default="python3")
    args = p.parse_args(argv)
    scratch = tempfile.mkdtemp(prefix="telebench-py-era-")
    try:
        uv = Uv(args.uv, args.exclude_newer, args.exempt, scratch, args.python)
        code, message = install(args, uv)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if code != 0:
        emit(message + "\n")
        return code
    keys = ("package", "date_version", "version", "tried", "error", "kind", "for")
    report = {"python": python_version(args.python), "lifts": [{k: l[k] for k in keys if k in l} for l in uv.lifts]}
    if os.path.dirname(args.report):
        os.makedirs(os.path.dirname(args.report), exist_ok=True)
    with open(args.report, "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
        f.write("\n")
    for l in uv.lifts:
        emit("telebench: not the era's pin: %s %s -> %s (%s)\n" % (l["package"], l["date_version"], l["version"], l["error"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
