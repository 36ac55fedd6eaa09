package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeBlock returns the shell block of the README's "Use it in your
// module" between its module-commands markers.
func readmeBlock(t *testing.T, root string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "<!-- module-commands")
	if !ok {
		t.Fatal("README.md has no <!-- module-commands --> block")
	}
	block, _, ok := strings.Cut(rest, "<!-- /module-commands -->")
	_, body, ok2 := strings.Cut(block, "```sh\n")
	body, _, ok3 := strings.Cut(body, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md: the module-commands block holds no ```sh fence")
	}
	return body
}

// TestREADMEModule runs the README's "Use it in your module" commands as
// written, with sh -e, in an empty directory hello beside a directory
// ilmek that is this checkout: once in the environment the test runs in
// (its module proxy does not serve this module), and once offline
// (GOPROXY=off) as the README's variant says, from the clone's go.sum with
// GOFLAGS=-mod=mod. Each must print "done hello, world".
func TestREADMEModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module with go mod tidy, go generate and go run")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	script := readmeBlock(t, root)
	for _, c := range []struct {
		name    string
		env     []string
		offline bool
	}{
		{name: "as written"},
		{name: "offline", env: []string{"GOPROXY=off", "GOFLAGS=-mod=mod"}, offline: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Symlink(root, filepath.Join(dir, "ilmek")); err != nil {
				t.Fatal(err)
			}
			hello := filepath.Join(dir, "hello")
			if err := os.Mkdir(hello, 0o755); err != nil {
				t.Fatal(err)
			}
			if c.offline {
				sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(hello, "go.sum"), sum, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("sh", "-e", "-c", script)
			cmd.Dir = hello
			cmd.Env = append(os.Environ(), append([]string{"GOWORK=off"}, c.env...)...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				if !c.offline && os.Getenv("CI") != "true" && networkFailure(string(out)) {
					t.Skipf("no module proxy reachable here (%v); the offline run covers the commands:\n%s", err, out)
				}
				t.Fatalf("the README's commands failed: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "done hello, world\n") {
				t.Errorf("the README's program printed:\n%s\nwant a line %q", out, "done hello, world")
			}
		})
	}
}

// networkFailure reports whether a go command's output says the network
// was out of reach.
func networkFailure(out string) bool {
	for _, s := range []string{"dial tcp", "no such host", "connection refused", "i/o timeout"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}
