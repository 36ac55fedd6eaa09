package conformance

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// The behavioural scenarios (conformance/README.md, "Scenarios"), each run through every program
// kind that can express it:
//
//   - spec: runtime.FromSpec(spec.json, the scenario's registry);
//   - code: runtime.NewBuilder with Go closures (and routers, where the
//     scenario routes);
//   - generated: the package ilmekgen generated from spec.json (committed
//     under testdata/scenarios/<dir>/, see TestScenarioPackagesUpToDate)
//     with hand-written typed nodes;
//   - generated-registry: the same package served by the scenario's
//     registry through its FromRegistry adapter.
//
// Each scenario's runs*.json holds the runs and what each must do, in the
// multi-run case format; every kind drives them with Drive, on both
// backends, and must match. Scenario 6 (the spec round trip) is
// TestScenarioSpecRoundTrip; scenario 5's SIGKILL half is in runtime/sqlite.

// scenarioDir is where the scenarios live.
var scenarioDir = filepath.Join("testdata", "scenarios")

// scenario is one behavioural scenario and its program kinds.
type scenario struct {
	// dir is the directory under testdata/scenarios.
	dir string
	// number is the scenario's number in the list of behavioural scenarios.
	number int
	// registry makes the untyped node types of spec.json, counting into
	// fx: the spec kind, and the generated kind through its adapter.
	registry func(fx *Effects) runtime.Registry
	// code builds the graph in Go.
	code func(fx *Effects, opts ...runtime.Option) (*runtime.Graph[runtime.Values, runtime.Values], error)
	// pkg is the generated package.
	pkg generatedPackage
	// codeToSpec is what runtime.ToSpec says of the code-built graph: ""
	// when it gives spec.json back, else a part of its refusal (the graph
	// uses something a document cannot hold).
	codeToSpec string
	// variants are the runs files and the options they run with.
	variants []variant
}

// variant is one runs file of a scenario and the options it runs with.
type variant struct {
	// name names the variant in test names (default: the runs file).
	name    string
	runs    string
	graph   []runtime.Option
	run     []runtime.RunOption
	retries []int // node_retry events expected per run (nil: not checked)
}

// label names v in test names.
func (v variant) label() string {
	if v.name != "" {
		return v.name
	}
	return strings.TrimSuffix(v.runs, ".json")
}

// generatedPackage is what the scenarios need of a generated package.
type generatedPackage struct {
	// typed runs cases with the hand-written typed nodes.
	typed func(graph []runtime.Option, run []runtime.RunOption) ProgramFunc
	// viaRegistry runs cases with nodes from a registry, through the
	// package's FromRegistry adapter.
	viaRegistry func(reg func(*Effects) runtime.Registry, graph []runtime.Option, run []runtime.RunOption) ProgramFunc
	// toSpec is runtime.ToSpec of the package's graph.
	toSpec func() (*spec.Graph, error)
}

// packageOf describes a generated package by its New, FromRegistry and
// UpdateOf and the hand-written typed nodes (counting into fx).
func packageOf[S, U, N any](
	newGraph func(N, ...runtime.Option) (*runtime.Graph[S, U], error),
	fromRegistry func(runtime.Registry) N,
	updateOf func(runtime.Values) U,
	typedNodes func(fx *Effects) N,
) generatedPackage {
	return generatedPackage{
		typed: func(graph []runtime.Option, run []runtime.RunOption) ProgramFunc {
			return TypedProgram(newGraph, typedNodes, updateOf, graph, run)
		},
		viaRegistry: func(reg func(*Effects) runtime.Registry, graph []runtime.Option, run []runtime.RunOption) ProgramFunc {
			return TypedProgram(newGraph, func(fx *Effects) N { return fromRegistry(reg(fx)) }, updateOf, graph, run)
		},
		toSpec: func() (*spec.Graph, error) {
			g, err := newGraph(typedNodes(NewEffects()))
			if err != nil {
				return nil, err
			}
			return runtime.ToSpec(g)
		},
	}
}

