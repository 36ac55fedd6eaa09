package runtime_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// TestSpecRoundTripOfEveryCase builds every valid spec of the conformance
// cases with FromSpec and checks that ToSpec gives back a document that is
// JSON-value-equal to the one stored in the case file.
func TestSpecRoundTripOfEveryCase(t *testing.T) {
	files, _ := filepath.Glob("../conformance/testdata/*/*.json")
	if len(files) < 30 {
		t.Fatalf("found only %d case files", len(files))
	}
	built := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct{ Spec json.RawMessage }
		if err := json.Unmarshal(data, &c); err != nil || c.Spec == nil {
			continue
		}
		doc, diags := spec.Decode(f, c.Spec)
		if diags.HasErrors() {
			continue // an invalid case: refusing it is the point
		}
		reg := runtime.Registry{}
		for _, n := range doc.Nodes {
			reg[n.Type] = func(spec.Node) (runtime.NodeFunc, error) { return write(nil), nil }
		}
		g, err := runtime.FromSpec(doc, reg)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		back, err := runtime.ToSpec(g)
		if err != nil {
			t.Errorf("%s: ToSpec: %v", f, err)
			continue
		}
		if eq, err := spec.JSONEqual(back.Encode(), c.Spec); err != nil || !eq {
			t.Errorf("%s: ToSpec(FromSpec(spec)) differs from the stored spec:\n%s", f, back.Encode())
		}
		built++
	}
	if built < 25 {
		t.Errorf("only %d specs round-tripped", built)
	}
}
