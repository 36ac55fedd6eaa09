package gen

import (
	"fmt"
	"go/types"
	"math"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"

	"github.com/ilmek-go/ilmek/spec"
)

// Guards are compiled so that the generated program routes exactly like
// the program runtime.FromSpec builds from the same document, whose
// predicates see the JSON value of each channel (spec.Predicate.Holds):
//
//   - A channel typed any (unbound, or bound to an interface) calls
//     spec.Predicate.Holds with the predicate itself, kept in a package variable.
//   - An unbound append or merge channel always holds a list or an object:
//     truthy compiles to len(s.X) > 0; eq, in, gt and lt never hold and neq
//     always does, so such an edge is left out or followed unconditionally.
//   - A bound channel compiles to Go over its typed field, by the JSON kind
//     its type encodes to: string kinds compare with string literals, bool
//     with booleans, every numeric kind as float64 with numbers (a float32
//     as the float64 its JSON encoding reads back as: genimpl.JSONFloat32), pointers,
//     slices and maps with null when nil. A predicate that can never hold
//     (eq "buy" on an int, gt on a string) or never fail (neq "buy" on an
//     int) is a generation error naming the edge and the Go type, and so is
//     a predicate on a type that encodes itself (MarshalJSON, MarshalText),
//     whose JSON the generator cannot know.
//   - A last_write channel that was never written holds nothing: eq, in, gt
//     and lt are false, neq is true, truthy is false (Has<Channel>).

// guard is a compiled predicate.
type guard struct {
	code   jen.Code // nil when the edge is always or never followed
	always bool     // followed unconditionally (code is nil)
	never  bool     // never followed (code is nil)
	holds  bool     // code calls spec.Predicate.Holds with the predicate variable
	note   string   // why the guard is constant
}

// checkGuard compiles the guard of em and reports why it cannot be.
func checkGuard(em *edgeModel, d *diags) {
	if _, problem := compileGuard(em); problem != "" {
		d.errorf(spec.PathKey(em.path, "when"), "change the predicate or the channel's type", "%s", problem)
	}
}

// compileGuard compiles em's predicate over s (a *State).
func compileGuard(em *edgeModel) (guard, string) {
	p, c := em.when, em.ch
	field := jen.Id("s").Dot(c.field)
	if isEmptyInterface(c.typ) || isInterface(c.typ) {
		return guard{holds: true, code: jen.Id(guardVar(em)).Dot("Holds").Call(field, jen.Id("s").Dot(c.has).Call())}, ""
	}
	if !c.lastWrite() && !c.bound {
		// An unbound list or object channel.
		if p.Op == spec.OpTruthy {
			return guard{code: truthTest(jen.Len(field).Op(">").Lit(0), p.Value.Bool)}, ""
		}
		if p.Op == spec.OpNeq {
			return guard{always: true, note: fmt.Sprintf("channel %s is a %s channel, whose value is never a scalar: neq always holds", quote(c.name), c.red)}, ""
		}
		return guard{never: true, note: fmt.Sprintf("channel %s is a %s channel, whose value is never a scalar: %s never holds", quote(c.name), c.red, p.Op)}, ""
	}
	t := c.typ
	if name := selfEncoding(t); name != "" {
		return guard{}, fmt.Sprintf("the guard reads channel %s of type %s, which encodes itself with %s; the generator cannot know its JSON value, so it cannot compile the predicate", quote(c.name), typeString(t), name)
	}
	tn := typeString(t)
	nullable := c.lastWrite() // an unset or nil append/merge value reads as [] or {}
	var expr jen.Code
	switch p.Op {
	case spec.OpEq, spec.OpNeq:
		e, ok := eqCode(field, t, p.Value, nullable)
		if !ok {
			if p.Op == spec.OpEq {
				return guard{}, fmt.Sprintf("eq %s can never hold for channel %s of type %s", litText(p.Value), quote(c.name), tn)
			}
			return guard{}, fmt.Sprintf("neq %s always holds for channel %s of type %s", litText(p.Value), quote(c.name), tn)
		}
		expr = e
	case spec.OpIn:
		var alts []jen.Code
		for _, l := range p.Values {
			e, ok := eqCode(field, t, l, nullable)
			if !ok {
				return guard{}, fmt.Sprintf("in: %s can never equal channel %s of type %s", litText(l), quote(c.name), tn)
			}
			alts = append(alts, e)
		}
		if len(alts) == 0 {
			return guard{never: true, note: "in [] never holds"}, ""
		}
		expr = jen.Parens(orCode(alts))
		if len(alts) == 1 {
			expr = alts[0]
		}
	case spec.OpGt, spec.OpLt:
		op := ">"
		if p.Op == spec.OpLt {
			op = "<"
		}
		e, ok := cmpCode(field, t, op, p.Value.Float())
		if !ok {
			return guard{}, fmt.Sprintf("%s %s can never hold for channel %s of type %s: only numbers compare", p.Op, litText(p.Value), quote(c.name), tn)
		}
		expr = e
	case spec.OpTruthy:
		e, ok := truthyCode(field, t, nullable)
		if !ok {
			return guard{}, fmt.Sprintf("truthy on channel %s of type %s cannot be decided from the Go type (a struct may encode to {}); test a field channel or bind a pointer", quote(c.name), tn)
		}
		if c.lastWrite() {
			e = jen.Id("s").Dot(c.has).Call().Op("&&").Add(e)
		}
		return guard{code: truthTest(e, p.Value.Bool)}, ""
	default:
		return guard{}, fmt.Sprintf("unknown operator %q", p.Op)
	}
	if c.lastWrite() {
		expr = jen.Id("s").Dot(c.has).Call().Op("&&").Add(expr)
	}
	if p.Op == spec.OpNeq {
		expr = jen.Op("!").Parens(expr)
	}
	return guard{code: expr}, ""
}