// document reads the scenario's spec.json.
func (s scenario) document(t *testing.T) *spec.Graph {
	t.Helper()
	path := filepath.Join(scenarioDir, s.dir, "spec.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, diags := spec.Decode(path, data)
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	return doc
}

// load reads a runs file as a multi-run case on the scenario's spec.
func (s scenario) load(t *testing.T, runs string) *Case {
	t.Helper()
	specData, err := os.ReadFile(filepath.Join(scenarioDir, s.dir, "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(scenarioDir, s.dir, runs)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if _, ok := m["spec"]; ok {
		t.Fatalf("%s: a scenario's runs file has no spec (it is spec.json beside it)", path)
	}
	m["spec"] = specData
	whole, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCase(path, whole)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Multi() {
		t.Fatalf("%s: a scenario's runs file needs \"runs\"", path)
	}
	return c
}

// programs returns the scenario's program kinds for one variant, by name.
func (s scenario) programs(t *testing.T, v variant) map[string]ProgramFunc {
	doc := s.document(t)
	return map[string]ProgramFunc{
		"spec": func(ctx context.Context, c *Case, fx *Effects, cp runtime.Checkpointer) []Observation {
			g, err := runtime.FromSpec(doc, s.registry(fx), v.graph...)
			if err != nil {
				return Invalid(err)
			}
			return Drive(ctx, g, c, fx, cp, DecodeValues, v.run...)
		},
		"code": func(ctx context.Context, c *Case, fx *Effects, cp runtime.Checkpointer) []Observation {
			g, err := s.code(fx, v.graph...)
			if err != nil {
				return Invalid(err)
			}
			return Drive(ctx, g, c, fx, cp, DecodeValues, v.run...)
		},
		"generated":          s.pkg.typed(v.graph, v.run),
		"generated-registry": s.pkg.viaRegistry(s.registry, v.graph, v.run),
	}
}

// scenarioKinds are the program kinds every scenario runs through.
var scenarioKinds = []string{"spec", "code", "generated", "generated-registry"}

// runScenario runs every variant of s through every kind on every backend.
func runScenario(t *testing.T, s scenario) {
	for _, v := range s.variants {
		c := s.load(t, v.runs)
		progs := s.programs(t, v)
		for _, kind := range scenarioKinds {
			for _, name := range BackendNames {
				t.Run(v.label()+"/"+kind+"/"+name, func(t *testing.T) {
					b, err := OpenBackend(name)
					if err != nil {
						t.Fatal(err)
					}
					defer b.Close()
					if why := b.SkipReason(c); why != "" {
						t.Skip(why)
					}
					cp := b.New()
					defer closeCheckpointer(cp)
					got := progs[kind](t.Context(), c, NewEffects(), cp)
					if d := Compare(c, got); len(d) > 0 {
						t.Errorf("%s through the %s kind:\n%s", c.File, kind, strings.Join(d, "\n"))
					}
					for i, want := range v.retries {
						if i < len(got) && got[i].Retries != want {
							t.Errorf("runs[%d]: %d node_retry events, want %d", i, got[i].Retries, want)
						}
					}
				})
			}
		}
	}
}

// TestScenarios runs each behavioural scenario but the round trip (6)
// through every program kind; see scenarios for the list.
func TestScenarios(t *testing.T) {
	for _, s := range scenarios {
		t.Run(s.dir, func(t *testing.T) { runScenario(t, s) })
	}
}

// TestScenarioSpecRoundTrip is scenario 6: every scenario's graph, however
// it was built, is stored back as its spec (runtime.ToSpec gives a document
// value-equal to spec.json), except a code-built graph that uses what a
// document cannot hold (a router), which ToSpec refuses, naming it.
func TestScenarioSpecRoundTrip(t *testing.T) {
	for _, s := range scenarios {
		t.Run(s.dir, func(t *testing.T) {
			doc := s.document(t)
			check := func(kind string, got *spec.Graph, err error) {
				t.Helper()
				if err != nil {
					t.Errorf("%s: ToSpec: %v", kind, err)
					return
				}
				if !spec.Equal(got, doc) {
					gotJSON, _ := json.Marshal(got)
					wantJSON, _ := json.Marshal(doc)
					t.Errorf("%s: ToSpec is not spec.json:\n got %s\nwant %s", kind, gotJSON, wantJSON)
				}
			}
			g, err := runtime.FromSpec(doc, s.registry(NewEffects()))
			if err != nil {
				t.Fatal(err)
			}
			got, err := runtime.ToSpec(g)
			check("spec", got, err)
			got, err = s.pkg.toSpec()
			check("generated", got, err)
			code, err := s.code(NewEffects())
			if err != nil {
				t.Fatal(err)
			}
			got, err = runtime.ToSpec(code)
			if s.codeToSpec == "" {
				check("code", got, err)
			} else if err == nil || !strings.Contains(err.Error(), s.codeToSpec) {
				t.Errorf("code: ToSpec = %v; want a refusal naming %q", err, s.codeToSpec)
			}
		})
	}
}
