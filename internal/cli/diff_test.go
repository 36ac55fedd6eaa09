package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateDiff = flag.Bool("update", false, "rewrite the golden outputs of ilmekgen diff under testdata/diff")

// TestDiffGolden runs "ilmekgen diff old.json new.json" (text and --json) in
// every case directory of testdata/diff and compares stdout and the exit
// status with text.golden and json.golden.
func TestDiffGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(root(t), "testdata", "diff", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no diff cases: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			for _, form := range []struct {
				golden string
				args   []string
			}{
				{"text.golden", []string{"diff", "old.json", "new.json"}},
				{"json.golden", []string{"diff", "--json", "old.json", "new.json"}},
			} {
				stdout, stderr, code := ilmekgen(t, dir, form.args...)
				if stderr != "" {
					t.Errorf("%v: stderr: %s", form.args, stderr)
				}
				got := fmt.Sprintf("%sexit: %d\n", stdout, code)
				path := filepath.Join(dir, form.golden)
				if *updateDiff {
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./internal/cli -run TestDiffGolden -update)", err)
				}
				if got != string(want) {
					t.Errorf("%v:\n%s\nwant:\n%s", form.args, got, want)
				}
				if form.golden == "json.golden" {
					var v struct{ Unsafe bool }
					if err := json.Unmarshal([]byte(stdout), &v); err != nil {
						t.Errorf("--json output is not JSON: %v", err)
					}
					if v.Unsafe != (code == exitUnsafe) {
						t.Errorf("unsafe=%v but exit %d", v.Unsafe, code)
					}
				}
			}
		})
	}
}

func TestDiffUsageAndInvalid(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(root(t), "testdata", "diff", "added-node", "old.json")
	copyFile(t, good, filepath.Join(dir, "old.json"))
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"nodes": [{"id": "a"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"diff", "old.json"}, exitUsage},
		{[]string{"diff", "--nope", "old.json", "old.json"}, exitUsage},
		{[]string{"diff", "old.json", "bad.json"}, exitSpec},
		{[]string{"diff", "bad.json", "old.json"}, exitSpec},
		{[]string{"diff", "old.json", "missing.json"}, exitSpec},
		{[]string{"diff", "old.json", "old.json"}, exitOK},
	}
	for _, tc := range cases {
		if _, stderr, code := ilmekgen(t, dir, tc.args...); code != tc.code {
			t.Errorf("%v: exit %d, want %d; stderr: %s", tc.args, code, tc.code, stderr)
		}
	}
}

// TestDiffSubgraphVersions: with --subgraph and --old-subgraph, diff pins
// each document's subgraph nodes to its children's versions, so a new
// child version is an unsafe node-config-changed of the node that runs
// it, and the same child is no change at all.
func TestDiffSubgraphVersions(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	child := func(prompt string) string {
		return `{"name": "refund", "channels": {"x": {}}, "nodes": [{"id": "ask", "type": "ask", "config": {"prompt": "` + prompt + `"}}],
  "edges": [{"from": "__start__", "to": "ask"}, {"from": "ask", "to": "__end__"}]}`
	}
	write("support.json", `{"name": "support", "channels": {"x": {}},
  "nodes": [{"id": "refund", "type": "subgraph", "config": {"graph": "refund", "out": {"x": "x"}}}],
  "edges": [{"from": "__start__", "to": "refund"}, {"from": "refund", "to": "__end__"}]}`)
	write("refund-v1.json", child("v1"))
	write("refund-v1-again.json", child("v1"))
	write("refund-v2.json", child("v2"))
	write("other.json", strings.Replace(child("v1"), `"refund"`, `"other"`, 1))
	tests := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"new child version", []string{"--old-subgraph", "refund=refund-v1.json", "--subgraph", "refund=refund-v2.json"}, exitUnsafe, `node-config-changed refund: subgraph node "refund" runs another version of graph "refund"`},
		{"same child", []string{"--old-subgraph", "refund=refund-v1.json", "--subgraph", "refund=refund-v1-again.json"}, exitOK, ""},
		{"one child for both", []string{"--subgraph", "refund=refund-v2.json"}, exitOK, ""},
		{"flag names another document", []string{"--subgraph", "refund=other.json"}, exitUsage, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"diff"}, tc.args...), "support.json", "support.json")
			stdout, stderr, code := ilmekgen(t, dir, args...)
			if code != tc.code || !strings.Contains(stdout, tc.out) {
				t.Fatalf("exit %d (want %d), stdout:\n%s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			if tc.code == exitOK && strings.Contains(stdout, "changed") {
				t.Fatalf("changes reported:\n%s", stdout)
			}
		})
	}
}
