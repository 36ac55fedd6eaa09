package gen

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/spec"
)

// TestConformanceThroughGeneratedCode generates a package for every
// single-run case of the shared conformance suite, serves it with the test
// registry through FromRegistry (the adapter), and checks status, error
// kind, supersteps and final state against the case's expectation. It
// proves that generated guards, reducers and the adapter behave as the
// model says. It needs ../shared/conformance (skipped when absent).
func TestConformanceThroughGeneratedCode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs generated packages")
	}
	casesDir := filepath.Join(moduleRoot(t), "..", "shared", "conformance", "cases")
	paths, _ := filepath.Glob(filepath.Join(casesDir, "*.json"))
	if len(paths) == 0 {
		t.Skipf("no conformance cases in %s", casesDir)
	}
	dir := tempModule(t)
	var entries []string
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Spec   json.RawMessage `json:"spec"`
			Expect struct {
				Status string `json:"status"`
			} `json:"expect"`
		}
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		g, diags := spec.Decode(filepath.Base(p), c.Spec)
		if diags.HasErrors() {
			if c.Expect.Status != "invalid" {
				t.Errorf("%s: spec refused but the case expects %s: %v", p, c.Expect.Status, diags.Errors())
			}
			continue
		}
		pkg := fmt.Sprintf("c%d", i)
		files, diags := Generate(g, Options{Package: pkg, PkgPath: "example.com/tmp/" + pkg, Source: filepath.Base(p)})
		if diags.HasErrors() {
			t.Errorf("%s: %v", p, diags)
			continue
		}
		writeFiles(t, filepath.Join(dir, pkg), files)
		entries = append(entries, fmt.Sprintf("\t%q: func(in runtime.Values, opts ...runtime.RunOption) (outcome, error) {\n\t\tg, err := %s.New(%s.FromRegistry(registry))\n\t\tif err != nil {\n\t\t\treturn outcome{}, err\n\t\t}\n\t\treturn run(g, %s.UpdateOf(in), opts...)\n\t},", p, pkg, pkg, pkg))
		sort.Strings(entries)
	}
	var imports []string
	for _, e := range entries {
		pkg := e[strings.Index(e, ":= ")+3 : strings.Index(e, ".New(")]
		imports = append(imports, fmt.Sprintf("\t\"example.com/tmp/%s\"", pkg))
	}
	src := strings.Replace(strings.Replace(conformanceMain, "//IMPORTS", strings.Join(imports, "\n"), 1), "//CASES", strings.Join(entries, "\n"), 1)
	if err := os.WriteFile(filepath.Join(dir, "conf_test.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "test", "-count=1", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("conformance through generated code: %v\n%s", err, out)
	}
}

// conformanceMain is the test the temporary module runs.
const conformanceMain = `package tmp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
//IMPORTS
)

type outcome struct {
	status, kind string
	steps        [][]string
	state        []byte
}

func run[S interface{ MarshalJSON() ([]byte, error) }, U any](g *runtime.Graph[S, U], in U, opts ...runtime.RunOption) (outcome, error) {
	var o outcome
	for ev, err := range g.Stream(context.Background(), in, opts...) {
		if err != nil {
			return o, err
		}
		if ev.Type == runtime.EventStepStart {
			tasks := slices.Clone(ev.Tasks)
			slices.Sort(tasks)
			o.steps = append(o.steps, tasks)
		}
		if ev.Type == runtime.EventRunEnd {
			o.status, o.kind = string(ev.Status), runtime.ErrorKind(ev.Err)
		}
	}
	res, _ := g.Invoke(context.Background(), in, opts...)
	var err error
	o.state, err = res.State.MarshalJSON()
	return o, err
}

var registry = runtime.Registry{
	"noop": func(spec.Node) (runtime.NodeFunc, error) {
		return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }, nil
	},
	"write": func(n spec.Node) (runtime.NodeFunc, error) {
		var cfg struct{ Update json.RawMessage }
		if err := json.Unmarshal(n.Config, &cfg); err != nil {
			return nil, err
		}
		return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			var out runtime.Values
			err := json.Unmarshal(cfg.Update, &out)
			return out, err
		}, nil
	},
	"copy": func(n spec.Node) (runtime.NodeFunc, error) {
		var cfg struct{ From, To string }
		if err := json.Unmarshal(n.Config, &cfg); err != nil {
			return nil, err
		}
		return func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			v, ok := s[cfg.From]
			if !ok {
				return nil, nil
			}
			return runtime.Values{cfg.To: v}, nil
		}, nil
	},
	"incr": func(n spec.Node) (runtime.NodeFunc, error) {
		var cfg struct {
			Channel string
			By      float64
		}
		if err := json.Unmarshal(n.Config, &cfg); err != nil {
			return nil, err
		}
		return func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			cur, _ := runtime.AsFloat(s[cfg.Channel])
			return runtime.Values{cfg.Channel: cur + cfg.By}, nil
		}, nil
	},
	"fail": func(n spec.Node) (runtime.NodeFunc, error) {
		var cfg struct{ Message string }
		json.Unmarshal(n.Config, &cfg)
		return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, errors.New(cfg.Message) }, nil
	},
}

var cases = map[string]func(runtime.Values, ...runtime.RunOption) (outcome, error){
//CASES
}

func TestCases(t *testing.T) {
	for path, runCase := range cases {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Input          runtime.Values
			RecursionLimit *int ` + "`json:\"recursion_limit\"`" + `
			Expect         struct {
				Status    string
				ErrorKind string ` + "`json:\"error_kind\"`" + `
				Steps     [][]string
				State     json.RawMessage
			}
		}
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatal(err)
		}
		var opts []runtime.RunOption
		if c.RecursionLimit != nil {
			opts = append(opts, runtime.RecursionLimit(*c.RecursionLimit))
		}
		o, err := runCase(c.Input, opts...)
		if c.Expect.Status == "invalid" {
			if runtime.ErrorKind(err) != "spec" {
				t.Errorf("%s: want a spec error, got %v", path, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if o.status != c.Expect.Status || (c.Expect.ErrorKind != "" && o.kind != c.Expect.ErrorKind) {
			t.Errorf("%s: status %s kind %q, want %s %q", path, o.status, o.kind, c.Expect.Status, c.Expect.ErrorKind)
		}
		if c.Expect.Steps != nil && !slices.EqualFunc(o.steps, c.Expect.Steps, slices.Equal) {
			t.Errorf("%s: steps %v, want %v", path, o.steps, c.Expect.Steps)
		}
		if c.Expect.Status == "done" {
			if eq, err := spec.JSONEqual(o.state, c.Expect.State); err != nil || !eq {
				t.Errorf("%s: state %s, want %s", path, o.state, c.Expect.State)
			}
		}
	}
}
`
