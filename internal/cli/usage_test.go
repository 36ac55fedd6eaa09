package cli

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageSuggestions: a misspelt subcommand or flag gets the nearest
// one, where ilmekgen used to take "checkk" for gen's SPEC ("gen needs
// exactly one SPEC") or open a file named "chek".
func TestUsageSuggestions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"checkk", "x.json"}, `unknown command "checkk"; did you mean "check"?`},
		{[]string{"chek"}, `unknown command "chek"; did you mean "check"?`},
		{[]string{"mermiad", "x.json"}, `unknown command "mermiad"; did you mean "mermaid"?`},
		{[]string{"--tyep", "a=string", "x.json"}, `unknown flag: --tyep; did you mean --type?`},
		{[]string{"check", "--bindngs", "b.json", "x.json"}, `unknown flag: --bindngs; did you mean --bindings?`},
		{[]string{"mermaid", "--direcion", "LR", "x.json"}, `unknown flag: --direcion; did you mean --direction?`},
		{[]string{"help", "chekc"}, `did you mean "check"?`},
	} {
		var out, errb bytes.Buffer
		code := Run(c.args, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 saying %q", c.args, code, errb.String(), c.want)
		}
	}
	// A file that is named like a command is still gen's SPEC.
	dir := t.TempDir()
	_, stderr, code := ilmekgen(t, dir, "chek")
	if code != exitUsage || !strings.Contains(stderr, "did you mean") {
		t.Fatalf("chek without such a file: exit %d: %s", code, stderr)
	}
	os.WriteFile(filepath.Join(dir, "chek"), []byte(`{}`), 0o644)
	if _, stderr, _ := ilmekgen(t, dir, "chek"); strings.Contains(stderr, "did you mean") {
		t.Errorf("an existing file chek was taken for a command: %s", stderr)
	}
}

// TestHelpPerCommand: `help CMD` prints what `CMD --help` prints, that
// command's own flags only (check lists none of gen's -o/-p/--check
// meanings: it has no --check), and `version --help` exits 0.
func TestHelpPerCommand(t *testing.T) {
	for _, cmd := range []string{"gen", "check", "fmt", "mermaid", "schema", "diff", "version"} {
		var a, b, errb bytes.Buffer
		if code := Run([]string{"help", cmd}, &a, &errb); code != exitOK {
			t.Fatalf("help %s: exit %d: %s", cmd, code, errb.String())
		}
		if code := Run([]string{cmd, "--help"}, &b, &errb); code != exitOK {
			t.Fatalf("%s --help: exit %d: %s", cmd, code, errb.String())
		}
		if a.String() != b.String() || !strings.HasPrefix(a.String(), "Usage: ilmekgen ") || strings.Contains(a.String(), "ilmekgen compiles a stored") {
			t.Errorf("help %s printed\n%s\nand %s --help printed\n%s", cmd, a.String(), cmd, b.String())
		}
	}
	var out, errb bytes.Buffer
	Run([]string{"check", "--help"}, &out, &errb)
	if strings.Contains(out.String(), "--check") || strings.Contains(out.String(), "stale") || strings.Contains(out.String(), "directory of the generated package") {
		t.Errorf("check --help lists gen's flags:\n%s", out.String())
	}
	out.Reset()
	Run([]string{"gen", "--help"}, &out, &errb)
	if !strings.Contains(out.String(), "--check") {
		t.Errorf("gen --help lacks --check:\n%s", out.String())
	}
	out.Reset()
	if code := Run([]string{"version", "-h"}, &out, &errb); code != exitOK || !strings.Contains(out.String(), "Usage: ilmekgen version") {
		t.Errorf("version -h: exit %d:\n%s", code, out.String())
	}
}

// TestUnifiedDiffApplies: the diff fmt --check prints turns the old text
// into the new one under patch(1), for edits at the start, the middle and
// the end, with and without a final newline.
func TestUnifiedDiffApplies(t *testing.T) {
	patch, err := exec.LookPath("patch")
	if err != nil {
		t.Skip("no patch(1)")
	}
	if unifiedDiff("a", []byte("x\n"), "b", []byte("x\n")) != nil {
		t.Fatal("a diff of equal texts")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 60 {
		var old []string
		for j := range 5 + r.IntN(40) {
			old = append(old, fmt.Sprintf("line %d", j%(3+r.IntN(20))))
		}
		neu := append([]string(nil), old...)
		for range 1 + r.IntN(6) {
			k := r.IntN(len(neu) + 1)
			switch r.IntN(3) {
			case 0:
				neu = append(neu[:k], append([]string{fmt.Sprintf("new %d", r.IntN(100))}, neu[k:]...)...)
			case 1:
				if k < len(neu) {
					neu = append(neu[:k], neu[k+1:]...)
				}
			default:
				if k < len(neu) {
					neu[k] = "changed " + neu[k]
				}
			}
		}
		oldText, newText := strings.Join(old, "\n"), strings.Join(neu, "\n")
		if i%2 == 0 {
			oldText += "\n"
		}
		if i%3 != 0 {
			newText += "\n"
		}
		d := unifiedDiff("f", []byte(oldText), "f", []byte(newText))
		if oldText == newText {
			continue
		}
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "f"), []byte(oldText), 0o644)
		cmd := exec.Command(patch, "-s", "f")
		cmd.Dir, cmd.Stdin = dir, bytes.NewReader(d)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("case %d: patch: %v %s\ndiff:\n%s", i, err, out, d)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "f")); string(got) != newText {
			t.Fatalf("case %d: the patched text differs\nold:\n%s\nnew:\n%s\ngot:\n%s\ndiff:\n%s", i, oldText, newText, got, d)
		}
	}
}
