package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary act as ilmekgen (stringer's trick): with
// ILMEKGEN_RUN_MAIN set it runs Run, as cmd/ilmekgen's main does, instead
// of the tests, so the tests exercise the real command line, working
// directory, files and exit codes.
func TestMain(m *testing.M) {
	if os.Getenv("ILMEKGEN_RUN_MAIN") != "" {
		os.Exit(Run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// ilmekgen runs the test binary as the command in dir.
func ilmekgen(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ILMEKGEN_RUN_MAIN=1", noExitSleep())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// noExitSleep is the GORACE setting that spares a race-enabled test
// binary run as ilmekgen the race detector's pause of one second at exit
// (atexit_sleep_ms, which lets other goroutines' reports in): the command
// has none, and the tests run it dozens of times.
func noExitSleep() string {
	return "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")
}

func root(t *testing.T) string {
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGenerateWritesGoldenAndIsIdempotent(t *testing.T) {
	golden := filepath.Join(root(t), "testdata", "golden", "support")
	dir := t.TempDir()
	copyFile(t, filepath.Join(golden, "spec.json"), filepath.Join(dir, "spec.json"))
	args := []string{"-o", "supportgraph", "--type", "messages=[]string", "--type=intent=string", "spec.json"}
	if _, stderr, code := ilmekgen(t, dir, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	names := []string{"codec.gen.go", "graph.gen.go", "program.gen.go", "registry.gen.go", "spec.gen.go"}
	stamps := map[string]time.Time{}
	for _, n := range names {
		got, err := os.ReadFile(filepath.Join(dir, "supportgraph", n))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(golden, "supportgraph", n))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the golden file", n)
		}
		fi, _ := os.Stat(filepath.Join(dir, "supportgraph", n))
		stamps[n] = fi.ModTime()
	}
	time.Sleep(20 * time.Millisecond)
	if stdout, stderr, code := ilmekgen(t, dir, args...); code != 0 || stdout != "" || stderr != "" {
		t.Fatalf("second run: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	for _, n := range names {
		fi, _ := os.Stat(filepath.Join(dir, "supportgraph", n))
		if !fi.ModTime().Equal(stamps[n]) {
			t.Errorf("%s was rewritten although its bytes did not change", n)
		}
	}
	if _, stderr, code := ilmekgen(t, dir, append([]string{"--check"}, args...)...); code != 0 {
		t.Fatalf("--check on fresh output: exit %d: %s", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "supportgraph", "graph.gen.go"), []byte("package supportgraph\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := ilmekgen(t, dir, append([]string{"--check"}, args...)...)
	if code != 1 || !strings.Contains(stderr, filepath.Join("supportgraph", "graph.gen.go")+": stale") {
		t.Errorf("--check on stale output: exit %d, stderr %q", code, stderr)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, "supportgraph", ".*.tmp")); len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

func TestExampleIsUpToDate(t *testing.T) {
	dir := filepath.Join(root(t), "examples", "support")
	if _, stderr, code := ilmekgen(t, dir, "--check", "-o", "supportgraph", "--type", "messages=[]string", "--type", "intent=string", "support.json"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

func TestBindingsFromPackages(t *testing.T) {
	dir := filepath.Join(root(t), "testdata", "golden", "bound")
	data, err := os.ReadFile(filepath.Join(dir, "flags.txt"))
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--check"}, strings.Fields(string(data))...)
	if _, stderr, code := ilmekgen(t, dir, append(args, "spec.json")...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

func TestErrorsAndUsage(t *testing.T) {
	dir := t.TempDir()
	bad := `{
  "channels": {"n": {}},
  "nodes": [{"id": "id", "type": "noop"}],
  "edges": [{"from": "__start__", "to": "id"}, {"from": "id", "to": "__end__", "when": {"channel": "n", "eq": "x"}}, {"from": "id", "to": "__end__"}]
}
`
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := ilmekgen(t, dir, "-o", "out", "--type", "n=int", "bad.json")
	want := "bad.json:3:20: nodes[0].id: node \"id\" converts to NodeID, which is the generated NodeID; rename it in the spec\n" +
		"bad.json:4:88: edges[1].when: eq \"x\" can never hold for channel \"n\" of type int; change the predicate or the channel's type\n"
	if code != 1 || stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", code, stderr, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("a failed generation wrote files (%v)", err)
	}
	for _, args := range [][]string{
		{},
		{"--nope", "bad.json"},
		{"--type", "novalue", "bad.json"},
		{"a.json", "b.json"},
		{"fmt"},
		{"mermaid"},
		{"version", "x"},
		{"-o", "bad-name", "bad.json"},
	} {
		if _, stderr, code := ilmekgen(t, dir, args...); code != 2 {
			t.Errorf("ilmekgen %q: exit %d, want 2 (stderr %q)", args, code, stderr)
		}
	}
	if _, stderr, code := ilmekgen(t, dir, "-p", "x", "missing.json"); code != 1 || !strings.Contains(stderr, "missing.json") {
		t.Errorf("missing spec: exit %d, stderr %q", code, stderr)
	}
}

func TestCheckFmtMermaidVersionHelp(t *testing.T) {
	golden := filepath.Join(root(t), "testdata", "golden")
	dir := t.TempDir()
	copyFile(t, filepath.Join(golden, "support", "spec.json"), filepath.Join(dir, "support.json"))
	copyFile(t, filepath.Join(golden, "operators", "spec.json"), filepath.Join(dir, "operators.json"))
	if _, stderr, code := ilmekgen(t, dir, "check", "support.json", "operators.json"); code != 0 {
		t.Errorf("check: exit %d: %s", code, stderr)
	}
	out, _, code := ilmekgen(t, dir, "fmt", "support.json")
	if code != 0 || !strings.HasPrefix(out, "{\n  \"name\": \"support-agent\",\n  \"channels\": {\n    \"cart\": {") {
		t.Errorf("fmt: exit %d:\n%s", code, out)
	}
	if _, stderr, code := ilmekgen(t, dir, "fmt", "--check", "support.json"); code != 1 || !strings.Contains(stderr, "not in canonical form") {
		t.Errorf("fmt --check: exit %d: %s", code, stderr)
	}
	if _, stderr, code := ilmekgen(t, dir, "fmt", "-w", "support.json"); code != 0 {
		t.Errorf("fmt -w: exit %d: %s", code, stderr)
	}
	if written, _ := os.ReadFile(filepath.Join(dir, "support.json")); string(written) != out {
		t.Errorf("fmt -w wrote\n%s\nwant\n%s", written, out)
	}
	if _, stderr, code := ilmekgen(t, dir, "fmt", "--check", "support.json"); code != 0 {
		t.Errorf("fmt --check after -w: exit %d: %s", code, stderr)
	}
	out, _, code = ilmekgen(t, dir, "mermaid", "support.json")
	if code != 0 || !strings.HasPrefix(out, "flowchart TD\n") || !strings.Contains(out, `agent -->|"intent == #quot;buy#quot;"| checkout`) || !strings.Contains(out, "checkout --> __end__") {
		t.Errorf("mermaid: exit %d:\n%s", code, out)
	}
	out, _, code = ilmekgen(t, dir, "mermaid", "--direction", "LR", "--types", "support.json")
	if code != 0 || !strings.HasPrefix(out, "flowchart LR\n") || !strings.Contains(out, `agent["agent<br/><i>llm</i>"]`) {
		t.Errorf("mermaid --direction LR --types: exit %d:\n%s", code, out)
	}
	if _, stderr, code := ilmekgen(t, dir, "mermaid", "--direction", "up", "support.json"); code != 2 || !strings.Contains(stderr, `unknown direction "up"`) {
		t.Errorf("mermaid --direction up: exit %d: %s", code, stderr)
	}
	if out, _, code := ilmekgen(t, dir, "version"); code != 0 || !strings.HasPrefix(out, "ilmekgen ") {
		t.Errorf("version: exit %d: %q", code, out)
	}
	for _, args := range [][]string{{"--help"}, {"help"}, {"gen", "-h"}} {
		if out, _, code := ilmekgen(t, dir, args...); code != 0 || !strings.Contains(out, "//go:generate go tool ilmekgen") {
			t.Errorf("%q: exit %d:\n%s", args, code, out)
		}
	}
}
