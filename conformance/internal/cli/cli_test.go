package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/conformance"
)

const testdata = "../../testdata"

// caseDir writes the named files of testdata/cases and testdata/multirun,
// each changed by edit when it is set, into a new directory.
func caseDir(t *testing.T, edit func(name string, c map[string]any), names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(testdata, n))
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			var c map[string]any
			if err := json.Unmarshal(data, &c); err != nil {
				t.Fatal(err)
			}
			edit(n, c)
			if data, err = json.Marshal(c); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(n)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestMainExitCodesAndSummary(t *testing.T) {
	broken := caseDir(t, func(_ string, c map[string]any) {
		c["expect"].(map[string]any)["state"].(map[string]any)["winner"] = "zeta"
	}, "cases/task-order-last-write.json")
	brokenRun := caseDir(t, func(_ string, c map[string]any) {
		runs := c["runs"].([]any)
		runs[1].(map[string]any)["expect"].(map[string]any)["effects"].(map[string]any)["charge"] = 2
	}, "multirun/step-once-across-resume.json")
	tests := []struct {
		name     string
		args     []string
		code     int
		lastLine string
		contains []string
	}{
		{"public cases pass, both backends", []string{"--kinds", "spec", "--backends", "memory,sqlite", testdata + "/cases", testdata + "/multirun"}, 0, "80 passed, 0 failed", []string{"ok   spec/memory", "ok   spec/sqlite"}},
		{"truth table", []string{"--kinds", "spec", "--backends", "memory", "--predicates", testdata + "/predicates.json"}, 0, "203 passed, 0 failed", nil},
		{"a failing case shows a diff", []string{"--kinds", "spec", "--backends", "memory", broken}, 1, "0 passed, 1 failed",
			[]string{"FAIL spec/memory", `channel "winner": want "zeta", got "mid"`}},
		{"a failing run is named", []string{"--kinds", "spec", "--backends", "sqlite", brokenRun}, 1, "0 passed, 1 failed",
			[]string{`runs[1] (resume "yes"): effects (step functions really executed):`, `want {"charge":2,"create_order":1}`, `got  {"charge":1,"create_order":1}`}},
		{"unknown kind", []string{"--kinds", "nope", broken}, 2, "", []string{`unknown kind "nope" (known: code, generated, spec)`}},
		{"unknown backend", []string{"--backends", "nosuch", broken}, 2, "", []string{`unknown backend "nosuch" (known: memory, sqlite`}},
		{"missing directory", []string{"--kinds", "spec", filepath.Join(broken, "nope")}, 2, "", []string{"no such file"}},
		{"no dirs", nil, 2, "", []string{"usage"}},
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
			for _, s := range tc.contains {
				if !strings.Contains(out.String()+errb.String(), s) {
					t.Errorf("output does not contain %q:\n%s%s", s, out.String(), errb.String())
				}
			}
		})
	}
}

// TestMainDefaultKindsAndBackends runs a small mixed directory (a
// single-run case, a multi-run case with a script node, a refused spec)
// with the defaults: both kinds against both backends.
func TestMainDefaultKindsAndBackends(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the generated kind builds a module")
	}
	dir := caseDir(t, nil, "cases/task-order-last-write.json", "multirun/step-once-across-resume.json", "cases/invalid-unknown-node-type.json")
	var out, errb bytes.Buffer
	if code := Main([]string{dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	for _, label := range []string{"spec/memory", "spec/sqlite", "code/memory", "code/sqlite", "generated/memory", "generated/sqlite"} {
		if n := strings.Count(out.String(), "ok   "+label+" "); n != 3 {
			t.Errorf("%d lines ok %s, want 3:\n%s", n, label, out.String())
		}
	}
	// 3 kinds x 3 cases on each backend (postgres too when
	// ILMEK_POSTGRES_DSN names a server).
	if want := fmt.Sprintf("%d passed, 0 failed\n", 9*len(conformance.BackendNames)); !strings.HasSuffix(out.String(), want) {
		t.Errorf("summary:\n%s", out.String())
	}
}

// The reference's MCP, A2A and skills folders run by their layout, one
// line each; a changed expected.json fails with both canonical forms.
func TestMainUpstreamFolders(t *testing.T) {
	var out, errOut bytes.Buffer
	up := filepath.Join(testdata, "upstream")
	if code := Main([]string{"--kinds", "spec", "--backends", "memory", up}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	for _, fam := range []string{"mcp", "a2a", "skills"} {
		if !strings.Contains(out.String(), "ok   upstream/"+fam) {
			t.Errorf("no ok line for %s:\n%s", fam, out.String())
		}
	}
	if !strings.HasSuffix(out.String(), "3 passed, 0 failed\n") {
		t.Errorf("summary:\n%s", out.String())
	}

	dir := filepath.Join(t.TempDir(), "a2a")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	agent, err := os.ReadFile(filepath.Join(up, "a2a", "agent.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(up, "a2a", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"agent.json": agent, "expected.json": bytes.Replace(want, []byte(`"support-desk"`), []byte(`"help-desk"`), 1)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out.Reset()
	if code := Main([]string{"--kinds", "spec", "--backends", "memory", dir}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "FAIL upstream/a2a") || !strings.Contains(out.String(), `"name":"help-desk"`) {
		t.Errorf("want a FAIL line with the expected form:\n%s", out.String())
	}
}
