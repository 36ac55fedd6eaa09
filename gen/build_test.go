package gen

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/spec"
)

// tempModule makes a module outside this one that requires it through a
// replace directive, so generated code can be built there.
func tempModule(t *testing.T) string {
	t.Helper()
	root := moduleRoot(t)
	dir := t.TempDir()
	gomod := "module example.com/tmp\n\ngo 1.26\n\nrequire " + modulePath + " v0.0.0\n\nreplace " + modulePath + " => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeFiles writes generated files into dir.
func writeFiles(t *testing.T, dir string, files []File) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// goBuild runs go build ./... in dir and returns its output.
func goBuild(t *testing.T, dir string) (string, error) {
	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestMissingNodesMethodFailsBuild checks that the compiler, not a run,
// reports a Nodes implementation that lacks a node type's constructor.
func TestMissingNodesMethodFailsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "testdata", "golden", "support", "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	g, diags := spec.Decode("spec.json", data)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	files, diags := Generate(g, Options{Package: "supportgraph", PkgPath: "example.com/tmp/supportgraph", Source: "../spec.json"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	dir := tempModule(t)
	writeFiles(t, filepath.Join(dir, "supportgraph"), files)
	main := `package main

import (
	"example.com/tmp/supportgraph"
	"github.com/ilmek-go/ilmek/runtime"
)

type nodes struct{}

func (nodes) LLM(supportgraph.NodeID, supportgraph.LLMConfig) (supportgraph.Node, error) {
	return func(*runtime.Ctx, supportgraph.State) (supportgraph.Update, error) { return supportgraph.Update{}, nil }, nil
}

func main() { supportgraph.New(nodes{}) }
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := goBuild(t, dir)
	if err == nil {
		t.Fatal("go build succeeded with a Nodes implementation that has no HTTP method")
	}
	if !strings.Contains(out, "missing method HTTP") {
		t.Errorf("go build failed, but not naming the missing method:\n%s", out)
	}
	// The same program with the method builds.
	full := strings.Replace(main, "func main()", `func (nodes) HTTP(supportgraph.NodeID, supportgraph.HTTPConfig) (supportgraph.Node, error) { return nil, nil }

func main()`, 1)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(full), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := goBuild(t, dir); err != nil {
		t.Errorf("go build of the complete implementation: %v\n%s", err, out)
	}
}
