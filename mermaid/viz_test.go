package mermaid_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/spec"
)

// TestVizCasesFromSpec renders the reference's viz cases that hold only a
// document through FromSpec, byte for byte.
func TestVizCasesFromSpec(t *testing.T) {
	files, _ := filepath.Glob("../conformance/testdata/viz/*.json")
	if len(files) != 7 {
		t.Fatalf("found %d viz cases, want 7", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Spec    json.RawMessage
			Routers json.RawMessage
			Guards  json.RawMessage
			Options struct {
				Direction      string
				IncludeRouters *bool
				Highlight      *struct{ Next, Pending []string }
			}
		}
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatal(err)
		}
		if c.Routers != nil || c.Guards != nil {
			continue // the code-built kind draws these (conformance)
		}
		doc, ds := spec.Decode(f, c.Spec)
		if doc == nil {
			t.Fatalf("%s: %v", f, ds)
		}
		o := mermaid.Options{Direction: c.Options.Direction, HideRouters: c.Options.IncludeRouters != nil && !*c.Options.IncludeRouters}
		if h := c.Options.Highlight; h != nil {
			o.Highlight = &mermaid.Highlight{Next: h.Next, Pending: h.Pending}
		}
		got, err := mermaid.Spec(doc, o)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".mmd")
		if err != nil {
			t.Fatal(err)
		}
		if w := strings.ReplaceAll(string(want), "\r\n", "\n"); got != w {
			t.Errorf("%s:\ngot:\n%s\nwant:\n%s", filepath.Base(f), got, w)
		}
	}
}
