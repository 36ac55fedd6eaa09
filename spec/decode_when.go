package spec

import "fmt"

// This file decodes predicates, the "when" guards of edges.

const scalarWant = "a JSON scalar (string, number, boolean or null)"

// predicate reads the guard object at wpath. It reports what the Predicate
// type cannot hold — a second operator, a member that is no operator, a
// literal of the wrong JSON kind — and leaves the rest (no channel, an
// undeclared channel, no operator) to the checker.
func (d *decoder) predicate(wpath string) *Predicate {
	p := d.p
	pr := &Predicate{}
	unknown := false
	p.object(func(key string, keyOff int) {
		path := PathKey(wpath, key)
		d.visit(path)
		switch op := Op(key); {
		case key == "channel":
			pr.Channel = d.str(path, "predicate channel", `write "channel": "<declared channel>"`)
		case isOp(op):
			if pr.Op != "" {
				d.skipErr(keyOff, path, fmt.Sprintf("predicate has more than one operator (%q and %q)", pr.Op, op),
					"a predicate takes exactly one operator; keep one, or guard separate edges")
				return
			}
			pr.Op = op
			d.operand(pr, path)
		case IsExtension(key):
			d.extra(&pr.Extra, path, key, keyOff)
		default:
			unknown = true
			d.skipErr(keyOff, path, fmt.Sprintf("predicate has unknown operator %s", quote(key)),
				didYouMean(key, predicateFields)+`a predicate holds "channel" and exactly one of `+list(Ops))
		}
	})
	if pr.Op == "" && unknown {
		// The unknown member was meant as the operator: one error is enough.
		d.check.quiet[wpath] = true
	}
	return pr
}

func isOp(op Op) bool {
	for _, o := range Ops {
		if o == op {
			return true
		}
	}
	return false
}

// operand reads the literal of pr.Op at path.
func (d *decoder) operand(pr *Predicate, path string) {
	p := d.p
	k := p.peek()
	switch pr.Op {
	case OpEq, OpNeq:
		lit, ok := d.scalar()
		if !ok {
			d.wrongKind(path, string(pr.Op)+" literal", scalarWant, k,
				"predicates compare scalars only: compare a scalar channel, or use truthy")
			return
		}
		pr.Value = lit
	case OpIn:
		if k != kindArray {
			d.wrongKind(path, "in", "an array of scalars", k, `write "in": ["a", "b"]`)
			return
		}
		pr.Values = []Literal{}
		p.array(func(i int) {
			epath := PathIndex(path, i)
			d.visit(epath)
			ek := p.peek()
			lit, ok := d.scalar()
			if !ok {
				d.wrongKind(epath, "in element literal", scalarWant, ek,
					"predicates compare scalars only: list strings, numbers, booleans or null")
			}
			pr.Values = append(pr.Values, lit)
		})
	case OpGt, OpLt:
		if k != kindNumber {
			d.wrongKind(path, string(pr.Op)+" literal", "a number", k,
				fmt.Sprintf(`write a JSON number without quotes, e.g. "%s": 3`, pr.Op))
			return
		}
		pr.Value = Literal{Kind: LitNumber, Num: p.num()}
	case OpTruthy:
		if k != kindBool {
			d.wrongKind(path, "truthy literal", "a boolean", k, `write "truthy": true or "truthy": false`)
			return
		}
		pr.Value = Literal{Kind: LitBool, Bool: p.word() == "true"}
	}
}

// scalar reads a string, number, boolean or null as a Literal; for an object
// or array it consumes nothing and returns false.
func (d *decoder) scalar() (Literal, bool) {
	p := d.p
	switch p.peek() {
	case kindString:
		return Literal{Kind: LitString, Str: p.str()}, true
	case kindNumber:
		return Literal{Kind: LitNumber, Num: p.num()}, true
	case kindBool:
		return Literal{Kind: LitBool, Bool: p.word() == "true"}, true
	case kindNull:
		p.word()
		return Literal{Kind: LitNull}, true
	}
	return Literal{}, false
}
