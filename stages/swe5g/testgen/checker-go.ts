/**
 * The in-image half of Strategy B "control" checks for Go (helpers on `go/ast`) (control.ts gives the rules and
 * computes the sites; emit.ts writes the test around it): for a function, an operand X and the
 * recorded use signatures, how many such uses there are and how many are not guarded; the check
 * passes with >= 1 use and none unguarded. The other languages' halves: checker-go.ts,
 * checker-py.ts, checker-c.ts.
 */

import { GO_TABLES } from './checker-tables.js';

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

${GO_TABLES}

func (g *f2pGuard) squash(n ast.Node) string { return strings.Join(strings.Fields(g.text(n)), "") }

func (g *f2pGuard) condPol(x *ast.BinaryExpr) int {
	o := ""
	if g.member(x.X) && g.squash(f2pIntentUnparen(x.Y)) == g.cond.value {
		o = x.Op.String()
	} else if g.member(x.Y) && g.squash(f2pIntentUnparen(x.X)) == g.cond.value {
		o = f2pMirror[x.Op.String()]
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

// f2pBind is one binding name = value of a function body.
type f2pBind struct {
	name  string
	value ast.Expr
}

// f2pBinds lists the bindings of a function body with one name and one value (v := X, v = X,
// var v = X, also in an if's initializer): the forms a one-level local alias or a flag is read
// from, by the control checks and the text count alike.
func f2pBinds(body ast.Node) []f2pBind {
	var out []f2pBind
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			if len(x.Lhs) == 1 && len(x.Rhs) == 1 {
				if id, ok := x.Lhs[0].(*ast.Ident); ok {
					out = append(out, f2pBind{id.Name, x.Rhs[0]})
				}
			}
		case *ast.ValueSpec:
			if len(x.Names) == 1 && len(x.Values) == 1 {
				out = append(out, f2pBind{x.Names[0].Name, x.Values[0]})
			}
		}
		return true
	})
	return out
}

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
		binds := f2pBinds(fd.Body)
		for _, b := range binds {
			if g.text(f2pIntentUnparen(b.value)) == operand {
				g.members[b.name] = true
			}
		}
		for _, b := range binds {
			if g.members[b.name] {
				continue
			}
			if p := g.pol(b.value); p != 0 && !g.member(b.value) {
				g.flags[b.name] = p
			}
		}
		g.stmt(fd.Body, false)
	}
	return g, found
}
`;
