package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigNumbersOneRule: a config number beyond float64 (an exponent of
// nine digits, five million digits) is refused by every command that reads
// a document, with the decoder's one message, where fmt and mermaid used
// to accept it.
func TestConfigNumbersOneRule(t *testing.T) {
	dir := t.TempDir()
	for name, num := range map[string]string{
		"exp.json":    "1e999999999",
		"digits.json": strings.Repeat("9", 5_000_000),
	} {
		doc := `{"channels": {"x": {}}, "nodes": [{"id": "a", "type": "t", "config": {"n": ` + num + `}}],
"edges": [{"from": "__start__", "to": "a"}, {"from": "a", "to": "__end__"}]}`
		if err := os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"check", name},
			{"fmt", name},
			{"fmt", "--check", name},
			{"mermaid", name},
			{"-o", "out", name},
		} {
			stdout, stderr, code := ilmekgen(t, dir, args...)
			if code != 1 || !strings.Contains(stderr, "nodes[0].config.n: ") || !strings.Contains(stderr, " does not fit float64") || stdout != "" {
				t.Errorf("ilmekgen %s: exit %d, stdout %.200q, stderr %.300q; want exit 1 with the decoder's refusal", strings.Join(args, " "), code, stdout, stderr)
			}
		}
	}
}
