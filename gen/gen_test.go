package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/spec"
)

// shuffled re-encodes JSON with every object's keys in a random order.
func shuffled(t *testing.T, data []byte, r *rand.Rand) []byte {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	var write func(v any)
	write = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			b.WriteString("{\n")
			for i, k := range keys {
				if i > 0 {
					b.WriteString(",\n")
				}
				kb, _ := json.Marshal(k)
				b.Write(kb)
				b.WriteString(": ")
				write(v[k])
			}
			b.WriteString("}")
		case []any:
			b.WriteString("[")
			for i, e := range v {
				if i > 0 {
					b.WriteString(", ")
				}
				write(e)
			}
			b.WriteString("]")
		case json.Number:
			b.WriteString(string(v))
		default:
			vb, _ := json.Marshal(v)
			b.Write(vb)
		}
	}
	write(v)
	return b.Bytes()
}

// TestKeyOrderIrrelevant generates every golden case from its spec with
// the object keys shuffled and expects the committed bytes.
func TestKeyOrderIrrelevant(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for name, inv := range goldenCases(t) {
		data, err := os.ReadFile(filepath.Join(inv.dir, inv.specPath))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := inv.generate(t)
		for i := range 3 {
			g, diags := spec.Decode(inv.specPath, shuffled(t, data, r))
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got, diags := inv.generateGraph(t, g)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s, shuffle %d: output depends on key order:\n%s", name, i, diff)
			}
		}
	}
}

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
