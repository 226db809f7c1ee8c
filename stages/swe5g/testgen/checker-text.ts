/**
 * The in-image half of Strategy B `text` checks (text-count.ts gives the rules and computes the
 * parent's count; emit.ts writes the tests around these): how many tests of the fix's condition a
 * function holds. A test counts written as itself, mirrored, negated, or with the operand (a
 * comparison: a side) through a one-level local alias; comments, strings, `#if 0`, dead `if`
 * branches and other functions do not count. Go on `go/ast`, Python on `ast`, C on the checker's
 * tokens and statement parser (checker-c.ts).
 */

/**
 * Go: `f2pIntentCount` (appended to the Go test file with checker-go.ts's GO_GUARD, whose
 * `f2pBinds`, `f2pDead`, `f2pMirror` and `f2pNegate` it uses).
 */
export const GO_TEXT = `
// f2pLive visits the nodes of n outside dead code: the condition and then branch of an if false
// (or a conjunction holding false) are skipped, its initializer and else kept.
func f2pLive(n ast.Node, visit func(ast.Node)) {
	ast.Inspect(n, func(c ast.Node) bool {
		if s, ok := c.(*ast.IfStmt); ok && f2pDead(s.Cond) {
			if s.Init != nil {
				f2pLive(s.Init, visit)
			}
			if s.Else != nil {
				f2pLive(s.Else, visit)
			}
			return false
		}
		if c != nil {
			visit(c)
		}
		return true
	})
}

// f2pIntentCount counts, in the body of function recv.name of file, the tests of the fix's
// condition: kind "null_check" the nil comparisons of an operand keyed key (its last name) or of
// a one-level local alias of such an operand; a comparison (cmp: left, op, right) the comparisons
// of the same sides, also mirrored or negated, a side also through a one-level local alias; other
// kinds the expressions whose tokens equal key. Dead code does not count.
// found is false when the file does not parse or has no such function.
func f2pIntentCount(file, recv, name, kind, key string, cmp []string) (count int, found bool) {
	src, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return 0, false
	}
	base := fset.File(f.Pos()).Base()
	text := func(n ast.Node) string { return f2pIntentTokens(src[int(n.Pos())-base : int(n.End())-base]) }
	squash := func(e ast.Expr) string { return strings.Join(strings.Fields(text(f2pIntentUnparen(e))), "") }
	opKey := func(e ast.Expr) string {
		switch x := f2pIntentUnparen(e).(type) {
		case *ast.SelectorExpr:
			return x.Sel.Name
		case *ast.Ident:
			return x.Name
		}
		return text(f2pIntentUnparen(e))
	}
	isNil := func(e ast.Expr) bool { id, ok := f2pIntentUnparen(e).(*ast.Ident); return ok && id.Name == "nil" }
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != name || f2pIntentRecv(fd) != recv || fd.Body == nil {
			continue
		}
		found = true
		binds := f2pBinds(fd.Body)
		aliases := func(source func(ast.Expr) bool) map[string]bool {
			out := map[string]bool{}
			for _, b := range binds {
				v := f2pIntentUnparen(b.value)
				if id, ok := v.(*ast.Ident); (!ok || id.Name != b.name) && source(v) {
					out[b.name] = true
				}
			}
			return out
		}
		alias := func(e ast.Expr, names map[string]bool) bool {
			id, ok := f2pIntentUnparen(e).(*ast.Ident)
			return ok && names[id.Name]
		}
		match := func(e ast.Expr) bool { return text(e) == key }
		if kind == "null_check" {
			names := aliases(func(v ast.Expr) bool { return opKey(v) == key })
			side := func(e ast.Expr) bool { return opKey(e) == key || alias(e, names) }
			match = func(e ast.Expr) bool {
				b, ok := e.(*ast.BinaryExpr)
				return ok && (b.Op == token.EQL || b.Op == token.NEQ) &&
					(isNil(b.Y) && !isNil(b.X) && side(b.X) || isNil(b.X) && !isNil(b.Y) && side(b.Y))
			}
		} else if len(cmp) == 3 {
			ln := aliases(func(v ast.Expr) bool { return squash(v) == cmp[0] })
			rn := aliases(func(v ast.Expr) bool { return squash(v) == cmp[2] })
			same := func(e ast.Expr, s string, names map[string]bool) bool { return squash(e) == s || alias(e, names) }
			ops := func(o string) bool { return o != "" && (o == cmp[1] || o == f2pNegate[cmp[1]]) }
			match = func(e ast.Expr) bool {
				b, ok := e.(*ast.BinaryExpr)
				if !ok {
					return false
				}
				o := b.Op.String()
				return ops(o) && same(b.X, cmp[0], ln) && same(b.Y, cmp[2], rn) ||
					ops(f2pMirror[o]) && same(b.Y, cmp[0], ln) && same(b.X, cmp[2], rn)
			}
		}
		f2pLive(fd.Body, func(n ast.Node) {
			if e, ok := n.(ast.Expr); ok && match(e) {
				count++
			}
		})
	}
	return count, found
}
`;

