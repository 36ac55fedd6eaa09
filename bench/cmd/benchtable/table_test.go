package main

import (
	"bytes"
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkWorkloads/chain-100/generated/none-2   1000   20000 ns/op   200.0 ns/superstep   190.0 cpu-ns/superstep   2344 B/op   16 allocs/op
BenchmarkWorkloads/chain-100/generated/none-2   1000   10000 ns/op   100.0 ns/superstep   110.0 cpu-ns/superstep   2344 B/op   16 allocs/op
BenchmarkWorkloads/chain-100/generated/none-2   1000   12000 ns/op   120.0 ns/superstep   115.0 cpu-ns/superstep   2344 B/op   16 allocs/op
BenchmarkWorkloads/chain-100/spec/none-2        1000   60000 ns/op   600.0 ns/superstep   590.0 cpu-ns/superstep   9000 B/op   400 allocs/op
BenchmarkWorkloads/chain-100/eino/none-2        100  1200000 ns/op 12000 ns/superstep 11000 cpu-ns/superstep 300000 B/op 3700 allocs/op
BenchmarkWorkloads/chain-100/generated/sqlite-2 10   40000000 ns/op 400000 ns/superstep 90000 cpu-ns/superstep 1 B/op 9000 allocs/op
BenchmarkWorkloads/fanout-1000/generated/none-2 100  700000 ns/op  699.0 ns/task  1200 cpu-ns/task  70000 B/op  1000 allocs/op
BenchmarkGenerate1000-2   6   150000000 ns/op   1.64 MB/s   150.0 ms/generate   74738992 B/op   1506311 allocs/op
BenchmarkSubgraph/chain-100-with-child-chain-100/generated/none-2  1000  250000 ns/op  250.0 cpu-ns/superstep  1250 ns/superstep  8313 B/op  38 allocs/op
BenchmarkSubgraph/chain-100-with-child-chain-100/generated/none-2  1000  140000 ns/op  250.0 cpu-ns/superstep  700 ns/superstep  8313 B/op  38 allocs/op
BenchmarkSubgraph/chain-100-with-child-chain-100/generated/none-2  1000  900000 ns/op  250.0 cpu-ns/superstep  4500 ns/superstep  8313 B/op  38 allocs/op
BenchmarkSubgraph/chain-200/generated/none-2  1000  100000 ns/op  190.0 cpu-ns/superstep  500 ns/superstep  4512 B/op  17 allocs/op
PASS
`

func TestTable(t *testing.T) {
	r, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	Write(&out, r)
	for _, want := range []string{
		"| chain-100 | none | superstep | 120 (115) | 0.16 | 600 (590) | 4.00 | 12000 (11000) | 37.00 | 5.0× | 100.0× | 20.0× |",
		"| chain-100 | sqlite | superstep | 400000 (90000) | 90.00 | – | – | – | – | – | – | – |",
		"| fanout-1000 | none | task | 699 (1200) | 1.00 |",
		"| generated chain-100, ns/superstep, no checkpointer (≤150) | 120ns | yes |",
		"| chain-100: Eino / generated (≥20×) | 100.00× | yes |",
		"| SQLite, generated chain-100: durable supersteps/s (≥2000) | 2500/s | yes |",
		"| generator, 1,000-node spec, ms (≤200) | 150ms | yes |",
		"| loop-1000: Eino / generated (≥20×) | not measured | |",
		// the median of the three repetitions (250,000 ns), not the last
		"| generated chain-100 whose middle node runs generated chain-100 / generated chain-200, whole run (≤1.5×) | 2.50× | no |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no line %q in\n%s", want, out.String())
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 2, 3}, 2.5}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