// guardVar names the package variable holding edge em's predicate.
func guardVar(em *edgeModel) string { return fmt.Sprintf("guard%d", em.index) }

func truthTest(e jen.Code, want bool) jen.Code {
	if want {
		return e
	}
	return jen.Op("!").Parens(e)
}

func orCode(alts []jen.Code) jen.Code {
	s := jen.Add(alts[0])
	for _, a := range alts[1:] {
		s = s.Op("||").Add(a)
	}
	return s
}

// eqCode compiles "x equals literal l" for x of type t; ok is false when it
// can never hold. nullable says whether a nil x encodes to null.
func eqCode(x *jen.Statement, t types.Type, l spec.Literal, nullable bool) (jen.Code, bool) {
	u := t.Underlying()
	switch u := u.(type) {
	case *types.Pointer:
		if l.Kind == spec.LitNull {
			return x.Clone().Op("==").Nil(), true
		}
		inner, ok := eqCode(jen.Op("*").Add(x.Clone()), u.Elem(), l, false)
		if !ok {
			return nil, false
		}
		return x.Clone().Op("!=").Nil().Op("&&").Add(inner), true
	case *types.Slice, *types.Map:
		if l.Kind == spec.LitNull && nullable {
			return x.Clone().Op("==").Nil(), true
		}
		return nil, false
	case *types.Basic:
		info := u.Info()
		switch {
		case info&types.IsString != 0 && l.Kind == spec.LitString:
			if strings.ContainsRune(l.Str, utf8.RuneError) {
				// The JSON value of a string has every byte of invalid
				// UTF-8 replaced by U+FFFD, as a []rune conversion does.
				return jen.String().Call(jen.Index().Rune().Call(x.Clone())).Op("==").Lit(l.Str), true
			}
			return x.Clone().Op("==").Lit(l.Str), true
		case info&types.IsBoolean != 0 && l.Kind == spec.LitBool:
			if l.Bool {
				return x.Clone(), true
			}
			return jen.Op("!").Add(x.Clone()), true
		case info&types.IsNumeric != 0 && l.Kind == spec.LitNumber:
			return numCode(x, u).Op("==").Add(floatCode(l.Float())), true
		}
	}
	return nil, false
}

// cmpCode compiles "x op f" for a number.
func cmpCode(x *jen.Statement, t types.Type, op string, f float64) (jen.Code, bool) {
	switch u := t.Underlying().(type) {
	case *types.Pointer:
		inner, ok := cmpCode(jen.Op("*").Add(x.Clone()), u.Elem(), op, f)
		if !ok {
			return nil, false
		}
		return x.Clone().Op("!=").Nil().Op("&&").Add(inner), true
	case *types.Basic:
		if u.Info()&types.IsNumeric != 0 && u.Info()&types.IsComplex == 0 {
			return numCode(x, u).Op(op).Add(floatCode(f)), true
		}
	}
	return nil, false
}

