package gen

import (
	"fmt"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/spec"
)

// deskDoc is a parent whose node "refund" runs child graph "refund".
const deskDoc = `{"name": "desk",
  "channels": {"order": {}, "status": {}, "log": {"reducer": "append"}},
  "nodes": [{"id": "intake", "type": "triage"},
    {"id": "refund", "type": "subgraph", "config": {"graph": "refund", "in": {"order": "order"}, "out": {"status": "decision", "log": "trail"}}},
    {"id": "reply", "type": "respond"}],
  "edges": [{"from": "__start__", "to": "intake"}, {"from": "intake", "to": "refund"}, {"from": "refund", "to": "reply"}, {"from": "reply", "to": "__end__"}]}`

// refundDoc is the child; extra is spliced into its nodes.
func refundDoc(extra string) string {
	return `{"name": "refund",
  "channels": {"order": {}, "decision": {}, "trail": {"reducer": "append"}},
  "nodes": [{"id": "check", "type": "lookup"}, {"id": "approve", "type": "approval"}` + extra + `],
  "edges": [{"from": "__start__", "to": "check"}, {"from": "check", "to": "approve"}, {"from": "approve", "to": "__end__"}]}`
}

// deskMain implements the parent's Nodes and, through SubgraphRefund, the
// child's: the application of a generated parent and child.
const deskMain = `package main

import (
	"example.com/tmp/deskgraph"
	"example.com/tmp/refundgraph"
)

type app struct{}

func (app) Triage(deskgraph.NodeID, deskgraph.TriageConfig) (deskgraph.Node, error)     { return nil, nil }
func (app) Respond(deskgraph.NodeID, deskgraph.RespondConfig) (deskgraph.Node, error)   { return nil, nil }
func (app) SubgraphRefund() refundgraph.Nodes                                           { return child{} }

type child struct{}

func (child) Lookup(refundgraph.NodeID, refundgraph.LookupConfig) (refundgraph.Node, error)     { return nil, nil }
func (child) Approval(refundgraph.NodeID, refundgraph.ApprovalConfig) (refundgraph.Node, error) { return nil, nil }

func main() { _, _ = deskgraph.New(app{}) }
`

// channelBindings binds each named channel to a basic Go type.
func channelBindings(chans map[string]types.BasicKind) *Bindings {
	b := &Bindings{Channels: map[string]Binding{}}
	for name, k := range chans {
		b.Channels[name] = Binding{Expr: types.Typ[k].Name(), Type: types.Typ[k]}
	}
	return b
}

// TestSubgraphWiringFailsBuild builds a throwaway module holding a
// generated parent, its generated child and an application of both: a
// mapping between channels whose Go types differ fails the build at the
// generated line of that mapping, and only there; a node type added to the
// child fails the application's build where it hands the parent the
// child's nodes.
func TestSubgraphWiringFailsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	cases := []struct {
		name       string
		childOrder types.BasicKind
		extra      string
		file, line string // where the build fails; "" builds
	}{
		{name: "same types build", childOrder: types.String},
		{name: "mismatched mapping", childOrder: types.Int, file: "deskgraph/graph.gen.go", line: "in.Order = &s.Order"},
		{name: "new node type in the child", childOrder: types.String, extra: `, {"id": "notify", "type": "notify"}`, file: "main.go", line: "return child{}"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			child, diags := spec.Decode("refund.json", []byte(refundDoc(tc.extra)))
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			childFiles, diags := Generate(child, Options{Package: "refundgraph", PkgPath: "example.com/tmp/refundgraph", Source: "../refund.json",
				Bindings: channelBindings(map[string]types.BasicKind{"order": tc.childOrder, "decision": types.String})})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			parent, diags := spec.Decode("desk.json", []byte(deskDoc))
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			files, diags := Generate(parent, Options{Package: "deskgraph", PkgPath: "example.com/tmp/deskgraph", Source: "../desk.json",
				Bindings:  channelBindings(map[string]types.BasicKind{"order": types.String, "status": types.String}),
				Subgraphs: map[string]SubgraphPackage{"refund": {Path: "example.com/tmp/refundgraph", Doc: child}}})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			dir := tempModule(t)
			writeFiles(t, filepath.Join(dir, "refundgraph"), childFiles)
			writeFiles(t, filepath.Join(dir, "deskgraph"), files)
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(deskMain), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := goBuild(t, dir)
			if tc.file == "" {
				if err != nil {
					t.Fatalf("go build: %v\n%s", err, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("go build succeeded, want a failure at %s", tc.line)
			}
			src, rerr := os.ReadFile(filepath.Join(dir, tc.file))
			if rerr != nil {
				t.Fatal(rerr)
			}
			n := lineOf(string(src), tc.line)
			if n == 0 {
				t.Fatalf("%s has no line %q", tc.file, tc.line)
			}
			errLines := regexp.MustCompile(`(?m)^\S+\.go:\d+:\d+: `).FindAllString(out, -1)
			if len(errLines) != 1 || !strings.HasPrefix(strings.TrimPrefix(errLines[0], "./"), fmt.Sprintf("%s:%d:", tc.file, n)) {
				t.Errorf("go build failed, but not only at %s:%d (%s):\n%s", tc.file, n, tc.line, out)
			}
		})
	}
}

