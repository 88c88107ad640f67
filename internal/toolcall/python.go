package toolcall

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// pyNode is a parsed Python expression.
type pyNode struct {
	kind  string // const, name, attr, call, list, tuple, dict, set, unary, binop, subscript, slice, ellipsis
	val   any    // const value (string, int64, float64, bool, nil)
	name  string // name id, attribute name, operator
	args  []*pyNode
	kws   []pyKeyword // call keywords
	left  *pyNode     // attribute/subscript value, binop left, unary operand, call func
	right *pyNode     // binop right, subscript slice
}

type pyKeyword struct {
	name  string // "" for **expr
	value *pyNode
}

type pyParser struct {
	toks  []token
	pos   int
	depth int
}

func (p *pyParser) peek() token { return p.toks[p.pos] }
func (p *pyParser) isOp(op string) bool {
	t := p.toks[p.pos]
	return t.kind == tkOp && t.text == op
}
func (p *pyParser) advance() token { t := p.toks[p.pos]; p.pos++; return t }
func (p *pyParser) expect(op string) error {
	if !p.isOp(op) {
		return p.errf("expected %q", op)
	}
	p.pos++
	return nil
}
func (p *pyParser) errf(format string, args ...any) error {
	t := p.peek()
	desc := t.text
	if t.kind == tkEOF {
		desc = "end of input"
	}
	return fmt.Errorf("python syntax at offset %d (%s): %s", t.pos, desc, fmt.Sprintf(format, args...))
}

// parsePythonExpr parses src as a single Python expression.
func parsePythonExpr(src string) (*pyNode, error) {
	toks, err := lexPython(src)
	if err != nil {
		return nil, err
	}
	p := &pyParser{toks: toks}
	n, err := p.exprOrTuple()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tkEOF {
		return nil, p.errf("unexpected trailing input")
	}
	return n, nil
}

// exprOrTuple parses `expr (, expr)* [,]` as a tuple when a comma appears.
func (p *pyParser) exprOrTuple() (*pyNode, error) {
	first, err := p.expr()
	if err != nil {
		return nil, err
	}
	if !p.isOp(",") {
		return first, nil
	}
	elts := []*pyNode{first}
	for p.isOp(",") {
		p.pos++
		if p.atExprEnd() {
			break
		}
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		elts = append(elts, e)
	}
	return &pyNode{kind: "tuple", args: elts}, nil
}

func (p *pyParser) atExprEnd() bool {
	t := p.peek()
	return t.kind == tkEOF || (t.kind == tkOp && (t.text == ")" || t.text == "]" || t.text == "}"))
}

func (p *pyParser) expr() (*pyNode, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 200 {
		return nil, errors.New("python expression nested too deeply")
	}
	return p.arith()
}

func (p *pyParser) arith() (*pyNode, error) { return p.binops(p.term, "+", "-") }

func (p *pyParser) term() (*pyNode, error) { return p.binops(p.factor, "*", "/", "//", "%", "@") }

// binops parses a left-associative chain of operands joined by any of ops,
// each operand parsed by operand.
func (p *pyParser) binops(operand func() (*pyNode, error), ops ...string) (*pyNode, error) {
	left, err := operand()
	if err != nil {
		return nil, err
	}
	for slices.ContainsFunc(ops, p.isOp) {
		op := p.advance().text
		right, err := operand()
		if err != nil {
			return nil, err
		}
		left = &pyNode{kind: "binop", name: op, left: left, right: right}
	}
	return left, nil
}

func (p *pyParser) factor() (*pyNode, error) {
	if p.isOp("-") || p.isOp("+") || p.isOp("~") {
		op := p.advance().text
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > 200 {
			return nil, errors.New("python expression nested too deeply")
		}
		operand, err := p.factor()
		if err != nil {
			return nil, err
		}
		return &pyNode{kind: "unary", name: op, left: operand}, nil
	}
	return p.power()
}

func (p *pyParser) power() (*pyNode, error) {
	base, err := p.trailers()
	if err != nil {
		return nil, err
	}
	if p.isOp("**") {
		p.pos++
		exp, err := p.factor()
		if err != nil {
			return nil, err
		}
		return &pyNode{kind: "binop", name: "**", left: base, right: exp}, nil
	}
	return base, nil
}

