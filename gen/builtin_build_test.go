package gen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/spec"
)

// builtinDoc uses mcp_tool beside a type of the application's own.
const builtinDoc = `{"name": "lookup", "channels": {"query": {}, "hits": {}, "out": {}},
  "nodes": [
    {"id": "search", "type": "mcp_tool", "config": {"server": "github", "tool": "github__search", "argumentsFrom": "query", "to": "hits", "text": true}},
    {"id": "done", "type": "finish"}],
  "edges": [{"from": "__start__", "to": "search"}, {"from": "search", "to": "done"}, {"from": "done", "to": "__end__"}]}`

// TestBuiltinNodeTypesAreTyped: a document using mcp_tool generates a
// package whose Nodes has no constructor for it, only Builtins (the
// registry over the connected toolbox), and a program that passes the
// toolbox builds and runs the tool call from the typed config; an unknown
// field of a built-in config fails the check, placed at the field.
func TestBuiltinNodeTypesAreTyped(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	dir := tempModule(t)
	// The application's module requires what the node families import
	// (go mod tidy would add it once its code imports them).
	tidy := exec.Command("go", "list", "github.com/ilmek-go/ilmek/nodes/...")
	tidy.Dir = dir
	tidy.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := tidy.CombinedOutput(); err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	load := func(doc string) (*spec.Graph, *Bindings, spec.Diagnostics) {
		g, diags := spec.Decode("lookup.json", []byte(doc))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		b, diags := LoadBindings(g, BindingSpec{}, LoadConfig{Dir: dir})
		return g, b, diags
	}
	g, b, diags := load(builtinDoc)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	opts := Options{Package: "lookupgraph", PkgPath: "example.com/tmp/lookupgraph", Source: "../lookup.json", Bindings: b}
	files, diags := Generate(g, opts)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var graphGo string
	for _, f := range files {
		if strings.Contains(string(f.Data), "type Nodes interface") {
			graphGo = string(f.Data)
		}
	}
	if strings.Contains(graphGo, "McpTool(") || !strings.Contains(graphGo, "Builtins() runtime.Registry") {
		t.Errorf("the generated Nodes asks for an mcp_tool constructor or lacks Builtins:\n%s", graphGo)
	}
	writeFiles(t, filepath.Join(dir, "lookupgraph"), files)
	main := `package main

import (
	"context"
	"fmt"
	"os"

	"example.com/tmp/lookupgraph"
	"github.com/ilmek-go/ilmek/nodes/mcp"
	"github.com/ilmek-go/ilmek/nodes/mcp/mcptest"
	"github.com/ilmek-go/ilmek/runtime"
)

type nodes struct{ reg runtime.Registry }

func (n nodes) Builtins() runtime.Registry { return n.reg }

func (nodes) Finish(lookupgraph.NodeID, lookupgraph.FinishConfig) (lookupgraph.Node, error) {
	return func(_ *runtime.Ctx, s lookupgraph.State) (lookupgraph.Update, error) {
		return lookupgraph.Update{Out: new(any(fmt.Sprint("found: ", s.Hits)))}, nil
	}, nil
}

func main() {
	ctx := context.Background()
	script, err := mcptest.Load(os.Args[1])
	if err != nil {
		panic(err)
	}
	tb, err := mcp.Connect(ctx, "github", mcptest.NewSession(script))
	if err != nil {
		panic(err)
	}
	g, err := lookupgraph.New(nodes{mcp.Registry(tb)})
	if err != nil {
		panic(err)
	}
	res, err := g.Invoke(ctx, lookupgraph.Update{Query: new(any(map[string]any{"q": "ilmek"}))})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.State.Out)
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", ".", filepath.Join(moduleRoot(t), "conformance", "testdata", "upstream", "mcp", "server.json"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "found: 3 results\nilmek, mekik, chativa" {
		t.Fatalf("the program: %v\n%s", err, out)
	}

	// An unknown field of a built-in config is a placed error.
	bad := strings.Replace(builtinDoc, `"text": true}`, `"text": true, "txet": 1}`, 1)
	g, b, diags = load(bad)
	if !diags.HasErrors() {
		diags = Check(g, Options{Package: "lookupgraph", Bindings: b})
	}
	if !diags.HasErrors() || !strings.Contains(fmt.Sprint(diags), "nodes[0].config") || !strings.Contains(fmt.Sprint(diags), "txet") {
		t.Errorf("an unknown built-in field: %v", diags)
	}

	// A node type of the application's whose method would be Builtins
	// collides with the registry's method, placed.
	clash := strings.Replace(builtinDoc, `"type": "finish"`, `"type": "builtins"`, 1)
	g, b, diags = load(clash)
	if !diags.HasErrors() {
		diags = Check(g, Options{Package: "lookupgraph", Bindings: b})
	}
	if !diags.HasErrors() || !strings.Contains(fmt.Sprint(diags), "Builtins") {
		t.Errorf("a node type named builtins: %v", diags)
	}
}
