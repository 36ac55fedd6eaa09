package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMainExitCodesAndSummary(t *testing.T) {
	bad := t.TempDir()
	data, err := os.ReadFile("../../testdata/cases/task-order-last-write.json")
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	c["expect"].(map[string]any)["state"].(map[string]any)["winner"] = "zeta"
	broken, _ := json.Marshal(c)
	if err := os.WriteFile(filepath.Join(bad, "broken.json"), broken, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		lastLine string
		contains string
	}{
		{"public cases pass", []string{"../../testdata/cases", "../../testdata/multirun"}, 0, "40 passed, 0 failed", "ok   spec/memory"},
		{"truth table", []string{"--predicates", "../../testdata/predicates.json"}, 0, "203 passed, 0 failed", ""},
		{"a failing case shows a diff", []string{bad}, 1, "0 passed, 1 failed", `channel "winner": want "zeta", got "mid"`},
		{"unknown kind", []string{"--kinds", "nope", bad}, 2, "", `unknown kind "nope"`},
		{"no dirs", nil, 2, "", "usage"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(tc.args, &out, &errb)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out.String(), errb.String())
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if tc.lastLine != "" && lines[len(lines)-1] != tc.lastLine {
				t.Errorf("last line %q, want %q", lines[len(lines)-1], tc.lastLine)
			}
			if !strings.Contains(out.String()+errb.String(), tc.contains) {
				t.Errorf("output does not contain %q:\n%s%s", tc.contains, out.String(), errb.String())
			}
		})
	}
}