/**
 * Python: `_f2p_live` and `_f2p_count` (in the pytest module with checker-py.ts's PY_GUARD, whose
 * `_f2p_dead`, `_f2p_binds`, `_F2P_OPS`, `_MIRROR` and `_NEGATE` they use).
 */
export const PY_TEXT = `
def _f2p_live(node):
    """The nodes of node's subtree outside dead code (the test and body of an if False: / if 0:)."""
    if isinstance(node, ast.If) and _f2p_dead(node.test):
        for s in node.orelse:
            yield from _f2p_live(s)
        return
    yield node
    for c in ast.iter_child_nodes(node):
        yield from _f2p_live(c)


def _f2p_count(file, qualified, kind, key, cmp=None):
    """Tests of the fix's condition in the function body (f2pIntentCount's rules); None when the function is missing."""
    found = _f2p_function(file, qualified)
    if found is None:
        return None
    src, fn = found

    def text(node):
        return _f2p_tokens(ast.get_source_segment(src, node) or "")

    def squash(node):
        return "".join(text(node).split())

    def op_key(node):
        if isinstance(node, ast.Attribute):
            return node.attr
        if isinstance(node, ast.Name):
            return node.id
        return text(node)

    def is_none(node):
        return isinstance(node, ast.Constant) and node.value is None

    binds = _f2p_binds(fn)

    def aliases(source):
        return {n for n, v in binds if not (isinstance(v, ast.Name) and v.id == n) and source(v)}

    def alias(node, names):
        return isinstance(node, ast.Name) and node.id in names

    def match(node):
        return text(node) == key

    if kind == "null_check":
        names = aliases(lambda v: op_key(v) == key)

        def side(node):
            return op_key(node) == key or alias(node, names)

        def match(node):
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and isinstance(node.operand, (ast.Name, ast.Attribute)):
                return side(node.operand)
            if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
                left, right = node.left, node.comparators[0]
                return (is_none(right) and not is_none(left) and side(left)) or (is_none(left) and not is_none(right) and side(right))
            return False

    elif cmp:
        left, op, right = cmp
        ln, rn = aliases(lambda v: squash(v) == left), aliases(lambda v: squash(v) == right)
        ops = (op, _NEGATE[op])

        def same(node, s, names):
            return squash(node) == s or alias(node, names)

        def match(node):
            if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _F2P_OPS):
                return False
            o, a, b = _F2P_OPS[type(node.ops[0])], node.left, node.comparators[0]
            return (o in ops and same(a, left, ln) and same(b, right, rn)) or (_MIRROR[o] in ops and same(b, left, ln) and same(a, right, rn))

    return sum(1 for stmt in fn.body for node in _f2p_live(stmt) if isinstance(node, ast.expr) and match(node))
`;

/**
 * C: `count`, `substitutions` and `text_count` (in `f2p_check.py` after checker-c.ts's C_GUARD,
 * whose statement parser gives the live tokens and the aliases).
 */
export const C_TEXT = String.raw`
def count(body, seq):
    n = 0
    for i in range(len(body) - len(seq) + 1):
        if i > 0 and body[i - 1] in (".", "->"):
            continue
        if i + len(seq) < len(body) and body[i + len(seq)] in (".", "->", "[", "("):
            continue
        if body[i : i + len(seq)] == seq:
            n += 1
    return n


def substitutions(form, names):
    """Every token sequence of form with each placeholder $i replaced by one of names[i]."""
    out = [[]]
    for x in form:
        m = re.match(r"^\$(\d)$", x)
        opts = (names[int(m.group(1))] if int(m.group(1)) < len(names) else []) if m else [x]
        out = [p + [o] for p in out for o in opts]
    return out


def text_count(body, site):
    """Tests of the fix's condition in one body: its forms in live code, and its alias forms for each one-level alias of a side."""
    g = Guard(body, "", [])
    tree = g.tree()
    live = g.live(tree)
    n = sum(count(live, v) for v in site["variants"])
    alias = site.get("alias")
    if alias:
        binds = g.binds(tree)
        names = [g.aliases(binds, of) for of in alias["of"]]
        for form in alias["variants"]:
            n += sum(count(live, seq) for seq in substitutions(form, names))
    return n
`;
