package gen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/spec"
)

// TestUndeclaredGotoFailsBuild: a node that declares its "goto" list gets
// a destination type whose only values are the declared ones, so a
// command to any other node, built from them, is a compile error.
func TestUndeclaredGotoFailsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	doc := `{"name": "route", "channels": {"n": {}},
  "nodes": [{"id": "pick", "type": "t", "goto": ["yes", "__end__"]}, {"id": "yes", "type": "t"}, {"id": "no", "type": "t"}],
  "edges": [{"from": "__start__", "to": "pick"}, {"from": "no", "to": "__end__"}]}`
	g, diags := spec.Decode("spec.json", []byte(doc))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	files, diags := Generate(g, Options{Package: "routegraph", PkgPath: "example.com/tmp/routegraph", Source: "spec.json"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	dir := tempModule(t)
	writeFiles(t, filepath.Join(dir, "routegraph"), files)
	main := `package main

import "example.com/tmp/routegraph"

var _ = []routegraph.Target{
	routegraph.PickGotos.NodeYes.To(),
	routegraph.PickGotos.End.To(),
	routegraph.PickGotos.NodeYes.Send(routegraph.Update{}),
	routegraph.PickGotos.NodeNo.To(),
}

func main() {}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := goBuild(t, dir)
	if err == nil {
		t.Fatal("go build succeeded with a goto to a node that pick does not declare")
	}
	// Only the undeclared destination is refused.
	if !strings.Contains(out, "main.go:9:") || !strings.Contains(out, "NodeNo") || strings.Count(out, "main.go:") != 1 {
		t.Errorf("go build failed, but not only at the undeclared destination:\n%s", out)
	}
}