func (p *pyParser) trailers() (*pyNode, error) {
	n, err := p.atom()
	if err != nil {
		return nil, err
	}
	for {
		switch {
		case p.isOp("."):
			p.pos++
			t := p.advance()
			if t.kind != tkName || pyKeywords[t.text] || t.text == "True" || t.text == "False" || t.text == "None" {
				p.pos--
				return nil, p.errf("expected attribute name")
			}
			n = &pyNode{kind: "attr", name: t.text, left: n}
		case p.isOp("("):
			p.pos++
			call, err := p.callArgs(n)
			if err != nil {
				return nil, err
			}
			n = call
		case p.isOp("["):
			p.pos++
			sl, err := p.subscript()
			if err != nil {
				return nil, err
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			n = &pyNode{kind: "subscript", left: n, right: sl}
		default:
			return n, nil
		}
	}
}

func (p *pyParser) callArgs(fn *pyNode) (*pyNode, error) {
	call := &pyNode{kind: "call", left: fn}
	seen := map[string]bool{}
	for !p.isOp(")") {
		switch {
		case p.isOp("**"):
			p.pos++
			v, err := p.expr()
			if err != nil {
				return nil, err
			}
			call.kws = append(call.kws, pyKeyword{value: v})
		case p.isOp("*"):
			return nil, p.errf("starred arguments are not supported")
		case p.peek().kind == tkName && p.toks[p.pos+1].kind == tkOp && p.toks[p.pos+1].text == "=":
			name := p.advance().text
			if pyKeywords[name] || name == "True" || name == "False" || name == "None" {
				p.pos--
				return nil, p.errf("keyword %q cannot be an argument name", name)
			}
			p.pos++ // "="
			if seen[name] {
				return nil, p.errf("keyword argument repeated: %s", name)
			}
			seen[name] = true
			v, err := p.expr()
			if err != nil {
				return nil, err
			}
			call.kws = append(call.kws, pyKeyword{name: name, value: v})
		default:
			if len(call.kws) > 0 {
				return nil, p.errf("positional argument follows keyword argument")
			}
			v, err := p.expr()
			if err != nil {
				return nil, err
			}
			call.args = append(call.args, v)
		}
		if !p.isOp(",") {
			break
		}
		p.pos++
	}
	if err := p.expect(")"); err != nil {
		return nil, err
	}
	return call, nil
}

func (p *pyParser) subscript() (*pyNode, error) {
	var elts []*pyNode
	for {
		var e *pyNode
		var err error
		if p.isOp(":") {
			e, err = p.slice()
		} else {
			e, err = p.expr()
			if err == nil && p.isOp(":") {
				e, err = p.sliceFrom(e)
			}
		}
		if err != nil {
			return nil, err
		}
		elts = append(elts, e)
		if !p.isOp(",") {
			break
		}
		p.pos++
		if p.isOp("]") {
			break
		}
	}
	if len(elts) == 1 {
		return elts[0], nil
	}
	return &pyNode{kind: "tuple", args: elts, val: "noparens"}, nil
}

func (p *pyParser) slice() (*pyNode, error) { return p.sliceFrom(nil) }

// sliceFrom parses the rest of lower:upper[:step] after lower.
func (p *pyParser) sliceFrom(lower *pyNode) (*pyNode, error) {
	parts := []*pyNode{lower, nil, nil}
	for i := 1; i < 3 && p.isOp(":"); i++ {
		p.pos++
		if !p.isOp(":") && !p.isOp("]") && !p.isOp(",") {
			e, err := p.expr()
			if err != nil {
				return nil, err
			}
			parts[i] = e
		}
	}
	return &pyNode{kind: "slice", args: parts}, nil
}

func (p *pyParser) atom() (*pyNode, error) {
	t := p.peek()
	switch t.kind {
	case tkInt:
		p.pos++
		return &pyNode{kind: "const", val: t.i}, nil
	case tkFloat:
		p.pos++
		return &pyNode{kind: "const", val: t.f}, nil
	case tkString:
		var sb strings.Builder
		for p.peek().kind == tkString {
			sb.WriteString(p.advance().str)
		}
		return &pyNode{kind: "const", val: sb.String()}, nil
	case tkName:
		p.pos++
		switch t.text {
		case "True":
			return &pyNode{kind: "const", val: true}, nil
		case "False":
			return &pyNode{kind: "const", val: false}, nil
		case "None":
			return &pyNode{kind: "const", val: nil}, nil
		}
		if pyKeywords[t.text] {
			p.pos--
			return nil, p.errf("unsupported keyword %q", t.text)
		}
		return &pyNode{kind: "name", name: t.text}, nil
	case tkOp:
		switch t.text {
		case "...":
			p.pos++
			return &pyNode{kind: "ellipsis"}, nil
		case "(":
			p.pos++
			if p.isOp(")") {
				p.pos++
				return &pyNode{kind: "tuple"}, nil
			}
			e, err := p.exprOrTuple()
			if err != nil {
				return nil, err
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			return e, nil
		case "[":
			p.pos++
			elts, err := p.exprList("]")
			if err != nil {
				return nil, err
			}
			return &pyNode{kind: "list", args: elts}, nil
		case "{":
			p.pos++
			return p.dictOrSet()
		}
	}
	return nil, p.errf("unexpected token")
}

func (p *pyParser) exprList(closer string) ([]*pyNode, error) {
	var elts []*pyNode
	for !p.isOp(closer) {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		elts = append(elts, e)
		if !p.isOp(",") {
			break
		}
		p.pos++
	}
	if err := p.expect(closer); err != nil {
		return nil, err
	}
	return elts, nil
}

func (p *pyParser) dictOrSet() (*pyNode, error) {
	if p.isOp("}") {
		p.pos++
		return &pyNode{kind: "dict"}, nil
	}
	if p.isOp("**") {
		return nil, p.errf("dict unpacking is not supported")
	}
	first, err := p.expr()
	if err != nil {
		return nil, err
	}
	if !p.isOp(":") {
		elts := []*pyNode{first}
		if p.isOp(",") {
			p.pos++
			rest, err := p.exprList("}")
			if err != nil {
				return nil, err
			}
			elts = append(elts, rest...)
		} else if err := p.expect("}"); err != nil {
			return nil, err
		}
		return &pyNode{kind: "set", args: elts}, nil
	}
	d := &pyNode{kind: "dict"}
	key := first
	for {
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		v, err := p.expr()
		if err != nil {
			return nil, err
		}
		d.args = append(d.args, key, v)
		if !p.isOp(",") {
			break
		}
		p.pos++
		if p.isOp("}") {
			break
		}
		if p.isOp("**") {
			return nil, p.errf("dict unpacking is not supported")
		}
		if key, err = p.expr(); err != nil {
			return nil, err
		}
	}
	if err := p.expect("}"); err != nil {
		return nil, err
	}
	return d, nil
}

// ParsePython decodes model output in BFCL's Python-call syntax, e.g.
// `[func(a=1, b="x"), mod.f2(c=[1, 2], d={"k": True})]`, the way BFCL's
// default_decode_ast_prompting does: strip backticks, newlines and spaces
// at both ends, wrap the text in [ ] if it does not start/end with them,
// strip single quotes at both ends, parse it as one Python expression
// that is a call or a list/tuple/set of calls, and read each call's keyword
// arguments (positional arguments are ignored, as in BFCL):
//
//   - literals: int, float, str (both quote styles, triple quotes, raw
//     strings, escapes, implicit concatenation), True, False, None, ...
//   - lists, tuples (Tuple), dicts with string keys (*Object);
//   - a bare name x becomes the string "x";
//   - -x and any other unary operator negates a constant (BFCL's quirk:
//     +5 and ~5 both give -5);
//   - arithmetic on constants is evaluated (2**10 → 1024, "a" + "b" → "ab");
//   - a nested call with keyword arguments becomes {name: {args}}; one
//     without keyword arguments becomes its source text as Python's
//     ast.unparse renders it, as does a subscript x[i].
//
// Anything else (comparisons, lambdas, f-strings, bytes, complex numbers,
// non-string dict keys, integers beyond int64) is an error, as is
// malformed syntax.
func ParsePython(text string) ([]Call, error) {
	s := strings.Trim(text, "`\n ")
	if !strings.HasPrefix(s, "[") {
		s = "[" + s
	}
	if !strings.HasSuffix(s, "]") {
		s += "]"
	}
	s = strings.Trim(strings.TrimSpace(s), "'")
	body, err := parsePythonExpr(s)
	if err != nil {
		return nil, fmt.Errorf("toolcall: %w", err)
	}
	var elts []*pyNode
	switch body.kind {
	case "call":
		elts = []*pyNode{body}
	case "list", "tuple", "set":
		elts = body.args
	default:
		return nil, fmt.Errorf("toolcall: python output is a %s, not a list of calls", body.kind)
	}
	calls := make([]Call, 0, len(elts))
	for i, e := range elts {
		if e.kind != "call" {
			return nil, fmt.Errorf("toolcall: element %d of the python output is a %s, not a call", i, e.kind)
		}
		c, err := resolveCall(e)
		if err != nil {
			return nil, fmt.Errorf("toolcall: call %d: %w", i, err)
		}
		calls = append(calls, c)
	}
	return calls, nil
}

// resolveCall is BFCL's resolve_ast_call.
func resolveCall(n *pyNode) (Call, error) {
	var parts []string
	f := n.left
	for f.kind == "attr" {
		parts = append(parts, f.name)
		f = f.left
	}
	if f.kind == "name" {
		parts = append(parts, f.name)
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	args := NewObject(len(n.kws))
	for _, kw := range n.kws {
		if kw.name == "" {
			return Call{}, errors.New("**kwargs arguments are not supported")
		}
		v, err := resolveValue(kw.value)
		if err != nil {
			return Call{}, fmt.Errorf("argument %s: %w", kw.name, err)
		}
		args.Set(kw.name, v)
	}
	return Call{Name: strings.Join(parts, "."), Args: args}, nil
}

// resolveValue is BFCL's resolve_ast_by_type.
func resolveValue(n *pyNode) (any, error) {
	switch n.kind {
	case "const":
		return n.val, nil
	case "ellipsis":
		return "...", nil
	case "unary":
		if n.left.kind != "const" {
			return nil, fmt.Errorf("unsupported operand of unary %s", n.name)
		}
		switch x := n.left.val.(type) {
		case int64:
			if x == math.MinInt64 {
				return nil, errors.New("integer out of int64 range")
			}
			return -x, nil
		case float64:
			return -x, nil
		case bool:
			if x {
				return int64(-1), nil
			}
			return int64(0), nil
		}
		return nil, fmt.Errorf("bad operand type for unary %s: %T", n.name, n.left.val)
	case "list", "tuple":
		out := make([]any, len(n.args))
		for i, e := range n.args {
			v, err := resolveValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		if n.kind == "tuple" {
			return Tuple(out), nil
		}
		return out, nil
	case "dict":
		obj := NewObject(len(n.args) / 2)
		for i := 0; i < len(n.args); i += 2 {
			k, err := resolveValue(n.args[i])
			if err != nil {
				return nil, err
			}
			ks, isStr := k.(string)
			if !isStr {
				return nil, fmt.Errorf("dict key %v is not a string", k)
			}
			v, err := resolveValue(n.args[i+1])
			if err != nil {
				return nil, err
			}
			obj.Set(ks, v)
		}
		return obj, nil
	case "binop":
		return evalConst(n, 0)
	case "name":
		return n.name, nil
	case "call":
		if len(n.kws) == 0 {
			return unparse(n), nil
		}
		c, err := resolveCall(n)
		if err != nil {
			return nil, err
		}
		obj := NewObject(1)
		obj.Set(c.Name, c.Args)
		return obj, nil
	case "subscript":
		// BFCL unparses the slice on its own, so a tuple index keeps its
		// parentheses: x[1, 2] → "x[(1, 2)]".
		idx := unparseSlice(n.right)
		if n.right.kind == "tuple" {
			parts := make([]string, len(n.right.args))
			for i, a := range n.right.args {
				parts[i] = unparseSlice(a)
			}
			idx = "(" + strings.Join(parts, ", ")
			if len(parts) == 1 {
				idx += ","
			}
			idx += ")"
		}
		return unparse(n.left) + "[" + idx + "]", nil
	}
	return nil, fmt.Errorf("unsupported python expression (%s)", n.kind)
}

// evalConst evaluates arithmetic over constants, as BFCL's eval() of a
// BinOp does for the expressions that can succeed without names.
func evalConst(n *pyNode, depth int) (any, error) {
	if depth > 100 {
		return nil, errors.New("expression too deep")
	}
	switch n.kind {
	case "const":
		switch n.val.(type) {
		case bool, int64, float64, string:
			return n.val, nil
		}
		return nil, fmt.Errorf("unsupported operand %v", n.val)
	case "unary":
		v, err := evalConst(n.left, depth+1)
		if err != nil {
			return nil, err
		}
		if b, isBool := v.(bool); isBool {
			v = boolInt(b)
		}
		switch x := v.(type) {
		case int64:
			switch n.name {
			case "-":
				if x == math.MinInt64 {
					return nil, errors.New("integer out of int64 range")
				}
				return -x, nil
			case "+":
				return x, nil
			case "~":
				return ^x, nil
			}
		case float64:
			switch n.name {
			case "-":
				return -x, nil
			case "+":
				return x, nil
			}
		}
		return nil, fmt.Errorf("bad operand type for unary %s", n.name)
	case "binop":
		l, err := evalConst(n.left, depth+1)
		if err != nil {
			return nil, err
		}
		r, err := evalConst(n.right, depth+1)
		if err != nil {
			return nil, err
		}
		return binop(n.name, l, r)
	}
	return nil, fmt.Errorf("cannot evaluate %s in an expression", n.kind)
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func binop(op string, l, r any) (any, error) {
	if b, isBool := l.(bool); isBool {
		l = boolInt(b)
	}
	if b, isBool := r.(bool); isBool {
		r = boolInt(b)
	}
	ls, lStr := l.(string)
	rs, rStr := r.(string)
	switch {
	case lStr && rStr && op == "+":
		if len(ls)+len(rs) > 1<<20 {
			return nil, errors.New("string too long")
		}
		return ls + rs, nil
	case (lStr || rStr) && op == "*":
		s, nv := ls, r
		if rStr {
			s, nv = rs, l
		}
		k, isInt := nv.(int64)
		if !isInt || lStr == rStr {
			return nil, errors.New("unsupported string operation")
		}
		if k <= 0 {
			return "", nil
		}
		if int64(len(s))*k > 1<<20 {
			return nil, errors.New("string too long")
		}
		return strings.Repeat(s, int(k)), nil
	case lStr || rStr:
		return nil, errors.New("unsupported string operation")
	}
	li, lInt := l.(int64)
	ri, rInt := r.(int64)
	if lInt && rInt {
		return intOp(op, li, ri)
	}
	lf, rf := toFloat(l), toFloat(r)
	switch op {
	case "+":
		return lf + rf, nil
	case "-":
		return lf - rf, nil
	case "*":
		return lf * rf, nil
	case "/":
		if rf == 0 {
			return nil, errors.New("division by zero")
		}
		return lf / rf, nil
	case "//":
		if rf == 0 {
			return nil, errors.New("division by zero")
		}
		return math.Floor(lf / rf), nil
	case "%":
		if rf == 0 {
			return nil, errors.New("modulo by zero")
		}
		m := math.Mod(lf, rf)
		if m != 0 && (m < 0) != (rf < 0) {
			m += rf
		}
		return m, nil
	case "**":
		if lf == 0 && rf < 0 {
			return nil, errors.New("zero to a negative power")
		}
		if lf < 0 && rf != math.Trunc(rf) {
			return nil, errors.New("complex result")
		}
		return math.Pow(lf, rf), nil
	}
	return nil, fmt.Errorf("unsupported operator %s", op)
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

func intOp(op string, a, b int64) (any, error) {
	overflow := errors.New("integer out of int64 range")
	switch op {
	case "+":
		c := a + b
		if (c > a) != (b > 0) {
			return nil, overflow
		}
		return c, nil
	case "-":
		c := a - b
		if (c < a) != (b > 0) {
			return nil, overflow
		}
		return c, nil
	case "*":
		if a != 0 && b != 0 {
			c := a * b
			if c/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
				return nil, overflow
			}
			return c, nil
		}
		return int64(0), nil
	case "/":
		if b == 0 {
			return nil, errors.New("division by zero")
		}
		return float64(a) / float64(b), nil
	case "//", "%":
		if b == 0 {
			return nil, errors.New("division by zero")
		}
		if a == math.MinInt64 && b == -1 {
			return nil, overflow
		}
		q, m := a/b, a%b
		if m != 0 && (m < 0) != (b < 0) {
			q--
			m += b
		}
		if op == "//" {
			return q, nil
		}
		return m, nil
	case "**":
		if b < 0 {
			if a == 0 {
				return nil, errors.New("zero to a negative power")
			}
			return math.Pow(float64(a), float64(b)), nil
		}
		if b > 64 && (a > 1 || a < -1) {
			return nil, overflow
		}
		r := new(big.Int).Exp(big.NewInt(a), big.NewInt(b), nil)
		if !r.IsInt64() {
			return nil, overflow
		}
		return r.Int64(), nil
	}
	return nil, fmt.Errorf("unsupported operator %s", op)
}

// Operator precedence for unparse, as in Python's ast.unparse.
func prec(n *pyNode) int {
	switch n.kind {
	case "tuple":
		return 0
	case "binop":
		switch n.name {
		case "+", "-":
			return 11
		case "**":
			return 14
		}
		return 12 // * / // % @
	case "unary":
		return 13
	}
	return 16
}

// unparse renders an expression as Python's ast.unparse does.
func unparse(n *pyNode) string {
	switch n.kind {
	case "const":
		return pyConstRepr(n.val)
	case "ellipsis":
		return "..."
	case "name":
		return n.name
	case "attr":
		base := unparse(n.left)
		if n.left.kind == "const" {
			if _, isInt := n.left.val.(int64); isInt {
				base = "(" + base + ")"
			}
		} else if prec(n.left) < 16 {
			base = "(" + base + ")"
		}
		return base + "." + n.name
	case "call":
		parts := make([]string, 0, len(n.args)+len(n.kws))
		for _, a := range n.args {
			parts = append(parts, unparse(a))
		}
		for _, kw := range n.kws {
			if kw.name == "" {
				parts = append(parts, "**"+unparse(kw.value))
			} else {
				parts = append(parts, kw.name+"="+unparse(kw.value))
			}
		}
		fn := unparse(n.left)
		if prec(n.left) < 16 {
			fn = "(" + fn + ")"
		}
		return fn + "(" + strings.Join(parts, ", ") + ")"
	case "list", "set":
		parts := make([]string, len(n.args))
		for i, a := range n.args {
			parts[i] = unparse(a)
		}
		if n.kind == "set" {
			return "{" + strings.Join(parts, ", ") + "}"
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case "tuple":
		parts := make([]string, len(n.args))
		for i, a := range n.args {
			parts[i] = unparse(a)
		}
		s := strings.Join(parts, ", ")
		if len(n.args) == 1 {
			s += ","
		}
		return "(" + s + ")"
	case "dict":
		parts := make([]string, 0, len(n.args)/2)
		for i := 0; i < len(n.args); i += 2 {
			parts = append(parts, unparse(n.args[i])+": "+unparse(n.args[i+1]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case "unary":
		op := n.name
		operand := unparse(n.left)
		if prec(n.left) < 13 {
			operand = "(" + operand + ")"
		}
		return op + operand
	case "binop":
		p := prec(n)
		l, r := unparse(n.left), unparse(n.right)
		lp, rp := prec(n.left), prec(n.right)
		if n.name == "**" {
			if lp <= p {
				l = "(" + l + ")"
			}
			if rp < p {
				r = "(" + r + ")"
			}
		} else {
			if lp < p {
				l = "(" + l + ")"
			}
			if rp <= p {
				r = "(" + r + ")"
			}
		}
		return l + " " + n.name + " " + r
	case "subscript":
		base := unparse(n.left)
		if prec(n.left) < 16 {
			base = "(" + base + ")"
		}
		return base + "[" + unparseSlice(n.right) + "]"
	case "slice":
		return unparseSlice(n)
	}
	return ""
}

func unparseSlice(n *pyNode) string {
	switch n.kind {
	case "slice":
		var sb strings.Builder
		if n.args[0] != nil {
			sb.WriteString(unparse(n.args[0]))
		}
		sb.WriteString(":")
		if n.args[1] != nil {
			sb.WriteString(unparse(n.args[1]))
		}
		if n.args[2] != nil {
			sb.WriteString(":" + unparse(n.args[2]))
		}
		return sb.String()
	case "tuple":
		if n.val == "noparens" || len(n.args) > 1 {
			parts := make([]string, len(n.args))
			for i, a := range n.args {
				parts[i] = unparseSlice(a)
			}
			return strings.Join(parts, ", ")
		}
	}
	return unparse(n)
}

// pyConstRepr is Python's repr() of a constant.
func pyConstRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return PyFloatRepr(x)
	case string:
		return PyStrRepr(x)
	}
	return fmt.Sprint(v)
}

// PyFloatRepr is Python's repr(float): the shortest round-tripping digits,
// in positional notation for exponents in [-4, 16), always with a '.' or
// an exponent.
func PyFloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// PyStrRepr is Python's repr(str).
func PyStrRepr(s string) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	var sb strings.Builder
	sb.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\':
			sb.WriteString(`\\`)
		case r == rune(q):
			sb.WriteByte('\\')
			sb.WriteByte(q)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r == ' ' || unicode.IsPrint(r):
			sb.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&sb, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&sb, `\u%04x`, r)
		default:
			fmt.Fprintf(&sb, `\U%08x`, r)
		}
	}
	sb.WriteByte(q)
	return sb.String()
}
