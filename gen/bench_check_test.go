package gen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/spec"
)

// The benchmarks of this file measure `ilmekgen check` (spec.Decode then
// Check) on the three shapes that once took minutes — many channels, a long
// chain, many node types — each at 100,000, the default limit, and
// generation at two sizes, whose ratio shows that generation is not
// quadratic. Run them with
//
//	go test -run '^$' -bench 'Check|GenerateChain' -benchmem ./gen/

// manyChannels is a document with n channels, each guarding one edge.
func manyChannels(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"channels": {`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"c%d": {}`, i)
	}
	b.WriteString(`}, "nodes": [{"id": "a", "type": "t"}], "edges": [{"from": "__start__", "to": "a"}, {"from": "a", "to": "__end__"}]}`)
	return []byte(b.String())
}

// chain is a document of n nodes of one type, each leading to the next.
func chain(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"nodes": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"id": "n%d", "type": "t"}`, i)
	}
	b.WriteString(`], "edges": [{"from": "__start__", "to": "n0"}`)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, `, {"from": "n%d", "to": "n%d"}`, i-1, i)
	}
	fmt.Fprintf(&b, `, {"from": "n%d", "to": "__end__"}]}`, n-1)
	return []byte(b.String())
}

// manyTypes is a document of n nodes, each of its own type, all entered
// from __start__.
func manyTypes(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"nodes": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"id": "n%d", "type": "t%d"}`, i, i)
	}
	b.WriteString(`], "edges": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"from": "__start__", "to": "n%d"}`, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func benchCheck(b *testing.B, data []byte) {
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		g, diags := spec.Decode("big.json", data)
		if diags.HasErrors() {
			b.Fatal(diags.Errors()[:1])
		}
		if diags := Check(g, Options{Package: "big"}); diags.HasErrors() {
			b.Fatal(diags.Errors()[:1])
		}
	}
}

// BenchmarkCheckChannels100k checks a document of 100,000 channels.
func BenchmarkCheckChannels100k(b *testing.B) { benchCheck(b, manyChannels(100000)) }

// BenchmarkCheckChain100k checks a chain of 100,000 nodes.
func BenchmarkCheckChain100k(b *testing.B) { benchCheck(b, chain(100000)) }

// BenchmarkCheckTypes100k checks 100,000 nodes of 100,000 node types.
func BenchmarkCheckTypes100k(b *testing.B) { benchCheck(b, manyTypes(100000)) }

func benchGenerate(b *testing.B, n int) {
	data := chain(n)
	g, diags := spec.Decode("big.json", data)
	if diags.HasErrors() {
		b.Fatal(diags.Errors()[:1])
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, diags := Generate(g, Options{Package: "big", Source: "big.json"}); diags.HasErrors() {
			b.Fatal(diags.Errors()[:1])
		}
	}
}

// BenchmarkGenerateChain5000 and BenchmarkGenerateChain10000 generate a
// chain of 5,000 and of 10,000 nodes; the second must take at most 2.2
// times the first.
func BenchmarkGenerateChain5000(b *testing.B)  { benchGenerate(b, 5000) }
func BenchmarkGenerateChain10000(b *testing.B) { benchGenerate(b, 10000) }

// TestCheckAgreesWithGenerate: Check reports exactly what Generate reports,
// for a document whose names clash and for one with a bad package name.
func TestCheckAgreesWithGenerate(t *testing.T) {
	for _, doc := range []string{
		`{"channels": {"a_b": {}, "a-b": {}}, "nodes": [{"id": "a", "type": "t"}], "edges": [{"from": "__start__", "to": "a"}]}`,
		`{"nodes": [{"id": "a", "type": "t"}, {"id": "lost", "type": "t"}], "edges": [{"from": "__start__", "to": "a"}]}`,
	} {
		g, diags := spec.Decode("doc.json", []byte(doc))
		if g == nil {
			t.Fatal(diags)
		}
		opts := Options{Package: "p"}
		if len(g.Channels) == 0 {
			opts.Package = "func"
		}
		_, want := Generate(g, opts)
		if got := Check(g, opts); !want.HasErrors() || len(got) != len(want) {
			t.Fatalf("Check = %v, Generate = %v", got, want)
		}
		for i := range want {
			if got := Check(g, opts); got[i] != want[i] {
				t.Errorf("Check[%d] = %v, Generate[%d] = %v", i, got[i], i, want[i])
			}
		}
	}
}
