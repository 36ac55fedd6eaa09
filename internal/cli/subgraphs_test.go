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
