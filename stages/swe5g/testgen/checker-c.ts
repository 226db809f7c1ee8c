/**
 * The in-image half of Strategy B "control" checks for C (a statement parser on the checker's own tokens) (control.ts gives the rules and
 * computes the sites; emit.ts writes the test around it): for a function, an operand X and the
 * recorded use signatures, how many such uses there are and how many are not guarded; the check
 * passes with >= 1 use and none unguarded. The other languages' halves: checker-go.ts,
 * checker-py.ts, checker-c.ts.
 */

import { PY_TABLES } from './checker-tables.js';

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


${PY_TABLES}


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
            span, other = (i, k), None
            if k < end and t[k] == "else":
                other, k = self.parse(k + 1, end) if k + 1 < end else (None, end)
            # (condition, then, else, the tokens of the if and its then branch)
            return ("if", (i + 2, c), then, other, span), k
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

    def tree(self):
        """The statement tree of the body (its outer braces excluded)."""
        return ("block", self.parse_list(1, len(self.t) - 1))

    def binds(self, tree):
        """(name, value lo, value hi) of each statement v = X; / T *v = X; (not *v = X;, s.v = X;)."""
        out = []
        for lo, hi in self.simples(tree):
            eq = self.top(lo, hi, {"="})
            if len(eq) == 1 and eq[0] > lo and _is_ident(self.t[eq[0] - 1]):
                k = eq[0] - 2
                if k < lo or (self.t[k] not in (".", "->", "]", ")") and not (k == lo and self.t[k] == "*")):
                    out.append((self.t[eq[0] - 1], eq[0] + 1, hi))
        return out

    def aliases(self, binds, x):
        """Names bound to the tokens x (without parentheses): its one-level local aliases."""
        out = []
        for v, a, b in binds:
            a2, b2 = self.strip(a, b)
            if self.t[a2:b2] == x and [v] != x and v not in out:
                out.append(v)
        return out

    def live(self, tree):
        """The body's tokens with each dead if (if (0), if (false), if (0 && x)) and its then branch as ";" (its else kept)."""
        spans = []

        def walk(n):
            if n[0] == "if" and self.dead(*n[1]):
                spans.append(n[4])
                kids = [n[3]]
            elif n[0] in ("block", "cases"):
                kids = n[1]
            elif n[0] == "if":
                kids = [n[2], n[3]]
            elif n[0] in ("loop", "labeled"):
                kids = [n[-1]]
            else:
                kids = []
            for c in kids:
                if c is not None:
                    walk(c)

        walk(tree)
        out, i = [], 0
        for a, b in sorted(spans):
            out += self.t[i:a] + [";"]
            i = b
        return out + self.t[i:]

    def check(self):
        """(uses, unguarded uses) of the operand with a recorded signature."""
        tree = self.tree()
        binds = self.binds(tree)
        self.members += [[v] for v in self.aliases(binds, self.members[0])]
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
