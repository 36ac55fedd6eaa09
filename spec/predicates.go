package spec

import (
	"math"
	"strconv"
)

// This file holds constructors that write predicates for graphs built in Go
// (runtime.NewBuilder's EdgeWhen, a spec.Edge's When) in exactly the form a
// stored document decodes to:
//
//	b.EdgeWhen("review", "pay", spec.Gt("amount", 1000))
//	spec.Edge{From: "agent", To: "checkout", When: new(spec.Eq("intent", "buy"))}

// Scalar is a Go value a predicate literal can be written from: a string, a
// bool, a number, or a Literal (such as NullLit()).
type Scalar interface {
	string | bool | Number | Literal
}

// Number is a Go number a literal can be written from.
type Number interface {
	int | int32 | int64 | uint | uint32 | uint64 | float32 | float64
}

// NullLit returns the JSON null literal.
func NullLit() Literal { return Literal{Kind: LitNull} }

// Lit returns the literal of v: a string or boolean literal, or a number
// literal whose text is v's shortest decimal form (integers exactly, floats
// as strconv.FormatFloat's 'g' writes them). NaN and the infinities have no
// JSON form: their literals hold "NaN", "+Inf" and "-Inf", which
// Graph.Validate refuses at the predicate's path.
func Lit[T Scalar](v T) Literal {
	switch x := any(v).(type) {
	case Literal:
		return x
	case string:
		return Literal{Kind: LitString, Str: x}
	case bool:
		return Literal{Kind: LitBool, Bool: x}
	case int:
		return num(strconv.FormatInt(int64(x), 10))
	case int32:
		return num(strconv.FormatInt(int64(x), 10))
	case int64:
		return num(strconv.FormatInt(x, 10))
	case uint:
		return num(strconv.FormatUint(uint64(x), 10))
	case uint32:
		return num(strconv.FormatUint(uint64(x), 10))
	case uint64:
		return num(strconv.FormatUint(x, 10))
	case float32:
		return num(formatFloat(float64(x), 32))
	case float64:
		return num(formatFloat(x, 64))
	}
	panic("unreachable: Scalar has no other types")
}

func num(s string) Literal { return Literal{Kind: LitNumber, Num: s} }

func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// Eq is the guard {"channel": channel, "eq": v}.
func Eq[T Scalar](channel string, v T) Predicate {
	return Predicate{Channel: channel, Op: OpEq, Value: Lit(v)}
}

// Neq is the guard {"channel": channel, "neq": v}.
func Neq[T Scalar](channel string, v T) Predicate {
	return Predicate{Channel: channel, Op: OpNeq, Value: Lit(v)}
}

// In is the guard {"channel": channel, "in": [vs...]}. Mixed kinds are
// written with Lit: In("code", Lit(200), Lit("ok"), NullLit()).
func In[T Scalar](channel string, vs ...T) Predicate {
	lits := make([]Literal, len(vs))
	for i, v := range vs {
		lits[i] = Lit(v)
	}
	return Predicate{Channel: channel, Op: OpIn, Values: lits}
}

// Gt is the guard {"channel": channel, "gt": n}: the channel is a number
// greater than n.
func Gt[N Number](channel string, n N) Predicate {
	return Predicate{Channel: channel, Op: OpGt, Value: Lit(n)}
}

// Lt is the guard {"channel": channel, "lt": n}: the channel is a number
// less than n.
func Lt[N Number](channel string, n N) Predicate {
	return Predicate{Channel: channel, Op: OpLt, Value: Lit(n)}
}

// Truthy is the guard {"channel": channel, "truthy": want}: the channel's
// truthiness (unset, null, false, 0, "", [] and {} are falsy) is want.
func Truthy(channel string, want bool) Predicate {
	return Predicate{Channel: channel, Op: OpTruthy, Value: Lit(want)}
}
