package spec

import (
	"math"
	"reflect"

	number "github.com/ilmek-go/ilmek/internal/num"
)

// Holds evaluates the predicate on a channel value with JSON semantics, as
// every program kind does (a generated package calls it for channels typed
// any): v is the channel's value and set whether it was ever written
// (an unset channel is not null). Numbers compare as IEEE doubles; eq, neq
// and in compare scalars only; gt and lt are false unless v is a number;
// truthy treats unset, null, false, 0, "", [] and {} as falsy.
func (p *Predicate) Holds(v any, set bool) bool {
	switch p.Op {
	case OpEq:
		return set && scalarEqual(v, p.Value)
	case OpNeq:
		return !(set && scalarEqual(v, p.Value))
	case OpIn:
		if !set {
			return false
		}
		for _, l := range p.Values {
			if scalarEqual(v, l) {
				return true
			}
		}
		return false
	case OpGt, OpLt:
		if !set {
			return false
		}
		f, ok := number.AsFloat(v)
		if !ok {
			return false
		}
		if p.Op == OpGt {
			return f > p.Value.Float()
		}
		return f < p.Value.Float()
	case OpTruthy:
		return truthy(v, set) == p.Value.Bool
	}
	return false
}

func scalarEqual(v any, l Literal) bool {
	switch l.Kind {
	case LitNull:
		return v == nil
	case LitString:
		s, ok := v.(string)
		return ok && s == l.Str
	case LitBool:
		b, ok := v.(bool)
		return ok && b == l.Bool
	case LitNumber:
		f, ok := number.AsFloat(v)
		return ok && f == l.Float()
	}
	return false
}

// truthy is JSON truthiness: unset, null, false, 0, NaN, "", an empty list
// and an empty object are false; everything else is true.
func truthy(v any, set bool) bool {
	if !set || v == nil {
		return false
	}
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	if f, ok := number.AsFloat(v); ok {
		return f != 0 && !math.IsNaN(f)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return rv.Len() > 0
	case reflect.Pointer, reflect.Interface:
		return !rv.IsNil()
	}
	return true
}
