/**
 * The in-image half of Strategy B "control" checks for Python (helpers on `ast`) (control.ts gives the rules and
 * computes the sites; emit.ts writes the test around it): for a function, an operand X and the
 * recorded use signatures, how many such uses there are and how many are not guarded; the check
 * passes with >= 1 use and none unguarded. The other languages' halves: checker-go.ts,
 * checker-py.ts, checker-c.ts.
 */

import { PY_TABLES } from './checker-tables.js';

/** Python helpers (appended to the pytest module; uses _ROOT, _f2p_tokens, _f2p_function). */
export const PY_GUARD = `
_TERM = re.compile(r"^(sys\\.exit|os\\._exit|os\\.abort|exit|quit)$")


_F2P_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
${PY_TABLES}


def _f2p_dead(node):
    """Whether an if test is the literal False or 0, or a conjunction holding one (a then branch that never runs)."""
    if isinstance(node, ast.Constant):
        return node.value in (False, 0) and node.value is not None
    return isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) and any(_f2p_dead(v) for v in node.values)


def _f2p_binds(fn):
    """The bindings name = value of a function (one Name target): where a one-level alias or a flag is read from."""
    out = []
    for stmt in fn.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                out.append((node.targets[0].id, node.value))
    return out


class _F2pGuard:
    def __init__(self, src, operand, sigs, cond=None):
        self.src, self.members, self.flags, self.sigs = src, {operand}, {}, set(sigs)
        self.uses = self.bad = 0
        self.cond, self.seen = cond, set()

    def squash(self, node):
        return "".join(self.text(node).split())

    def cond_pol(self, node):
        op, value, sign = self.cond
        left, right, o = node.left, node.comparators[0], None
        if self.member(left) and self.squash(right) == value:
            o = _F2P_OPS[type(node.ops[0])]
        elif self.member(right) and self.squash(left) == value:
            o = _MIRROR[_F2P_OPS[type(node.ops[0])]]
        if o == op:
            return sign
        if o is not None and o == _NEGATE[op]:
            return -sign
        return 0

    def text(self, node):
        return _f2p_tokens(ast.get_source_segment(self.src, node) or "")

    def member(self, node):
        return isinstance(node, (ast.Name, ast.Attribute)) and self.text(node) in self.members

    def pol(self, node):
        if isinstance(node, ast.BoolOp):
            ps = [self.pol(v) for v in node.values]
            if isinstance(node.op, ast.And):
                return 1 if 1 in ps else 0
            return -1 if -1 in ps else 0
        if self.cond is not None:
            if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _F2P_OPS:
                return self.cond_pol(node)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
            left, right = node.left, node.comparators[0]
            none = lambda n: isinstance(n, ast.Constant) and n.value is None
            if (none(right) and self.member(left)) or (none(left) and self.member(right)):
                return 1 if isinstance(node.ops[0], (ast.IsNot, ast.NotEq)) else -1
            return 0
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return -self.pol(node.operand)
        if isinstance(node, ast.Name) and node.id in self.flags:
            return self.flags[node.id]
        return 1 if self.cond is None and self.member(node) else 0

    def use(self, sig, ok):
        if sig in self.sigs:
            self.seen.add(sig)
            self.uses += 1
            if not ok:
                self.bad += 1

    def callee(self, fn):
        return fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else None

    def expr(self, node, ok):
        if isinstance(node, ast.BoolOp):
            want, good = (1 if isinstance(node.op, ast.And) else -1), ok
            for v in node.values:
                self.expr(v, good)
                good = good or self.pol(v) == want
            return
        if isinstance(node, ast.IfExp):
            p = self.pol(node.test)
            self.expr(node.test, ok)
            self.expr(node.body, ok or p == 1)
            self.expr(node.orelse, ok or p == -1)
            return
        if isinstance(node, ast.Attribute) and self.member(node.value):
            self.use("field:" + node.attr, ok)
        elif isinstance(node, ast.Subscript) and self.member(node.value):
            self.use("index", ok)
        elif isinstance(node, ast.Call):
            if self.member(node.func):
                self.use("call", ok)
            name = self.callee(node.func)
            if name is not None:
                for a in node.args:
                    if self.member(a):
                        self.use("arg:" + name, ok)
        self.children(node, ok)

    def children(self, node, ok):
        for _, value in ast.iter_fields(node):
            if isinstance(value, list) and value and all(isinstance(v, ast.stmt) for v in value):
                self.seq(value, ok)
                continue
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, ast.stmt):
                    self.stmt(v, ok)
                elif isinstance(v, ast.AST):
                    self.expr(v, ok)

    def seq(self, stmts, ok):
        for s in stmts:
            ok = self.stmt(s, ok)
        return ok

    def stmt(self, s, ok):
        if self.cond is not None and isinstance(s, (ast.Expr, ast.Assign, ast.AugAssign)):
            self.use("effect:" + self.squash(s), ok)
        if self.cond is not None and isinstance(s, ast.If) and _f2p_dead(s.test):
            self.seq(s.orelse, ok)
            return ok
        if isinstance(s, ast.If):
            self.expr(s.test, ok)
            p = self.pol(s.test)
            self.seq(s.body, ok or p == 1)
            if s.orelse:
                self.seq(s.orelse, ok or p == -1)
            if (p == -1 and self.safe(s.body)) or (p == 1 and s.orelse and self.safe(s.orelse)):
                return True
            return ok
        self.children(s, ok)
        return ok

    def safe(self, stmts):
        return any(self.exits(s) for s in stmts) or (self.cond is None and any(self.assigns(s) for s in stmts))

    def exits(self, s):
        if isinstance(s, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
            return True
        if isinstance(s, ast.If):
            return bool(s.orelse) and any(self.exits(c) for c in s.body) and any(self.exits(c) for c in s.orelse)
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            return _TERM.match(self.text(s.value.func)) is not None
        return False

    def assigns(self, s):
        return isinstance(s, ast.Assign) and any(self.member(t) for t in s.targets)


def _f2p_cond(file, qualified, operand, op, value, sigs):
    """A comparison site: every recorded effect occurs, each on its side; None when the function is missing."""
    for sign, prefix in ((1, "effect+:"), (-1, "effect-:")):
        group = ["effect:" + s[len(prefix) :] for s in sigs if s.startswith(prefix)]
        if not group:
            continue
        g = _f2p_guard(file, qualified, operand, group, (op, value, sign))
        if g is None:
            return None
        if g.bad or g.seen != set(group):
            return False
    return True


def _f2p_guard(file, qualified, operand, sigs, cond=None):
    """(uses, unguarded uses) of operand with a signature in sigs; None when the function is missing."""
    found = _f2p_function(file, qualified)
    if found is None:
        return None
    src, fn = found
    g = _F2pGuard(src, operand, sigs, cond)
    binds = _f2p_binds(fn)
    for name, value in binds:
        if g.text(value) == operand and isinstance(value, (ast.Name, ast.Attribute)):
            g.members.add(name)
    for name, value in binds:
        if name not in g.members and not g.member(value) and g.pol(value) != 0:
            g.flags[name] = g.pol(value)
    g.seq(fn.body, False)
    return g if cond is not None else (g.uses, g.bad)
`;
