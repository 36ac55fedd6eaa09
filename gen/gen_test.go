package gen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/spec"
)

// bigSpec is a spec of n nodes and 3n edges over 20 channels of every
// reducer, with guards of every operator.
func bigSpec(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"name": "big", "channels": {`)
	for i := range 20 {
		if i > 0 {
			b.WriteString(",")
		}
		red := []string{`{}`, `{"reducer": "append"}`, `{"reducer": "merge"}`, `{"reducer": "last_write"}`}[i%4]
		fmt.Fprintf(&b, `"c%d": %s`, i, red)
	}
	b.WriteString(`}, "nodes": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id": "n%d", "type": "t%d", "config": {"name": "node %d", "weight": %d, "tags": ["a", "b"], "ratio": %d.5}}`, i, i%10, i, i, i)
	}
	b.WriteString(`], "edges": [{"from": "__start__", "to": "n0"}`)
	ops := []string{`"eq": "x"`, `"neq": 3`, `"in": ["a", 1, null]`, `"gt": 2`, `"lt": 5`, `"truthy": true`}
	for i := range n {
		for k := 1; k <= 3; k++ {
			if i == 0 && k == 1 {
				continue
			}
			to := fmt.Sprintf(`"n%d"`, (i+k)%n)
			if i+k >= n {
				to = `"__end__"`
			}
			if k == 1 {
				fmt.Fprintf(&b, `, {"from": "n%d", "to": %s}`, i, to)
				continue
			}
			fmt.Fprintf(&b, `, {"from": "n%d", "to": %s, "when": {"channel": "c%d", %s}}`, i, to, (i+k)%20, ops[(i+k)%len(ops)])
		}
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkGenerate1000 decodes, checks and generates a 1,000-node,
// 3,000-edge spec.
func BenchmarkGenerate1000(b *testing.B) {
	data := bigSpec(1000)
	g, diags := spec.Decode("big.json", data)
	if diags.HasErrors() {
		b.Fatal(diags.Errors()[:1])
	}
	if len(g.Nodes) != 1000 || len(g.Edges) != 3000 {
		b.Fatalf("spec has %d nodes, %d edges", len(g.Nodes), len(g.Edges))
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		g, diags := spec.Decode("big.json", data)
		if diags.HasErrors() {
			b.Fatal(diags)
		}
		if _, diags := Generate(g, Options{Package: "big", Source: "big.json"}); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}
