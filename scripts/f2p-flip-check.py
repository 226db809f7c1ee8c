#!/usr/bin/env python3
"""Host flip check of a state's generated Strategy B tests (docs/results/strategy-b-control.md).

Every Strategy B test of `swe5g.testgen` runs on the host, without Docker, against the fixed
files read from the bare mirror at `base_commit` (it must fail) and at `merge_commit` (it must
pass): C with `python3 f2p/f2p_check.py` per spec, Go with `go test` in a throwaway module (the
fixed files kept under `//go:build ignore`: the go/ast checker parses them, nothing else
compiles), Python with the generated module's `test_f2p*` functions. Only the checkers' reading
of the source is tested; a test that needs the build is validation's job (swe5g.validate).

Usage: f2p-flip-check.py STATE MIRRORS_DIR [--only-conditions]
  STATE        a telebench state folder (its state.db)
  MIRRORS_DIR  the folder of bare mirrors (`<owner>+<name>/repo`), as $TELEBENCH_MIRRORS_DIR
Prints per language the counts of "base fail / fix pass" (flips) and the instances that do not.
"""
import collections, json, os, re, sqlite3, subprocess, sys, tempfile

PY_RUN = ('import runpy, sys\nns = runpy.run_path(sys.argv[1])\ntry:\n'
          '    [f() for n, f in ns.items() if n.startswith("test_f2p")]\n'
          'except AssertionError:\n    sys.exit(1)\n')


def show(mirror, commit, path):
    r = subprocess.run(['git', '--git-dir', mirror, 'show', f'{commit}:{path}'], capture_output=True)
    return r.stdout if r.returncode == 0 else None


def put(d, path, data):
    os.makedirs(os.path.dirname(os.path.join(d, path)) or d, exist_ok=True)
    with open(os.path.join(d, path), 'wb') as f:
        f.write(data)


def run_c(d, mirror, commit):
    specs = sorted(f for f in os.listdir(os.path.join(d, 'f2p')) if f.endswith('.json'))
    for s in specs:
        for fn in json.load(open(os.path.join(d, 'f2p', s)))['functions']:
            src = show(mirror, commit, fn['file'])
            if src is not None:
                put(d, fn['file'], src)
    rc = [subprocess.run(['python3', 'f2p/f2p_check.py', 'f2p/' + s], cwd=d, capture_output=True).returncode
          for s in specs]
    return 'pass' if all(x == 0 for x in rc) else 'crash' if any(x not in (0, 1) for x in rc) else 'fail'


def files_of(d, name):
    out = []
    for a, _, fs in os.walk(d):
        if '.git' not in a:
            out += [os.path.relpath(os.path.join(a, f), d) for f in fs if f == name]
    return out


def run_go(d, mirror, commit):
    tests = files_of(d, 'f2p_intent_test.go')
    for t in tests:
        pkg = os.path.dirname(t)
        for n in set(re.findall(r'f2p(?:Cond|Guard|Intent)\w*\("([^"]+\.go)"', open(os.path.join(d, t)).read())):
            p = os.path.normpath(os.path.join(pkg, n))
            src = show(mirror, commit, p)
            if src is not None:
                put(d, p, b'//go:build ignore\n\n' + src)
    put(d, 'go.mod', b'module example.org/flip\n\ngo 1.21\n')
    p = subprocess.run(['go', 'test', '-count=1', './...'], cwd=d, capture_output=True, text=True,
                       env={**os.environ, 'GOFLAGS': '-mod=mod', 'GOPROXY': 'off', 'GOTOOLCHAIN': 'local'})
    if re.search(r'\[(build|setup) failed\]', p.stdout + p.stderr):
        return 'build_error'
    return 'pass' if p.returncode == 0 else 'fail'


def run_py(d, mirror, commit):
    mods = files_of(d, 'test_f2p_intent.py')
    for m in mods:
        for p in set(re.findall(r'_f2p_\w+\("([^"]+\.py)"', open(os.path.join(d, m)).read())):
            src = show(mirror, commit, p)
            if src is not None:
                put(d, p, src)
    rc = [subprocess.run(['python3', '-c', PY_RUN, m], cwd=d, capture_output=True).returncode for m in mods]
    return 'pass' if all(x == 0 for x in rc) else 'crash' if any(x not in (0, 1) for x in rc) else 'fail'


LANGS = [('c', 'f2p/f2p_check.py', 'f2p/*', '"condition"', run_c),
         ('go', 'f2p_intent_test.go', '*f2p_intent_test.go', 'f2pCondCheck("', run_go),
         ('python', 'test_f2p_intent.py', '*test_f2p_intent.py', '_f2p_cond("', run_py)]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    state, mirrors, only = sys.argv[1], sys.argv[2], '--only-conditions' in sys.argv
    db = sqlite3.connect(os.path.join(state, 'state.db'))
    res = {k: json.loads(v) for k, v in db.execute(
        "select key, output from items where stage='swe5g.resolve' and state='done'")}
    counts, misses = collections.defaultdict(collections.Counter), []
    for key, out in db.execute("select key, output from items where stage='swe5g.testgen' and state='done'"):
        o = json.loads(out)
        patch = o.get('f2p_test_patch', '')
        if o.get('strategy') != 'B':
            continue
        for lang, marker, include, cond, run in LANGS:
            if marker not in patch or (only and cond not in patch):
                continue
            r = res[key]
            mirror = os.path.join(mirrors, r['repo'].replace('/', '+'), 'repo')
            v = {}
            for label, commit in (('base', r['base_commit']), ('fix', r['merge_commit'])):
                with tempfile.TemporaryDirectory() as d:
                    subprocess.run(['git', 'init', '-q', d], check=True)
                    subprocess.run(['git', '-C', d, 'apply', f'--include={include}', '-'],
                                   input=patch.encode(), check=True)
                    v[label] = run(d, mirror, commit)
            k = f"base {v['base']} / fix {v['fix']}"
            counts[lang][k] += 1
            if k != 'base fail / fix pass':
                misses.append((key, k))
    for lang, c in counts.items():
        print(lang, dict(c))
    for m in misses:
        print('does not flip:', *m)


if __name__ == '__main__':
    main()
