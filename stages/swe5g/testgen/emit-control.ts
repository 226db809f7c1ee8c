/**
 * The in-image halves of Strategy B "control" checks (control.ts gives the rules and computes the
 * sites): Go helpers on `go/ast`, Python helpers on `ast`, and the C checker's statement parser on
 * its own tokens. Each reports, for a function, an operand X and the recorded use signatures, how
 * many such uses there are and how many are not guarded; the check passes with >= 1 use and none
 * unguarded.
 */

/** Go helpers (appended to the Go test file; uses f2pIntentTokens / f2pIntentUnparen / f2pIntentRecv). */
export const GO_GUARD = `
var f2pGuardTerm = regexp.MustCompile(\`^(panic|os\\.Exit|runtime\\.Goexit)$|(^|\\.)(Fatal|Fatalf|Fatalln|Panic|Panicf|Panicln)$\`)

type f2pGuard struct {
	text    func(ast.Node) string
	members map[string]bool
	flags   map[string]int
	sigs    map[string]bool
	uses    int
	bad     int
	cond    *f2pCond
	seen    map[string]bool
}

// f2pCond: condition mode (a comparison site): the guard is operand op value, the uses are the
// effects (statements) recorded for its side sign (1: where it holds, -1: where it fails).
type f2pCond struct {
	op, value string
	sign      int
}

var f2pMirror = map[token.Token]token.Token{token.EQL: token.EQL, token.NEQ: token.NEQ, token.LSS: token.GTR, token.GTR: token.LSS, token.LEQ: token.GEQ, token.GEQ: token.LEQ}
var f2pNegate = map[string]string{"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}

func (g *f2pGuard) squash(n ast.Node) string { return strings.Join(strings.Fields(g.text(n)), "") }

func (g *f2pGuard) condPol(x *ast.BinaryExpr) int {
	o := ""
	if g.member(x.X) && g.squash(f2pIntentUnparen(x.Y)) == g.cond.value {
		o = x.Op.String()
	} else if g.member(x.Y) && g.squash(f2pIntentUnparen(x.X)) == g.cond.value {
		o = f2pMirror[x.Op].String()
	}
	if o != "" && o == g.cond.op {
		return g.cond.sign
	}
	if o != "" && o == f2pNegate[g.cond.op] {
		return -g.cond.sign
	}
	return 0
}

func (g *f2pGuard) member(e ast.Expr) bool {
	switch x := f2pIntentUnparen(e).(type) {
	case *ast.Ident, *ast.SelectorExpr:
		return g.members[g.text(x)]
	}
	return false
}

func f2pGuardNil(e ast.Expr) bool { id, ok := f2pIntentUnparen(e).(*ast.Ident); return ok && id.Name == "nil" }

// pol: 1 when X is good in the then branch of cond, -1 in the else branch, 0 neither.
func (g *f2pGuard) pol(e ast.Expr) int {
	switch x := f2pIntentUnparen(e).(type) {
	case *ast.BinaryExpr:
		switch x.Op {
		case token.LAND:
			if g.pol(x.X) == 1 || g.pol(x.Y) == 1 {
				return 1
			}
		case token.LOR:
			if g.pol(x.X) == -1 || g.pol(x.Y) == -1 {
				return -1
			}
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
			if g.cond != nil {
				return g.condPol(x)
			}
			if x.Op != token.EQL && x.Op != token.NEQ {
				return 0
			}
			if f2pGuardNil(x.Y) && g.member(x.X) || f2pGuardNil(x.X) && g.member(x.Y) {
				if x.Op == token.NEQ {
					return 1
				}
				return -1
			}
		}
	case *ast.UnaryExpr:
		if x.Op == token.NOT {
			return -g.pol(x.X)
		}
	case *ast.Ident:
		return g.flags[x.Name]
	}
	return 0
}

func (g *f2pGuard) use(sig string, ok bool) {
	if g.sigs[sig] {
		g.seen[sig] = true
		g.uses++
		if !ok {
			g.bad++
		}
	}
}

func (g *f2pGuard) children(n ast.Node, ok bool) {
	ast.Inspect(n, func(c ast.Node) bool {
		if c == n {
			return true
		}
		switch c := c.(type) {
		case ast.Stmt:
			g.stmt(c, ok)
		case ast.Expr:
			g.expr(c, ok)
		}
		return false
	})
}

func (g *f2pGuard) expr(e ast.Expr, ok bool) {
	switch x := e.(type) {
	case *ast.BinaryExpr:
		if x.Op == token.LAND || x.Op == token.LOR {
			want := 1
			if x.Op == token.LOR {
				want = -1
			}
			g.expr(x.X, ok)
			g.expr(x.Y, ok || g.pol(x.X) == want)
			return
		}
	case *ast.SelectorExpr:
		if g.member(x.X) {
			g.use("field:"+x.Sel.Name, ok)
		}
	case *ast.StarExpr:
		if g.member(x.X) {
			g.use("deref", ok)
		}
	case *ast.IndexExpr:
		if g.member(x.X) {
			g.use("index", ok)
		}
	case *ast.CallExpr:
		if g.member(x.Fun) {
			g.use("call", ok)
		}
	}
	g.children(e, ok)
}

func (g *f2pGuard) seq(list []ast.Stmt, ok bool) bool {
	for _, s := range list {
		ok = g.stmt(s, ok)
	}
	return ok
}

// stmt visits s with X known good (ok) and returns whether X is good after it.
func (g *f2pGuard) stmt(s ast.Stmt, ok bool) bool {
	switch x := s.(type) {
	case *ast.BlockStmt:
		return g.seq(x.List, ok)
	case *ast.IfStmt:
		if x.Init != nil {
			ok = g.stmt(x.Init, ok)
		}
		if g.cond != nil && f2pDead(x.Cond) {
			if x.Else != nil {
				g.stmt(x.Else, ok)
			}
			return ok
		}
		g.expr(x.Cond, ok)
		p := g.pol(x.Cond)
		g.stmt(x.Body, ok || p == 1)
		if x.Else != nil {
			g.stmt(x.Else, ok || p == -1)
		}
		if p == -1 && g.safe(x.Body) || p == 1 && x.Else != nil && g.safe(x.Else) {
			return true
		}
		return ok
	case *ast.CaseClause:
		for _, e := range x.List {
			g.expr(e, ok)
		}
		g.seq(x.Body, ok)
		return ok
	case *ast.CommClause:
		if x.Comm != nil {
			g.stmt(x.Comm, ok)
		}
		g.seq(x.Body, ok)
		return ok
	case *ast.LabeledStmt:
		// a label is a join point: a goto from the bad branch may arrive there
		return g.stmt(x.Stmt, false)
	case *ast.ExprStmt, *ast.IncDecStmt:
		if g.cond != nil {
			g.use("effect:"+g.squash(s), ok)
		}
	case *ast.AssignStmt:
		if g.cond != nil && x.Tok != token.DEFINE {
			g.use("effect:"+g.squash(s), ok)
		}
	}
	g.children(s, ok)
	return ok
}

func (g *f2pGuard) safe(s ast.Stmt) bool { return g.exits(s) || g.cond == nil && g.assigns(s) }

// f2pDead: the literal false, or a conjunction holding it (a then branch that never runs).
func f2pDead(e ast.Expr) bool {
	switch x := f2pIntentUnparen(e).(type) {
	case *ast.Ident:
		return x.Name == "false"
	case *ast.BinaryExpr:
		return x.Op == token.LAND && (f2pDead(x.X) || f2pDead(x.Y))
	}
	return false
}

func (g *f2pGuard) exits(s ast.Stmt) bool {
	switch x := s.(type) {
	case *ast.ReturnStmt, *ast.BranchStmt:
		return true
	case *ast.BlockStmt:
		for _, c := range x.List {
			if g.exits(c) {
				return true
			}
		}
	case *ast.IfStmt:
		return x.Else != nil && g.exits(x.Body) && g.exits(x.Else)
	case *ast.ExprStmt:
		if c, ok := x.X.(*ast.CallExpr); ok {
			return f2pGuardTerm.MatchString(g.text(c.Fun))
		}
	}
	return false
}

func (g *f2pGuard) assigns(s ast.Stmt) bool {
	switch x := s.(type) {
	case *ast.BlockStmt:
		for _, c := range x.List {
			if g.assigns(c) {
				return true
			}
		}
	case *ast.AssignStmt:
		if x.Tok == token.ASSIGN {
			for _, l := range x.Lhs {
				if g.member(l) {
					return true
				}
			}
		}
	}
	return false
}

// f2pGuardCheck counts, in function recv.name of file, the uses of operand (and of its one-level
// local aliases) with one of sigs, and how many of them are not guarded against nil.
func f2pGuardCheck(file, recv, name, operand string, sigs []string) (uses, bad int, found bool) {
	g, found := f2pGuardRun(file, recv, name, operand, sigs, nil)
	return g.uses, g.bad, found
}

// f2pCondCheck: a comparison site (operand op value) passes when every recorded effect
// ("effect+:" where the condition holds, "effect-:" where it fails) occurs, each on its side.
func f2pCondCheck(file, recv, name, operand, op, value string, sigs []string) (ok, found bool) {
	ok = true
	for _, side := range []struct {
		sign   int
		prefix string
	}{{1, "effect+:"}, {-1, "effect-:"}} {
		var group []string
		for _, s := range sigs {
			if strings.HasPrefix(s, side.prefix) {
				group = append(group, "effect:"+s[len(side.prefix):])
			}
		}
		if len(group) == 0 {
			continue
		}
		g, f := f2pGuardRun(file, recv, name, operand, group, &f2pCond{op, value, side.sign})
		found = f
		if g.bad > 0 || len(g.seen) != len(g.sigs) {
			ok = false
		}
	}
	return ok, found
}

func f2pGuardRun(file, recv, name, operand string, sigs []string, cond *f2pCond) (*f2pGuard, bool) {
	found := false
	g := &f2pGuard{
		members: map[string]bool{operand: true},
		flags:   map[string]int{},
		sigs:    map[string]bool{},
		seen:    map[string]bool{},
		cond:    cond,
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return g, false
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return g, false
	}
	base := fset.File(f.Pos()).Base()
	g.text = func(n ast.Node) string { return f2pIntentTokens(src[int(n.Pos())-base : int(n.End())-base]) }
	for _, s := range sigs {
		g.sigs[s] = true
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != name || f2pIntentRecv(fd) != recv || fd.Body == nil {
			continue
		}
		found = true
		var binds [][2]ast.Node
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AssignStmt:
				if len(x.Lhs) == 1 && len(x.Rhs) == 1 {
					if id, ok := x.Lhs[0].(*ast.Ident); ok {
						binds = append(binds, [2]ast.Node{id, x.Rhs[0]})
					}
				}
			case *ast.ValueSpec:
				if len(x.Names) == 1 && len(x.Values) == 1 {
					binds = append(binds, [2]ast.Node{x.Names[0], x.Values[0]})
				}
			}
			return true
		})
		for _, b := range binds {
			if g.text(f2pIntentUnparen(b[1].(ast.Expr))) == operand {
				g.members[b[0].(*ast.Ident).Name] = true
			}
		}
		for _, b := range binds {
			v := b[0].(*ast.Ident).Name
			if g.members[v] {
				continue
			}
			if p := g.pol(b[1].(ast.Expr)); p != 0 && !g.member(b[1].(ast.Expr)) {
				g.flags[v] = p
			}
		}
		g.stmt(fd.Body, false)
	}
	return g, found
}
`;

