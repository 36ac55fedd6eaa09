package gen_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/gen"
	"github.com/ilmek-go/ilmek/internal/cli"
	"github.com/ilmek-go/ilmek/spec"
)

// These tests replay ilmekgen command lines — a golden case's flags.txt, a
// //go:generate line — through the command's own parser, cli.ParseGen, and
// generate in memory what the command would write. They are in package
// gen_test because internal/cli imports gen.

// moduleRoot is the directory of go.mod, two levels above gen's tests.
func moduleRoot(t testing.TB) string {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// updating reports whether -update is set (the flag is declared by gen's
// internal tests, which share this test binary).
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// parseGen parses one ilmekgen gen command line run in dir.
func parseGen(t testing.TB, dir string, args []string) *cli.Invocation {
	t.Helper()
	inv, err := cli.ParseGen(dir, args, false)
	if err != nil {
		t.Fatalf("ilmekgen %s in %s: %v", strings.Join(args, " "), dir, err)
	}
	if len(inv.Specs) != 1 {
		t.Fatalf("ilmekgen %s in %s: %d specs, want one", strings.Join(args, " "), dir, len(inv.Specs))
	}
	return inv
}

// generate runs the invocation in memory, as ilmekgen would before it
// writes; a file it cannot read fails the test.
func generate(t testing.TB, inv *cli.Invocation) ([]gen.File, spec.Diagnostics) {
	t.Helper()
	files, diags, err := inv.Generate(inv.Specs[0])
	if err != nil {
		t.Fatal(err)
	}
	return files, diags
}

// goldenCases lists testdata/golden/<case> directories with their command:
// the flags in flags.txt and the spec spec.json.
func goldenCases(t testing.TB) map[string]*cli.Invocation {
	root := moduleRoot(t)
	dirs, err := filepath.Glob(filepath.Join(root, "testdata", "golden", "*", "flags.txt"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases (%v)", err)
	}
	cases := map[string]*cli.Invocation{}
	for _, f := range dirs {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Dir(f)
		cases[filepath.Base(dir)] = parseGen(t, dir, append(strings.Fields(string(data)), "spec.json"))
	}
	return cases
}

// TestGolden regenerates every golden case in memory and compares it with
// the committed files byte for byte.
func TestGolden(t *testing.T) {
	for name, inv := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			files, diags := generate(t, inv)
			if diags.HasErrors() {
				t.Fatalf("diagnostics:\n%v", diags)
			}
			compareFiles(t, inv.Out, files, "go test ./gen -run 'TestGolden/"+name+"$' -update")
		})
	}
}

// compareFiles compares generated files with those in dir, or rewrites
// them under -update.
func compareFiles(t *testing.T, dir string, files []gen.File, updateCmd string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, f.Name)
		if updating() {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if old, err := os.ReadFile(p); err != nil || !bytes.Equal(old, f.Data) {
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		want, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%v; run %s", err, updateCmd)
			continue
		}
		if diff := cmp.Diff(string(want), string(f.Data)); diff != "" {
			t.Errorf("%s is stale (-want +got):\n%s\nrun: %s", p, diff, updateCmd)
		}
	}
}

// TestGoldenPackages vets the generated golden packages and runs their
// hand-written tests, which build the graphs, run them and check the spec
// round trip.
func TestGoldenPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet and go test")
	}
	root := moduleRoot(t)
	for _, args := range [][]string{{"vet", "./testdata/golden/..."}, {"test", "-count=1", "./testdata/golden/..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestDeterministic generates every case twice at once and compares.
func TestDeterministic(t *testing.T) {
	for name, inv := range goldenCases(t) {
		var wg sync.WaitGroup
		var out [2][]gen.File
		for i := range out {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i], _, _ = inv.Generate(inv.Specs[0])
			}()
		}
		wg.Wait()
		if diff := cmp.Diff(out[0], out[1]); diff != "" {
			t.Errorf("%s: two generations differ:\n%s", name, diff)
		}
	}
}
