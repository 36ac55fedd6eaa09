package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// helloDoc is the document of the throwaway module: one node that greets.
const helloDoc = `{
  "name": "hello",
  "channels": {"greeting": {}},
  "nodes": [{"id": "greet", "type": "greeter", "config": {"name": "world"}}],
  "edges": [{"from": "__start__", "to": "greet"}, {"from": "greet", "to": "__end__"}]
}
`

// helloMain uses the package go generate writes from helloDoc. Its
// generate directive is spliced so that no line of this file is one:
// TestExamplesUpToDate (gen) checks every such line of the module.
const helloMain = `package main

//go:` + `generate go tool ilmekgen -o hellograph --type greeting=string hello.json

import (
	"context"
	"fmt"

	"example.com/hello/hellograph"
	"github.com/ilmek-go/ilmek/runtime"
)

type nodes struct{}

func (nodes) Greeter(id hellograph.NodeID, cfg hellograph.GreeterConfig) (hellograph.Node, error) {
	return func(*runtime.Ctx, hellograph.State) (hellograph.Update, error) {
		return hellograph.Update{Greeting: new("hello, " + cfg.Name)}, nil
	}, nil
}

func main() {
	g, err := hellograph.New(nodes{})
	if err != nil {
		panic(err)
	}
	res, err := g.Invoke(context.Background(), hellograph.Update{})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status, res.State.Greeting)
}
`

// TestUseInYourModule does what the README's "Use it in your module" says,
// in a new module outside this one: go get -tool, a //go:generate line
// running go tool ilmekgen, go generate, go build, and the program runs.
// The new module points at this checkout with a replace directive, since
// the module is not published, and starts from this module's go.sum so no
// checksum has to be looked up. Every go command runs with GOPROXY=off and
// GOFLAGS=-mod=mod: the modules come from the module cache, which building
// this test filled (CI runs go mod download first).
func TestUseInYourModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module with go get, go generate and go build")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no checkout at %s: %v", root, err)
	}
	dir := t.TempDir()
	gocmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s\n(the modules it needs must be in the module cache: run go mod download in %s)", strings.Join(args, " "), err, out, root)
		}
		return string(out)
	}
	gocmd("mod", "init", "example.com/hello")
	gocmd("mod", "edit", "-require=github.com/ilmek-go/ilmek@v0.0.0", "-replace=github.com/ilmek-go/ilmek="+root)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.sum", string(sum))
	gocmd("get", "-tool", "github.com/ilmek-go/ilmek/cmd/ilmekgen")
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gomod), "\ntool github.com/ilmek-go/ilmek/cmd/ilmekgen\n") {
		t.Fatalf("go get -tool did not add the tool directive:\n%s", gomod)
	}
	write("hello.json", helloDoc)
	write("main.go", helloMain)
	gocmd("generate", "./...")
	for _, f := range []string{"graph.gen.go", "program.gen.go"} {
		if _, err := os.Stat(filepath.Join(dir, "hellograph", f)); err != nil {
			t.Errorf("go generate wrote no %s: %v", f, err)
		}
	}
	gocmd("build", "-o", "hello", ".")
	out, err := exec.Command(filepath.Join(dir, "hello")).CombinedOutput()
	if err != nil {
		t.Fatalf("the built program: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "done hello, world" {
		t.Errorf("the built program printed %q, want %q", got, "done hello, world")
	}
}