/** Python helpers (appended to the pytest module; uses _ROOT, _f2p_tokens, _f2p_function). */
export const PY_GUARD = `
_TERM = re.compile(r"^(sys\\.exit|os\\._exit|os\\.abort|exit|quit)$")


_F2P_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_F2P_MIRROR = {"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}
_F2P_NEGATE = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


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
            o = _F2P_MIRROR[_F2P_OPS[type(node.ops[0])]]
        if o == op:
            return sign
        if o is not None and o == _F2P_NEGATE[op]:
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
        if self.cond is not None and isinstance(s, ast.If) and self.dead(s.test):
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

    def dead(self, node):
        if isinstance(node, ast.Constant):
            return node.value in (False, 0) and node.value is not None
        return isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) and any(self.dead(v) for v in node.values)

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
    binds = []
    for stmt in fn.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                binds.append((node.targets[0].id, node.value))
    for name, value in binds:
        if g.text(value) == operand and isinstance(value, (ast.Name, ast.Attribute)):
            g.members.add(name)
    for name, value in binds:
        if name not in g.members and not g.member(value) and g.pol(value) != 0:
            g.flags[name] = g.pol(value)
    g.seq(fn.body, False)
    return g if cond is not None else (g.uses, g.bad)
`;

/**
 * C checker part (inserted into `f2p_check.py`, uses its `tokens`): a statement parser on the
 * function body's tokens (blocks, if/else, loops and `macro(...) { }` loops, switch cases,
 * labels, simple statements) and an expression scanner (`&&`, `||`, `?:`, calls, groups).
 */
