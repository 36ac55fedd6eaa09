package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/gen"
	"github.com/ilmek-go/ilmek/spec"
)

// generateLine starts every //go:generate line of the scenarios.
const generateLine = "//go:generate go tool ilmekgen "

// TestScenarioPackagesUpToDate replays, in memory, the //go:generate line of
// every scenario (testdata/scenarios/*/scenario.go) as ilmekgen would run
// it, and fails when a committed generated package differs from what the
// generator writes today (gen's TestExamplesUpToDate does not look here).
func TestScenarioPackagesUpToDate(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*", "scenario.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(scenarios) {
		t.Errorf("%d scenario.go files under %s, %d scenarios in scenarios_list_test.go", len(files), scenarioDir, len(scenarios))
	}
	for _, file := range files {
		t.Run(filepath.Base(filepath.Dir(file)), func(t *testing.T) {
			line, err := generateArgs(file)
			if err != nil {
				t.Fatal(err)
			}
			inv, err := parseGenerate(filepath.Dir(file), line)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			want, err := inv.generate()
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			fix := "run go generate ./" + filepath.ToSlash(filepath.Join("conformance", filepath.Dir(file)))
			for _, f := range want {
				got, err := os.ReadFile(filepath.Join(inv.out, f.Name))
				if err != nil {
					t.Errorf("%s: %v; %s", f.Name, err, fix)
				} else if !bytes.Equal(got, f.Data) {
					t.Errorf("%s is stale (differs from what ilmekgen writes today); %s", filepath.Join(inv.out, f.Name), fix)
				}
			}
			onDisk, _ := filepath.Glob(filepath.Join(inv.out, "*.go"))
			for _, p := range onDisk {
				if !slices.Contains(gen.FileNames, filepath.Base(p)) {
					t.Errorf("%s is not a file ilmekgen writes; remove it", p)
				}
			}
		})
	}
}

// generateArgs returns the arguments of the file's ilmekgen //go:generate
// line.
func generateArgs(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var found []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if args, ok := strings.CutPrefix(sc.Text(), generateLine); ok {
			if found != nil {
				return nil, fmt.Errorf("%s: more than one ilmekgen //go:generate line", file)
			}
			found = strings.Fields(args)
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%s: no line starting %q", file, generateLine)
	}
	return found, sc.Err()
}

// invocation is one ilmekgen gen command line, run in dir.
type invocation struct {
	dir, out, pkg, spec string
	bindings            gen.BindingSpec
}

// parseGenerate reads the flags the scenarios use: -o/--out, -p/--package,
// --type and --config (NAME=GOTYPE), and one SPEC.
func parseGenerate(dir string, args []string) (*invocation, error) {
	inv := &invocation{dir: dir, out: dir, bindings: gen.BindingSpec{Channels: map[string]string{}, Configs: map[string]string{}}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			if inv.spec != "" {
				return nil, fmt.Errorf("two specs: %s and %s", inv.spec, a)
			}
			inv.spec = filepath.Join(dir, a)
			continue
		}
		name, val, inline := strings.Cut(a, "=")
		if !inline {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag %s needs a value", a)
			}
			i++
			val = args[i]
		}
		switch name {
		case "-o", "--out":
			inv.out = filepath.Join(dir, val)
		case "-p", "--package":
			inv.pkg = val
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
			return nil, fmt.Errorf("flag %s is not one the scenario test replays (-o, -p, --type, --config)", name)
		}
	}
	if inv.spec == "" {
		return nil, fmt.Errorf("no SPEC")
	}
	if inv.pkg == "" {
		inv.pkg = filepath.Base(inv.out)
	}
	return inv, nil
}

// generate runs the generator as ilmekgen gen would.
func (inv *invocation) generate() ([]gen.File, error) {
	data, err := os.ReadFile(inv.spec)
	if err != nil {
		return nil, err
	}
	doc, diags := spec.Decode(filepath.ToSlash(inv.spec), data)
	if err := diags.Err(); err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(inv.out, inv.spec)
	if err != nil {
		return nil, err
	}
	// The tests run in conformance/, so inv.out is relative to it.
	opts := gen.Options{Package: inv.pkg, PkgPath: path.Join(ModulePath, "conformance", filepath.ToSlash(inv.out)), Source: filepath.ToSlash(rel)}
	if !inv.bindings.Empty() {
		b, diags := gen.LoadBindings(doc, inv.bindings, gen.LoadConfig{Dir: inv.dir, OutPkgPath: opts.PkgPath})
		if err := diags.Err(); err != nil {
			return nil, err
		}
		opts.Bindings = b
	}
	files, diags := gen.Generate(doc, opts)
	if err := diags.Err(); err != nil {
		return nil, err
	}
	return files, nil
}
