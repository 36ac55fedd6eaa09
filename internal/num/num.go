// Package num reads a number of any Go numeric kind as the IEEE double that
// JSON predicates compare: one rule for the runtime, spec and generated
// code. It imports nothing of the module, so every package can use it.
package num

import "encoding/json"

// AsFloat returns v as an IEEE double when v is a number of any Go numeric
// kind (or a json.Number that parses).
func AsFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float32:
		return float64(n), true
	case int32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case uint:
		return float64(n), true
	case uint64:
		return float64(n), true
	case uint32:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	}
	return 0, false
}