export const C_GUARD = String.raw`
_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
_KEYWORDS = {"if", "while", "for", "switch", "return", "sizeof", "case", "do", "else", "goto", "typeof", "__typeof__", "_Alignof", "alignof", "defined"}
_TERM_CALLS = {"abort", "exit", "_exit", "_Exit", "quick_exit"}
_ASSERTS = {"ogs_assert", "ogs_expect", "ogs_expect_or_return", "ogs_expect_or_return_val", "assert"}
_OPEN = {"(": ")", "[": "]", "{": "}"}
_STMT_KW = {"if", "for", "while", "switch", "do", "return", "goto", "break", "continue"}


def _is_ident(t):
    return re.match(r"^[A-Za-z_]\w*$", t) is not None


_REL = {"==", "!=", "<", "<=", ">", ">="}
_MIRROR = {"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}
_NEGATE = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


class Guard:
    def __init__(self, body, operand, sigs, cond=None):
        self.t = body
        self.members = [tokens(operand)]
        self.flags = {}
        self.sigs = set(sigs)
        self.cond = cond
        self.seen = set()
        self.uses = self.bad = 0
        self.close = {}
        stack = []
        for i, x in enumerate(body):
            if x in _OPEN:
                stack.append(i)
            elif x in (")", "]", "}") and stack:
                self.close[stack.pop()] = i

    def match(self, i):
        return self.close.get(i, len(self.t) - 1)

    def top(self, lo, hi, ops):
        out, i = [], lo
        while i < hi:
            if self.t[i] in _OPEN:
                i = self.match(i) + 1
                continue
            if self.t[i] in ops:
                out.append(i)
            i += 1
        return out

    def strip(self, lo, hi):
        while hi - lo >= 2 and self.t[lo] == "(" and self.match(lo) == hi - 1:
            lo, hi = lo + 1, hi - 1
        return lo, hi

    def member(self, lo, hi):
        lo, hi = self.strip(lo, hi)
        return self.t[lo:hi] in self.members

    def member_at(self, i):
        if i > 0 and self.t[i - 1] in (".", "->"):
            return 0
        for m in sorted(self.members, key=len, reverse=True):
            if self.t[i : i + len(m)] == m:
                return len(m)
        return 0

    def parts(self, lo, hi, op):
        cuts = self.top(lo, hi, {op})
        bounds = [lo] + [c + 1 for c in cuts]
        ends = cuts + [hi]
        return list(zip(bounds, ends))

    def pol(self, lo, hi):
        lo, hi = self.strip(lo, hi)
        if lo >= hi:
            return 0
        ors = self.parts(lo, hi, "||")
        if len(ors) > 1:
            return -1 if any(self.pol(a, b) == -1 for a, b in ors) else 0
        ands = self.parts(lo, hi, "&&")
        if len(ands) > 1:
            return 1 if any(self.pol(a, b) == 1 for a, b in ands) else 0
        if self.cond is not None:
            rel = self.top(lo, hi, _REL)
            if len(rel) == 1:
                return self.cond_pol(lo, rel[0], hi)
            if rel:
                return 0
        eq = [] if self.cond is not None else self.top(lo, hi, {"==", "!="})
        if len(eq) == 1:
            k = eq[0]
            null = lambda a, b: b - a == 1 and self.t[a] in ("NULL", "nullptr")
            if (null(k + 1, hi) and self.member(lo, k)) or (null(lo, k) and self.member(k + 1, hi)):
                return 1 if self.t[k] == "!=" else -1
            return 0
        if eq:
            return 0
        if self.t[lo] == "!":
            return -self.pol(lo + 1, hi)
        if hi - lo == 1 and self.t[lo] in self.flags:
            return self.flags[self.t[lo]]
        return 1 if self.cond is None and self.member(lo, hi) else 0

    def text(self, lo, hi):
        lo, hi = self.strip(lo, hi)
        return re.sub(r"\s+", "", "".join(self.t[lo:hi]))

    def cond_pol(self, lo, k, hi):
        op, value, sign = self.cond
        o = None
        if self.member(lo, k) and self.text(k + 1, hi) == value:
            o = self.t[k]
        elif self.member(k + 1, hi) and self.text(lo, k) == value:
            o = _MIRROR[self.t[k]]
        if o == op:
            return sign
        if o is not None and o == _NEGATE[op]:
            return -sign
        return 0

    def use(self, sig, ok):
        if sig in self.sigs:
            self.seen.add(sig)
            self.uses += 1
            if not ok:
                self.bad += 1

    def scan(self, lo, hi, ok):
        t = self.t
        if lo >= hi:
            return
        for cut in (";", ","):
            ps = self.parts(lo, hi, cut)
            if len(ps) > 1:
                for a, b in ps:
                    self.scan(a, b, ok)
                return
        asg = self.top(lo, hi, _ASSIGN)
        if asg:
            self.scan(lo, asg[0], ok)
            self.scan(asg[0] + 1, hi, ok)
            return
        q = self.top(lo, hi, {"?"})
        if q:
            depth, c = 0, None
            for k in self.top(q[0] + 1, hi, {"?", ":"}):
                if t[k] == "?":
                    depth += 1
                elif depth == 0:
                    c = k
                    break
                else:
                    depth -= 1
            if c is not None:
                self.scan(lo, q[0], ok)
                p = self.pol(lo, q[0])
                self.scan(q[0] + 1, c, ok or p == 1)
                self.scan(c + 1, hi, ok or p == -1)
                return
        for op, want in (("||", -1), ("&&", 1)):
            ps = self.parts(lo, hi, op)
            if len(ps) > 1:
                good = ok
                for a, b in ps:
                    self.scan(a, b, good)
                    good = good or self.pol(a, b) == want
                return
        i = lo
        while i < hi:
            x = t[i]
            if x in _OPEN:
                j = self.match(i)
                callee = t[i - 1] if x == "(" and i > 0 else None
                if callee is not None and _is_ident(callee) and callee not in _KEYWORDS:
                    for a, b in self.parts(i + 1, j, ","):
                        if a < b and self.member(a, b) and callee not in _ASSERTS:
                            self.use("arg:" + callee, ok)
                        self.scan(a, b, ok)
                else:
                    self.scan(i + 1, j, ok)
                i = j + 1
                continue
            m = self.member_at(i)
            if m and i + m <= hi:
                nxt = t[i + m] if i + m < hi else None
                if nxt == "->" and i + m + 1 < hi:
                    self.use("field:" + t[i + m + 1], ok)
                elif nxt == "[":
                    self.use("index", ok)
                elif i > 0 and t[i - 1] == "*" and nxt not in (".", "(") and (i < 2 or not (_is_ident(t[i - 2]) or t[i - 2] in (")", "]") or re.match(r"^\d", t[i - 2])) or t[i - 2] in _KEYWORDS):
                    self.use("deref", ok)
                i += m
                continue
            i += 1

    def parse_list(self, i, end):
        out, group = [], None
        while i < end:
            node, i = self.parse(i, end)
            if node[0] == "case":
                group = ["cases", []]
                out.append(group)
            elif group is not None:
                group[1].append(node)
            else:
                out.append(node)
        return out

    def parse(self, i, end):
        t = self.t
        x = t[i]
        nxt = t[i + 1] if i + 1 < end else None
        if x == "{":
            j = self.match(i)
            return ("block", self.parse_list(i + 1, j)), j + 1
        if x == "if" and nxt == "(":
            c = self.match(i + 1)
            then, k = self.parse(c + 1, end) if c + 1 < end else (("block", []), end)
            other = None
            if k < end and t[k] == "else":
                other, k = self.parse(k + 1, end) if k + 1 < end else (None, end)
            return ("if", (i + 2, c), then, other), k
        if x in ("while", "for", "switch") and nxt == "(":
            c = self.match(i + 1)
            body, k = self.parse(c + 1, end) if c + 1 < end else (("block", []), end)
            return ("loop", (i + 2, c), body), k
        if x == "do":
            body, k = self.parse(i + 1, end) if i + 1 < end else (("block", []), end)
            if k < end and t[k] == "while" and k + 1 < end and t[k + 1] == "(":
                c = self.match(k + 1)
                k = c + 1 + (1 if c + 1 < end and t[c + 1] == ";" else 0)
                return ("loop", (k, k), body), k
            return ("loop", (k, k), body), k
        if x in ("case", "default"):
            k = i
            while k < end and t[k] != ":":
                k += 1
            return ("case",), k + 1
        if _is_ident(x) and x not in _KEYWORDS and nxt == ":":
            if i + 2 >= end:
                return ("simple", (i, i), False), end
            stmt, k = self.parse(i + 2, end)
            return ("labeled", stmt), k
        k = i
        while k < end and t[k] != ";":
            if k > i and t[k] in _STMT_KW:
                # a statement macro without its semicolon (Open5GS: SWITCH(x) CASE("a") ... DEFAULT
                # END if (...)): a keyword that starts a statement ends it
                return ("simple", (i, k), False), k
            if t[k] == "{":
                if k > i and t[k - 1] == ")":
                    body, j = self.parse(k, end)
                    return ("loop", (i, k), body), j
                k = self.match(k) + 1
                continue
            if t[k] in ("(", "["):
                k = self.match(k)
            k += 1
        term = x in ("return", "goto", "break", "continue") or (x in _TERM_CALLS and nxt == "(")
        return ("simple", (i, k), term), k + 1

    def run(self, n, ok):
        kind = n[0]
        if kind == "block":
            for c in n[1]:
                ok = self.run(c, ok)
            return ok
        if kind == "cases":
            g = ok
            for c in n[1]:
                g = self.run(c, g)
            return ok
        if kind == "if":
            lo, hi = n[1]
            if self.cond is not None and self.dead(lo, hi):
                if n[3] is not None:
                    self.run(n[3], ok)
                return ok
            self.scan(lo, hi, ok)
            p = self.pol(lo, hi)
            self.run(n[2], ok or p == 1)
            if n[3] is not None:
                self.run(n[3], ok or p == -1)
            if (p == -1 and self.safe(n[2])) or (p == 1 and n[3] is not None and self.safe(n[3])):
                return True
            return ok
        if kind == "loop":
            self.scan(n[1][0], n[1][1], ok)
            self.run(n[2], ok)
            return ok
        if kind == "labeled":
            # a label is a join point: a goto from the bad branch may arrive there
            return self.run(n[1], False)
        if kind == "simple":
            if self.cond is not None and n[1][1] > n[1][0]:
                self.use("effect:" + re.sub(r"\s+", "", "".join(self.t[n[1][0] : n[1][1]])), ok)
            self.scan(n[1][0], n[1][1], ok)
        return ok

    def safe(self, n):
        return self.exits(n) or (self.cond is None and self.assigns(n))

    def dead(self, lo, hi):
        lo, hi = self.strip(lo, hi)
        if self.text(lo, hi) in ("0", "false"):
            return True
        ands = self.parts(lo, hi, "&&")
        return len(self.parts(lo, hi, "||")) == 1 and len(ands) > 1 and any(self.dead(a, b) for a, b in ands)

    def exits(self, n):
        if n[0] == "simple":
            return n[2]
        if n[0] == "block":
            return any(self.exits(c) for c in n[1])
        if n[0] == "if":
            return n[3] is not None and self.exits(n[2]) and self.exits(n[3])
        if n[0] == "labeled":
            return self.exits(n[1])
        return False

    def assigns(self, n):
        if n[0] == "block":
            return any(self.assigns(c) for c in n[1])
        if n[0] == "simple":
            lo, hi = n[1]
            eq = self.top(lo, hi, {"="})
            return bool(eq) and self.member(lo, eq[0])
        return False

    def simples(self, n):
        if n[0] == "simple":
            yield n[1]
        elif n[0] in ("block", "cases"):
            for c in n[1]:
                yield from self.simples(c)
        elif n[0] == "if":
            yield from self.simples(n[2])
            if n[3] is not None:
                yield from self.simples(n[3])
        elif n[0] in ("loop", "labeled"):
            yield from self.simples(n[-1])

    def check(self):
        """(uses, unguarded uses) of the operand with a recorded signature."""
        tree = ("block", self.parse_list(1, len(self.t) - 1))
        binds = []
        for lo, hi in self.simples(tree):
            eq = self.top(lo, hi, {"="})
            if len(eq) == 1 and eq[0] > lo and _is_ident(self.t[eq[0] - 1]):
                if eq[0] - 1 == lo or self.t[eq[0] - 2] not in (".", "->", "]", ")"):
                    binds.append((self.t[eq[0] - 1], eq[0] + 1, hi))
        x = self.members[0]
        for v, a, b in binds:
            a2, b2 = self.strip(a, b)
            if self.t[a2:b2] == x:
                self.members.append([v])
        for v, a, b in binds:
            if [v] not in self.members and not self.member(a, b) and self.pol(a, b) != 0:
                self.flags[v] = self.pol(a, b)
        self.run(tree, False)
        return self.uses, self.bad


def condition_check(bodies, site):
    """A comparison site: every recorded effect occurs in live code, each on its side."""
    cond = site["condition"]
    for sign, prefix in ((1, "effect+:"), (-1, "effect-:")):
        group = ["effect:" + s[len(prefix) :] for s in site["signatures"] if s.startswith(prefix)]
        if not group:
            continue
        seen, bad = set(), 0
        for b in bodies:
            g = Guard(b, site["operand"], group, (cond["op"], cond["value"], sign))
            bad += g.check()[1]
            seen |= g.seen
        if bad or seen != set(group):
            return False
    return True
`;
