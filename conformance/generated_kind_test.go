package conformance

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// fakeProgramEnv makes the test binary act as a generated program serving
// fakePrograms.
const fakeProgramEnv = "ILMEK_CONFORMANCE_FAKE_PROGRAM"

// fakePrograms is the one package of the fake generated program: case
// "boom" panics, case "hang" ignores its deadline, others are done.
var fakePrograms = map[string]ProgramFunc{
	"p": func(ctx context.Context, c *Case, _ *Effects, _ runtime.Checkpointer) []Observation {
		switch c.Name {
		case "boom":
			panic("boom: the generated program crashed on purpose")
		case "hang":
			select {} // ignores ctx: the watchdog must stop the program
		}
		return []Observation{{Status: "done", Steps: [][]string{{c.Name}}}}
	},
}

// TestGeneratedKindSurvivesCrashes runs cases through a program that
// panics on one case and hangs on another: each is observed as "crashed"
// with the program's stderr (the panic, the goroutines), and every other
// case still runs and is observed.
func TestGeneratedKindSurvivesCrashes(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeProgramEnv, "1")
	raw := json.RawMessage(`{"fake": true}`)
	k := &GeneratedKind{Timeout: 200 * time.Millisecond}
	k.mod = &genModule{dir: t.TempDir(), binary: exe, pkgs: map[string]*genPackage{specKey(raw): {name: "p"}}}
	defer k.Close()
	var cases []*Case
	for _, name := range []string{"first", "boom", "middle", "hang", "last"} {
		cases = append(cases, &Case{File: name + ".json", Name: name, Spec: raw, Expect: &Expect{Status: "done"}})
	}
	obs, err := k.RunOn(t.Context(), cases, "memory")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"first":  {"done"},
		"boom":   {"crashed", "panic: boom: the generated program crashed on purpose", "goroutine"},
		"middle": {"done"},
		"hang":   {"crashed", "exit status 3", "still running", "goroutine"},
		"last":   {"done"},
	}
	for i, c := range cases {
		if len(obs[i]) != 1 {
			t.Errorf("%s: %d observations, want 1", c.Name, len(obs[i]))
			continue
		}
		o := obs[i][0]
		if o.Status != want[c.Name][0] {
			t.Errorf("%s: status %s, want %s (%s)", c.Name, o.Status, want[c.Name][0], o.Error)
		}
		for _, s := range want[c.Name][1:] {
			if !strings.Contains(o.Error, s) {
				t.Errorf("%s: the error does not contain %q:\n%s", c.Name, s, o.Error)
			}
		}
	}
	// The crash reads as a failure of that case, with the stderr.
	d := strings.Join(Compare(cases[1], obs[1]), "\n")
	if !strings.Contains(d, "status: want done, got crashed") || !strings.Contains(d, "panic: boom") {
		t.Errorf("the diff of the crashed case does not say what happened:\n%s", d)
	}
}

// TestGeneratedKindObservesGenRefusal: a spec that runtime.FromSpec runs
// but ilmekgen refuses (two channels with one Go name) is observed as
// invalid by the generated kind, naming ilmekgen, so the comparison of the
// two kinds shows the discrepancy.
func TestGeneratedKindObservesGenRefusal(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the generated kind builds a module")
	}
	raw := json.RawMessage(`{"channels": {"user_id": {}, "userId": {}}, "nodes": [{"id": "a", "type": "noop"}], "edges": [{"from": "__start__", "to": "a"}]}`)
	c := &Case{File: "collide.json", Name: "collide", Spec: raw, Expect: &Expect{Status: "done", Steps: [][]string{{"a"}}, State: json.RawMessage(`{}`)}}
	if d := Compare(c, RunSpecKind(t.Context(), c, func() runtime.Checkpointer { return checkpoint.NewMemory() })); len(d) > 0 {
		t.Fatalf("the spec kind runs this spec: %v", d)
	}
	k := &GeneratedKind{BuildFlags: raceFlags}
	defer k.Close()
	obs, err := k.RunOn(t.Context(), []*Case{c}, "memory")
	if err != nil {
		t.Fatal(err)
	}
	o := obs[0][0]
	if o.Status != "invalid" || o.ErrorKind != "spec" || !strings.Contains(o.Error, "ilmekgen refuses the spec") || !strings.Contains(o.Error, "UserID") {
		t.Errorf("generated kind observed %+v, want invalid/spec naming ilmekgen and the Go name", o)
	}
	if d := Compare(c, obs[0]); len(d) != 1 || !strings.Contains(d[0], "the graph was refused, but the case expects it to run") {
		t.Errorf("diff %q", d)
	}
}

func TestGeneratedKindUnknownBackend(t *testing.T) {
	k := &GeneratedKind{}
	_, err := k.RunOn(t.Context(), nil, "nosuch")
	if err == nil || !strings.Contains(err.Error(), `unknown backend "nosuch" (known: memory, sqlite`) {
		t.Errorf("err = %v", err)
	}
}

func TestFindModuleRoot(t *testing.T) {
	root, err := FindModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.Abs(".."); root != want {
		t.Errorf("FindModuleRoot() = %s, want %s", root, want)
	}
	err = CheckModuleRoot(filepath.Join(root, "conformance"))
	if err == nil || !strings.Contains(err.Error(), "go.mod") {
		t.Errorf("CheckModuleRoot(conformance/) = %v, want an error about go.mod", err)
	}
}

func TestBrokenPackages(t *testing.T) {
	out := "# example.com/ilmek-conformance/c3\n" +
		"c3/program.gen.go:12:3: undefined: x\n" +
		"c3/program.gen.go:14:3: undefined: y\n" +
		"# example.com/ilmek-conformance/c12\n" +
		"c12/codec.gen.go:1:1: syntax error\n" +
		"# example.com/ilmek-conformance\n" +
		"./main.go:3:1: imported and not used\n"
	got := brokenPackages(out)
	want := map[string]string{
		"c3":  "# example.com/ilmek-conformance/c3\nc3/program.gen.go:12:3: undefined: x\nc3/program.gen.go:14:3: undefined: y",
		"c12": "# example.com/ilmek-conformance/c12\nc12/codec.gen.go:1:1: syntax error",
	}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s:\n got %q\nwant %q", k, got[k], v)
		}
	}
}