// truthyCode compiles JSON truthiness of x (see spec.Predicate.Holds).
func truthyCode(x *jen.Statement, t types.Type, nullable bool) (jen.Code, bool) {
	switch u := t.Underlying().(type) {
	case *types.Pointer:
		inner, ok := truthyCode(jen.Op("*").Add(x.Clone()), u.Elem(), false)
		if !ok {
			return nil, false
		}
		if isConstTrue(inner) {
			return x.Clone().Op("!=").Nil(), true
		}
		return x.Clone().Op("!=").Nil().Op("&&").Add(inner), true
	case *types.Slice, *types.Map:
		return jen.Len(x.Clone()).Op(">").Lit(0), true
	case *types.Array:
		return jen.Lit(u.Len() > 0), true
	case *types.Struct:
		if alwaysEncodesMembers(u) {
			return constTrue, true
		}
		return nil, false
	case *types.Basic:
		info := u.Info()
		switch {
		case info&types.IsString != 0:
			return x.Clone().Op("!=").Lit(""), true
		case info&types.IsBoolean != 0:
			return x.Clone(), true
		case info&types.IsFloat != 0:
			return x.Clone().Op("!=").Lit(0).Op("&&").Op("!").Qual("math", "IsNaN").Call(floatOf(x, u)), true
		case info&types.IsNumeric != 0 && info&types.IsComplex == 0:
			return x.Clone().Op("!=").Lit(0), true
		}
	}
	return nil, false
}

// constTrue stands for a truthiness that holds for every value of a type.
var constTrue = jen.True()

func isConstTrue(c jen.Code) bool { return c == constTrue }

// numCode converts x to the float64 of its JSON value unless it already is
// one. A float32 encodes as the shortest decimal that reads back as
// itself, which is not always float64(x) (float32(0.1) encodes as 0.1), so
// it goes through genimpl.JSONFloat32; every other numeric kind converts
// exactly.
func numCode(x *jen.Statement, b *types.Basic) *jen.Statement {
	if b.Kind() == types.Float32 {
		return jen.Qual(genimplPath, "JSONFloat32").Call(x.Clone())
	}
	return floatOf(x, b)
}

// floatOf converts x to float64 unless it already is one.
func floatOf(x *jen.Statement, b *types.Basic) *jen.Statement {
	if b.Kind() == types.Float64 && b.Name() == "float64" {
		return x.Clone()
	}
	return jen.Float64().Call(x.Clone())
}

// floatCode writes f as a Go constant expression (math.Inf for overflowed
// literals such as 1e400).
func floatCode(f float64) jen.Code {
	switch {
	case math.IsInf(f, 1):
		return jen.Qual("math", "Inf").Call(jen.Lit(1))
	case math.IsInf(f, -1):
		return jen.Qual("math", "Inf").Call(jen.Lit(-1))
	}
	return jen.Lit(f)
}

// alwaysEncodesMembers reports whether every value of struct s encodes to a
// JSON object with at least one member: it has an exported, non-embedded
// field that is neither omitted ("-") nor omitempty/omitzero.
func alwaysEncodesMembers(s *types.Struct) bool {
	for i := 0; i < s.NumFields(); i++ {
		f := s.Field(i)
		if !f.Exported() || f.Embedded() {
			continue
		}
		tag := reflect.StructTag(s.Tag(i)).Get("json")
		if tag == "-" {
			continue
		}
		opts := strings.Split(tag, ",")[1:]
		omit := false
		for _, o := range opts {
			if o == "omitempty" || o == "omitzero" {
				omit = true
			}
		}
		if !omit {
			return true
		}
	}
	return false
}

// selfEncoding returns the name of the method with which t (or a type it
// points to) encodes itself, or "".
func selfEncoding(t types.Type) string {
	for {
		for _, name := range []string{"MarshalJSON", "MarshalText"} {
			ms := types.NewMethodSet(types.NewPointer(t))
			if sel := ms.Lookup(nil, name); sel != nil {
				return name
			}
		}
		p, ok := t.Underlying().(*types.Pointer)
		if !ok {
			return ""
		}
		t = p.Elem()
	}
}

// isInterface reports whether t is an interface type.
func isInterface(t types.Type) bool {
	_, ok := t.Underlying().(*types.Interface)
	return ok
}

// litText writes a predicate literal as the document holds it.
func litText(l spec.Literal) string {
	switch l.Kind {
	case spec.LitString:
		return quote(l.Str)
	case spec.LitNumber:
		return l.Num
	case spec.LitBool:
		return fmt.Sprint(l.Bool)
	}
	return "null"
}
