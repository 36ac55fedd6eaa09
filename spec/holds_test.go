package spec_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/ilmek-go/ilmek/spec"
)

// TestHoldsMatchesTruthTable evaluates every row of the predicate truth
// table recorded from the reference implementation with Predicate.Holds (rows
// the project refuses at load time must be refused by spec.Decode).
func TestHoldsMatchesTruthTable(t *testing.T) {
	data, err := os.ReadFile("../conformance/testdata/predicates.json")
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Probe json.RawMessage
		Rows  []struct {
			When   json.RawMessage
			Value  json.RawMessage
			Expect json.RawMessage
		}
	}
	if err := json.Unmarshal(data, &table); err != nil {
		t.Fatal(err)
	}
	for i, r := range table.Rows {
		doc, diags := spec.Decode("probe", bytes.Replace(table.Probe, []byte(`"<row.when>"`), r.When, 1))
		if string(r.Expect) == `"invalid"` {
			if !diags.HasErrors() {
				t.Errorf("row %d %s: accepted, want refused", i, r.When)
			}
			continue
		}
		if diags.HasErrors() {
			t.Errorf("row %d %s: refused: %v", i, r.When, diags.Err())
			continue
		}
		var v any
		set := r.Value != nil
		if set {
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatal(err)
			}
		}
		got := doc.Edges[1].When.Holds(v, set)
		if want := string(r.Expect) == "true"; got != want {
			t.Errorf("row %d: when %s on %s: got %v, want %v", i, r.When, r.Value, got, want)
		}
	}
}

// TestTruthy pins JSON truthiness, the truthy guard's (Predicate.Holds
// of spec.Truthy), on the values a
// channel holds: JSON forms as a checkpoint restores them, and Go values a
// node wrote (a typed number, slice, map or pointer).
func TestTruthy(t *testing.T) {
	var nilPtr *int
	one := 1
	tests := []struct {
		name string
		v    any
		set  bool
		want bool
	}{
		{"unset", "x", false, false},
		{"null", nil, true, false},
		{"false", false, true, false},
		{"true", true, true, true},
		{"zero", 0.0, true, false},
		{"negative zero", math.Copysign(0, -1), true, false},
		{"NaN", math.NaN(), true, false},
		{"a number", -2.5, true, true},
		{"a Go int zero", 0, true, false},
		{"a Go uint", uint8(3), true, true},
		{"a json.Number zero", json.Number("0"), true, false},
		{"empty string", "", true, false},
		{"the string 0", "0", true, true},
		{"empty list", []any{}, true, false},
		{"list of null", []any{nil}, true, true},
		{"empty object", map[string]any{}, true, false},
		{"empty named map", values{}, true, false},
		{"object", map[string]any{"k": false}, true, true},
		{"empty typed slice", []string{}, true, false},
		{"typed slice", []string{""}, true, true},
		{"empty typed map", map[string]int{}, true, false},
		{"nil pointer", nilPtr, true, false},
		{"pointer", &one, true, true},
		{"struct", struct{}{}, true, true},
	}
	for _, want := range []bool{true, false} {
		p := spec.Truthy("c", want)
		for _, tc := range tests {
			if got := p.Holds(tc.v, tc.set); got != (tc.want == want) {
				t.Errorf("%s: truthy %v on (%v, %v) = %v, want %v", tc.name, want, tc.v, tc.set, got, tc.want == want)
			}
		}
	}
}

// values is a named map type, as runtime.Values is.
type values map[string]any