// lineOf is the 1-based number of the first line of src containing s, or 0.
func lineOf(src, s string) int {
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	return 0
}

// TestSubgraphWiringDiagnostics: a subgraph node whose child has no
// generated package, a mapped channel the child does not declare, and a
// node type taking the child's Nodes method are placed errors.
func TestSubgraphWiringDiagnostics(t *testing.T) {
	child, diags := spec.Decode("refund.json", []byte(refundDoc("")))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	pkg := SubgraphPackage{Path: "example.com/tmp/refundgraph", Doc: child}
	cases := []struct {
		name      string
		doc       string
		subgraphs map[string]SubgraphPackage
		path, msg string
	}{
		{"no package", deskDoc, map[string]SubgraphPackage{"other": pkg}, "nodes[1].config.graph", `graph "refund" has no generated package`},
		{"unknown child channel", strings.Replace(deskDoc, `"status": "decision"`, `"status": "verdict"`, 1), map[string]SubgraphPackage{"refund": pkg}, "nodes[1].config.out.status", `graph "refund" has no channel "verdict"`},
		{"method clash", strings.Replace(deskDoc, `"type": "triage"`, `"type": "subgraph_refund"`, 1), map[string]SubgraphPackage{"refund": pkg}, "nodes[1].config.graph", "converts to SubgraphRefund"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, diags := spec.Decode("desk.json", []byte(tc.doc))
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			diags = Check(g, Options{Package: "deskgraph", Subgraphs: tc.subgraphs})
			for _, d := range diags {
				if d.Path == tc.path && strings.Contains(d.Message, tc.msg) {
					return
				}
			}
			t.Errorf("no error at %s containing %q in\n%v", tc.path, tc.msg, diags)
		})
	}
}

// TestSubgraphWiringPassesLimit: a subgraph node's config.limit reaches
// the child run as runtime.WithRecursionLimit on the RunSubgraph line; a
// node without one passes no option (the runtime's default).
func TestSubgraphWiringPassesLimit(t *testing.T) {
	child, diags := spec.Decode("refund.json", []byte(refundDoc("")))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"limit", strings.Replace(deskDoc, `"graph": "refund",`, `"graph": "refund", "limit": 40,`, 1), "runtime.RunSubgraph(ctx, child, refundgraph.State{}.With(in), runtime.WithRecursionLimit(40))"},
		{"default", deskDoc, "runtime.RunSubgraph(ctx, child, refundgraph.State{}.With(in))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, diags := spec.Decode("desk.json", []byte(tc.doc))
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			files, diags := Generate(g, Options{Package: "deskgraph", PkgPath: "example.com/tmp/deskgraph", Source: "../desk.json",
				Bindings:  channelBindings(map[string]types.BasicKind{"order": types.String, "status": types.String}),
				Subgraphs: map[string]SubgraphPackage{"refund": {Path: "example.com/tmp/refundgraph", Doc: child}}})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			var all strings.Builder
			for _, f := range files {
				all.Write(f.Data)
			}
			if !strings.Contains(all.String(), tc.want) {
				t.Errorf("the generated code has no line %q", tc.want)
			}
		})
	}
}
