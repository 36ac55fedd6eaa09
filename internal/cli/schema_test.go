package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/gen"
	"github.com/ilmek-go/ilmek/spec"
)

// TestSchemaCommand runs ilmekgen schema: the document's schema, a bound
// config's schema, and its failures with their exit statuses.
func TestSchemaCommand(t *testing.T) {
	bound := filepath.Join(root(t), "testdata", "golden", "bound")
	const llm = "llm=github.com/ilmek-go/ilmek/testdata/golden/bound/shop.LLMOptions"
	wantConfig, err := gen.LoadConfigSchema("llm", strings.TrimPrefix(llm, "llm="), gen.LoadConfig{Dir: bound})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []byte   // exact, when set
		stderr []string // substrings
	}{
		{name: "document", args: []string{"schema"}, stdout: spec.Schema()},
		{name: "config", args: []string{"schema", "--config", llm}, stdout: wantConfig},
		{name: "subgraph config", args: []string{"schema", "--config", "subgraph"}, stdout: spec.SubgraphConfigSchema()},
		{name: "config with =", args: []string{"schema", "--config=" + llm}, stdout: wantConfig},
		{name: "help", args: []string{"schema", "--help"}, stderr: nil},
		{name: "unknown type", args: []string{"schema", "--config", "llm=github.com/ilmek-go/ilmek/testdata/golden/bound/shop.Nope"}, code: 1,
			stderr: []string{"--config llm=github.com/ilmek-go/ilmek/testdata/golden/bound/shop.Nope", "has no type Nope", "full import path"}},
		{name: "unknown package", args: []string{"schema", "--config", "llm=example.com/absent.T"}, code: 1,
			stderr: []string{"package example.com/absent not found"}},
		{name: "a spec argument", args: []string{"schema", "spec.json"}, code: 2, stderr: []string{"schema takes no SPEC"}},
		{name: "no =", args: []string{"schema", "--config", "llm"}, code: 2, stderr: []string{"want NAME=GOTYPE"}},
		{name: "two configs", args: []string{"schema", "--config", llm, "--config", "mark=string"}, code: 2, stderr: []string{"run it once per node type"}},
		{name: "unknown flag", args: []string{"schema", "--type", "a=int"}, code: 2, stderr: []string{"unknown flag: --type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := ilmekgen(t, bound, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if tt.stdout != nil && !bytes.Equal([]byte(stdout), tt.stdout) {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tt.stdout)
			}
			if tt.code == 0 && tt.name != "help" && !json.Valid([]byte(stdout)) {
				t.Errorf("stdout is not JSON:\n%s", stdout)
			}
			if tt.name == "help" && !strings.Contains(stdout, "ilmekgen schema [--config") {
				t.Errorf("--help does not show the schema command:\n%s", stdout)
			}
			for _, w := range tt.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if tt.code == 0 && stderr != "" {
				t.Errorf("stderr on success: %s", stderr)
			}
		})
	}
}

// TestFmtCheck checks fmt --check: exit 0 when every document is canonical,
// 1 naming each one that is not (or does not decode), and no file written.
func TestFmtCheck(t *testing.T) {
	const canonical = "{\n  \"edges\": [\n    {\n      \"from\": \"__start__\",\n      \"to\": \"__end__\"\n    }\n  ]\n}\n"
	g, diags := spec.Decode("canonical.json", []byte(canonical))
	if diags.HasErrors() || string(g.Encode()) != canonical {
		t.Fatalf("the canonical test document is not canonical:\n%s", g.Encode())
	}
	files := map[string]string{
		"canonical.json":  canonical,
		"compact.json":    `{"edges": [{"from": "__start__", "to": "__end__"}]}`,
		"no-newline.json": strings.TrimSuffix(canonical, "\n"),
		"key-order.json":  "{\n  \"edges\": [\n    {\n      \"to\": \"__end__\",\n      \"from\": \"__start__\"\n    }\n  ]\n}\n",
		"invalid.json":    "{\n  \"edges\": []\n}\n",
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr []string // substrings; "" means stderr must be empty
		stdout []string // substrings of the diff; nil means stdout must be empty
	}{
		{"canonical", []string{"canonical.json"}, 0, nil, nil},
		{"compact", []string{"compact.json"}, 1, []string{"compact.json: not in canonical form; run ilmekgen fmt -w compact.json"},
			[]string{"--- compact.json\n+++ compact.json (canonical)\n@@ -1,1 +1,8 @@\n-{\"edges\": [{\"from\": \"__start__\", \"to\": \"__end__\"}]}\n\\ No newline at end of file\n+{\n+  \"edges\": [\n"}},
		{"no final newline", []string{"no-newline.json"}, 1, []string{"no-newline.json: not in canonical form"},
			[]string{"@@ -5,4 +5,4 @@\n       \"to\": \"__end__\"\n     }\n   ]\n-}\n\\ No newline at end of file\n+}\n"}},
		{"key order", []string{"key-order.json"}, 1, []string{"key-order.json: not in canonical form"},
			[]string{"--- key-order.json\n+++ key-order.json (canonical)\n", "-      \"to\": \"__end__\",\n", "+      \"to\": \"__end__\"\n"}},
		{"invalid document", []string{"invalid.json"}, 1, []string{"invalid.json:2:12: edges: graph has no entry edge"}, nil},
		{"missing file", []string{"missing.json"}, 1, []string{"missing.json"}, nil},
		{"mixed", []string{"canonical.json", "compact.json", "key-order.json"}, 1, []string{"compact.json: not in canonical form", "key-order.json: not in canonical form"},
			[]string{"--- compact.json\n", "--- key-order.json\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			stdout, stderr, code := ilmekgen(t, dir, append([]string{"fmt", "--check"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if tt.stdout == nil && stdout != "" {
				t.Errorf("fmt --check printed to stdout:\n%s", stdout)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("the diff lacks %q:\n%s", w, stdout)
				}
			}
			if tt.stderr == nil && stderr != "" {
				t.Errorf("stderr:\n%s", stderr)
			}
			for _, w := range tt.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "canonical.json: not") && !strings.Contains(tt.name, "canonical") {
				t.Errorf("a canonical document is reported:\n%s", stderr)
			}
			for name, text := range files {
				if data, _ := os.ReadFile(filepath.Join(dir, name)); string(data) != text {
					t.Errorf("fmt --check rewrote %s", name)
				}
			}
		})
	}
}

// TestMermaidCommandMatchesGolden checks that ilmekgen mermaid prints what
// gen.Mermaid draws, as pinned in testdata/mermaid.
func TestMermaidCommandMatchesGolden(t *testing.T) {
	r := root(t)
	for _, tt := range []struct{ spec, golden string }{
		{"examples/support/support.json", "example-support.mmd"},
		{"testdata/golden/operators/spec.json", "golden-operators.mmd"},
		{"testdata/hostile/html-script-in-name.json", "hostile-html-script-in-name.mmd"},
	} {
		want, err := os.ReadFile(filepath.Join(r, "testdata", "mermaid", tt.golden))
		if err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := ilmekgen(t, r, "mermaid", tt.spec)
		if code != 0 || stdout != string(want) {
			t.Errorf("ilmekgen mermaid %s: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", tt.spec, code, stderr, stdout, want)
		}
	}
}
