package runtime_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// TestHoldsMatchesTruthTable evaluates every row of the predicate truth
// table recorded from the reference implementation with runtime.Holds (rows
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
		got := runtime.Holds(doc.Edges[1].When, v, set)
		if want := string(r.Expect) == "true"; got != want {
			t.Errorf("row %d: when %s on %s: got %v, want %v", i, r.When, r.Value, got, want)
		}
	}
}
