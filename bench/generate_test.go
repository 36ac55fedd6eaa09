package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/gen"
	"github.com/ilmek-go/ilmek/spec"
)

// bigSpec is a document of n nodes and 3n edges (n-1 plain edges in a
// chain and 2n guarded ones, over 20 channels of every reducer), shaped as
// gen's own BenchmarkGenerate1000 builds it.
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

// generateBig decodes, checks and generates the 1,000-node spec.
func generateBig(tb testing.TB, data []byte) []gen.File {
	g, diags := spec.Decode("big.json", data)
	if diags.HasErrors() {
		tb.Fatal(diags.Err())
	}
	files, diags := gen.Generate(g, gen.Options{Package: "big", Source: "big.json"})
	if diags.HasErrors() {
		tb.Fatal(diags.Err())
	}
	return files
}

// BenchmarkGenerate1000 parses, checks and generates a 1,000-node,
// 3,000-edge spec (the target is at most 200 ms).
func BenchmarkGenerate1000(b *testing.B) {
	data := bigSpec(1000)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		generateBig(b, data)
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/generate")
}

// BenchmarkGoBuild1000 times `go build` of the package generated from the
// 1,000-node spec, each iteration in a new directory of this module (so
// the build cache cannot answer for it; the runtime and its dependencies
// are cached, as in a developer's edit-build loop).
func BenchmarkGoBuild1000(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a package")
	}
	files := generateBig(b, bigSpec(1000))
	var total time.Duration
	for b.Loop() {
		total += goBuild(b, files)
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/build")
}

// goBuild writes files into a new package directory under internal/ and
// returns how long `go build` took on it.
func goBuild(tb testing.TB, files []gen.File) time.Duration {
	dir, err := os.MkdirTemp("internal", "gobuild-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	start := time.Now()
	out, err := exec.Command("go", "build", "./"+filepath.ToSlash(dir)).CombinedOutput()
	d := time.Since(start)
	if err != nil {
		tb.Fatalf("go build: %v\n%s", err, out)
	}
	return d
}
