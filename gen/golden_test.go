package gen

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/spec"
)

var update = flag.Bool("update", false, "rewrite the generated golden files and the expected diagnostics of the error cases")

const modulePath = "github.com/ilmek-go/ilmek"

// moduleRoot is the directory of go.mod, two levels above gen's tests.
func moduleRoot(t testing.TB) string {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// invocation is one ilmekgen gen command line, as a golden case's flags.txt
// or a //go:generate line writes it.
type invocation struct {
	dir      string // where the command runs
	specPath string
	out      string
	pkg      string
	bindings BindingSpec
	bindFile string
	loadDir  string // where bindings are resolved; dir when empty
}

// parseInvocation reads the flags of ilmekgen gen the golden cases and
// examples use: -o/--out, -p/--package, --type, --config, --bindings and
// one SPEC.
func parseInvocation(dir string, args []string) (*invocation, error) {
	inv := &invocation{dir: dir, out: ".", bindings: BindingSpec{Channels: map[string]string{}, Configs: map[string]string{}}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			inv.specPath = a
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		if !hasVal {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag %s needs a value", a)
			}
			i++
			val = args[i]
		}
		switch name {
		case "-o", "--out":
			inv.out = val
		case "-p", "--package":
			inv.pkg = val
		case "--bindings":
			inv.bindFile = val
		case "--type", "--config":
			k, v, ok := strings.Cut(val, "=")
			if !ok {
				return nil, fmt.Errorf("%s %s: want NAME=GOTYPE", name, val)
			}
			if name == "--type" {
				inv.bindings.Channels[k] = v
			} else {
				inv.bindings.Configs[k] = v
			}
		default:
			return nil, fmt.Errorf("unknown flag %s", name)
		}
	}
	if inv.specPath == "" {
		return nil, fmt.Errorf("no SPEC in %q", args)
	}
	return inv, nil
}

// generate runs the invocation in memory: decode, bind, generate. The
// diagnostics are those ilmekgen prints, sorted.
func (inv *invocation) generate(t testing.TB) ([]File, spec.Diagnostics) {
	data, err := os.ReadFile(filepath.Join(inv.dir, inv.specPath))
	if err != nil {
		t.Fatal(err)
	}
	g, diags := spec.Decode(path.Clean(inv.specPath), data)
	if diags.HasErrors() {
		SortDiagnostics(diags)
		return nil, diags
	}
	files, more := inv.generateGraph(t, g)
	all := append(append(spec.Diagnostics(nil), diags...), more...)
	SortDiagnostics(all)
	return files, all
}

// generateGraph binds and generates a decoded spec as the invocation says.
func (inv *invocation) generateGraph(t testing.TB, g *spec.Graph) ([]File, spec.Diagnostics) {
	var diags spec.Diagnostics
	outDir := filepath.Join(inv.dir, inv.out)
	root := moduleRoot(t)
	rel, err := filepath.Rel(root, outDir)
	if err != nil {
		t.Fatal(err)
	}
	pkg := inv.pkg
	if pkg == "" {
		pkg = filepath.Base(outDir)
	}
	source, _ := filepath.Rel(outDir, filepath.Join(inv.dir, inv.specPath))
	opts := Options{Package: pkg, PkgPath: path.Join(modulePath, filepath.ToSlash(rel)), Source: filepath.ToSlash(source)}
	// Copy the maps: the bindings file is merged in, and an invocation may
	// generate concurrently (TestDeterministic).
	bs := BindingSpec{Channels: maps.Clone(inv.bindings.Channels), Configs: maps.Clone(inv.bindings.Configs)}
	if bs.Channels == nil {
		bs.Channels = map[string]string{}
	}
	if bs.Configs == nil {
		bs.Configs = map[string]string{}
	}
	if inv.bindFile != "" {
		raw, err := os.ReadFile(filepath.Join(inv.dir, inv.bindFile))
		if err != nil {
			t.Fatal(err)
		}
		var fromFile BindingSpec
		if err := json.Unmarshal(raw, &fromFile); err != nil {
			t.Fatal(err)
		}
		for k, v := range fromFile.Channels {
			bs.Channels[k] = v
		}
		for k, v := range fromFile.Configs {
			bs.Configs[k] = v
		}
	}
	var all spec.Diagnostics
	all = append(all, diags...)
	if !bs.Empty() {
		loadDir := inv.loadDir
		if loadDir == "" {
			loadDir = inv.dir
		}
		b, bd := LoadBindings(g, bs, LoadConfig{Dir: loadDir, OutPkgPath: opts.PkgPath})
		all = append(all, bd...)
		if bd.HasErrors() {
			SortDiagnostics(all)
			return nil, all
		}
		opts.Bindings = b
	}
	files, gd := Generate(g, opts)
	all = append(all, gd...)
	SortDiagnostics(all)
	return files, all
}

// goldenCases lists testdata/golden/<case> directories with their command.
func goldenCases(t testing.TB) map[string]*invocation {
	root := moduleRoot(t)
	dirs, err := filepath.Glob(filepath.Join(root, "testdata", "golden", "*", "flags.txt"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases (%v)", err)
	}
	cases := map[string]*invocation{}
	for _, f := range dirs {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Dir(f)
		inv, err := parseInvocation(dir, append(strings.Fields(string(data)), "spec.json"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		cases[filepath.Base(dir)] = inv
	}
	return cases
}

// TestGolden regenerates every golden case in memory and compares it with
// the committed files byte for byte.
func TestGolden(t *testing.T) {
	for name, inv := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			files, diags := inv.generate(t)
			if diags.HasErrors() {
				t.Fatalf("diagnostics:\n%v", diags)
			}
			compareFiles(t, filepath.Join(inv.dir, inv.out), files, "go test ./gen -run 'TestGolden/"+name+"$' -update")
		})
	}
}

// compareFiles compares generated files with those in dir, or rewrites
// them under -update.
func compareFiles(t *testing.T, dir string, files []File, updateCmd string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, f.Name)
		if *update {
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
		var out [2][]File
		for i := range out {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i], _ = inv.generate(t)
			}()
		}
		wg.Wait()
		if diff := cmp.Diff(out[0], out[1]); diff != "" {
			t.Errorf("%s: two generations differ:\n%s", name, diff)
		}
	}
}
