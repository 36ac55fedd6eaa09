package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckSubgraphs runs ilmekgen check with --subgraph: the spec's
// subgraph nodes are checked against the child documents, with placed
// errors, and a bad flag is a usage error.
func TestCheckSubgraphs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("refund.json", `{"name": "refund", "channels": {"order": {}, "status": {}, "log": {"reducer": "append"}},
 "nodes": [{"id": "n", "type": "t"}], "edges": [{"from": "__start__", "to": "n"}, {"from": "n", "to": "__end__"}]}`)
	write("loop.json", `{"name": "loop", "channels": {},
 "nodes": [{"id": "s", "type": "subgraph", "config": {"graph": "support"}}], "edges": [{"from": "__start__", "to": "s"}, {"from": "s", "to": "__end__"}]}`)
	doc := func(config string) string {
		return `{"name": "support", "channels": {"order": {}, "status": {}},
 "nodes": [{"id": "r", "type": "subgraph", "config": ` + config + `}],
 "edges": [{"from": "__start__", "to": "r"}, {"from": "r", "to": "__end__"}]}`
	}
	write("ok.json", doc(`{"graph": "refund", "in": {"order": "order"}, "out": {"status": "status"}}`))
	write("badchan.json", doc(`{"graph": "refund", "in": {"orderz": "order"}}`))
	write("reducer.json", doc(`{"graph": "refund", "in": {"log": "order"}}`))
	write("unknown.json", doc(`{"graph": "nope"}`))
	write("cycle.json", doc(`{"graph": "loop"}`))
	write("two.json", `{"name": "support", "channels": {"order": {}},
 "nodes": [{"id": "r", "type": "subgraph", "config": {"graph": "refund"}}, {"id": "l", "type": "subgraph", "config": {"graph": "plain"}}],
 "edges": [{"from": "__start__", "to": "r"}, {"from": "r", "to": "l"}, {"from": "l", "to": "__end__"}]}`)
	write("plain.json", `{"name": "plain", "channels": {}, "nodes": [{"id": "n", "type": "t"}], "edges": [{"from": "__start__", "to": "n"}, {"from": "n", "to": "__end__"}]}`)
	write("bindings.json", `{"subgraphs": {"refund": {"spec": "refund.json", "package": "example.com/refundgraph"}}}`)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"ok", []string{"check", "--subgraph", "refund=refund.json", "ok.json"}, 0, nil},
		{"no flag checks nothing", []string{"check", "badchan.json"}, 0, nil},
		{"unknown child channel", []string{"check", "--subgraph", "refund=refund.json,example.com/refundgraph", "badchan.json"}, 1,
			[]string{`badchan.json:2:91: `, `nodes[0].config.in.orderz: node "r": graph "refund" has no channel "orderz"`}},
		{"reducer mismatch", []string{"check", "--subgraph", "refund=refund.json", "reducer.json"}, 1, []string{`nodes[0].config.in.log`, `(append) cannot start from parent channel "order" (last_write)`}},
		{"unregistered child", []string{"check", "--subgraph", "refund=refund.json", "unknown.json"}, 1, []string{`nodes[0].config.graph`, `graph "nope" is not registered`}},
		{"cycle", []string{"check", "--subgraph", "loop=loop.json", "cycle.json"}, 1, []string{`graph "support" contains itself through subgraph "loop"`}},
		{"flag misnames the child", []string{"check", "--subgraph", "other=refund.json", "ok.json"}, 1, []string{`--subgraph other names a document called "refund"`}},
		{"bad flag", []string{"check", "--subgraph", "refund", "ok.json"}, 2, []string{"want NAME=SPEC"}},
		{"wired child", []string{"check", "--subgraph", "refund=refund.json,example.com/refundgraph", "ok.json"}, 0, nil},
		{"bindings entry", []string{"check", "--bindings", "bindings.json", "badchan.json"}, 1, []string{`graph "refund" has no channel "orderz"`}},
		{"bindings entry and flag", []string{"check", "--bindings", "bindings.json", "--subgraph", "refund=refund.json", "ok.json"}, 2, []string{`graph "refund" is also in the subgraphs of bindings.json`}},
		{"one child without a package", []string{"check", "--subgraph", "refund=refund.json,example.com/refundgraph", "--subgraph", "plain=plain.json", "two.json"}, 1,
			[]string{`nodes[1].config.graph: subgraph node "l": graph "plain" has no generated package`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := ilmekgen(t, dir, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			for _, w := range tt.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestGenWiresSubgraphs runs ilmekgen gen with a child's import path, from
// --subgraph and from the bindings' "subgraphs": the parent's Nodes asks
// for the child's Nodes and New builds the node from the child's package.
func TestGenWiresSubgraphs(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"child/refund.json": `{"name": "refund", "channels": {"order": {}, "status": {}},
 "nodes": [{"id": "n", "type": "t"}], "edges": [{"from": "__start__", "to": "n"}, {"from": "n", "to": "__end__"}]}`,
		"support.json": `{"name": "support", "channels": {"order": {}, "status": {}},
 "nodes": [{"id": "r", "type": "subgraph", "config": {"graph": "refund", "in": {"order": "order"}, "out": {"status": "status"}}}],
 "edges": [{"from": "__start__", "to": "r"}, {"from": "r", "to": "__end__"}]}`,
		"bindings.json": `{"subgraphs": {"refund": {"spec": "child/refund.json", "package": "example.com/refundgraph"}}}`,
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		args []string
	}{
		{"flag", []string{"gen", "-o", "a", "--subgraph", "refund=child/refund.json,example.com/refundgraph", "support.json"}},
		{"bindings", []string{"gen", "-o", "b", "--bindings", "bindings.json", "support.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := ilmekgen(t, dir, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			src, err := os.ReadFile(filepath.Join(dir, tt.args[2], "graph.gen.go"))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []string{"SubgraphRefund() refundgraph.Nodes", "subgraphR(n.SubgraphRefund(), &children)", "in.Order = &s.Order", "u.Status = &out.Status"} {
				if !strings.Contains(string(src), w) {
					t.Errorf("graph.gen.go lacks %q", w)
				}
			}
			if strings.Contains(string(src), "Subgraph(id NodeID") {
				t.Errorf("graph.gen.go still has a Nodes method for the node type subgraph")
			}
		})
	}
}
