package server

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoDriverDependencies: the server depends on interfaces, so a program
// that uses it compiles neither the PostgreSQL driver nor Graphviz and its
// WebAssembly runtime; their adapters (server/workersqueue, graphviz) are
// packages of their own.
func TestNoDriverDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/jackc/pgx", "wazero", "go-graphviz", "github.com/ilmek-go/ilmek/runtime/postgres"} {
			if strings.Contains(dep, banned) {
				t.Errorf("package server depends on %s", dep)
			}
		}
	}
}
