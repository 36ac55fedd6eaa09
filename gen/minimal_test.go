package gen

import (
	"path/filepath"
	"testing"

	"github.com/ilmek-go/ilmek/spec"
)

// TestMinimalSpecsBuild generates degenerate but valid specs (no channels,
// no nodes) and builds them.
func TestMinimalSpecsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	dir := tempModule(t)
	for name, doc := range map[string]string{
		"nochannels": `{"nodes": [{"id": "a", "type": "t"}], "edges": [{"from": "__start__", "to": "a"}]}`,
		"nonodes":    `{"name": null, "edges": [{"from": "__start__", "to": "__end__"}]}`,
		"onlymerge":  `{"channels": {"m": {"reducer": "merge"}}, "nodes": [{"id": "a", "type": "t", "config": null}], "edges": [{"from": "__start__", "to": "a", "when": {"channel": "m", "truthy": false}}]}`,
	} {
		g, diags := spec.Decode(name+".json", []byte(doc))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		files, diags := Generate(g, Options{Package: name, PkgPath: "example.com/tmp/" + name, Source: name + ".json"})
		if diags.HasErrors() {
			t.Fatalf("%s: %v", name, diags)
		}
		writeFiles(t, filepath.Join(dir, name), files)
	}
	if out, err := goBuild(t, dir); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
}
