package bench

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/bench/graphs"
	"github.com/ilmek-go/ilmek/bench/workload"
)

// subgraphCases are the two programs BenchmarkSubgraph runs side by side:
// chain-100 whose middle node runs a generated chain-100 as a subgraph, and
// chain-200, both generated, both 200 supersteps in all. chain-200 is
// generated when the benchmarks run (-tags bigbench); without the tag its
// case skips.
func subgraphCases() []struct {
	name string
	w    workload.Workload // the recursion limit and the outcome's check
	p    func() (workload.Program, error)
} {
	chain200 := workload.Workload{Kind: "chain", N: 200}
	return []struct {
		name string
		w    workload.Workload
		p    func() (workload.Program, error)
	}{
		{"chain-100-with-child-chain-100", chain200, graphs.Subchain},
		{"chain-200", chain200, func() (workload.Program, error) { return graphs.Generated(chain200) }},
	}
}

// checkSubgraphOutcome checks one run of a subgraphCases program.
func checkSubgraphOutcome(t testing.TB, name string, w workload.Workload, o workload.Outcome) {
	t.Helper()
	if name == "chain-200" {
		if err := w.Check(o, true); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want := graphs.SubchainItems(); !slices.Equal(o.Items, want) {
		t.Fatalf("%s pushed %v, want %v", name, o.Items, want)
	}
	if o.Supersteps != 100 {
		t.Fatalf("%s took %d parent supersteps, want 100", name, o.Supersteps)
	}
}

// TestSubgraphProgram runs the generated parent with its generated child
// once: the child's items arrive in the middle, in order.
func TestSubgraphProgram(t *testing.T) {
	for _, c := range subgraphCases() {
		p, err := c.p()
		if errors.Is(err, workload.ErrNotExpressible) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		r, err := workload.NewRunner(c.w, p, "none", "")
		if err != nil {
			t.Fatal(err)
		}
		o, err := r.Run(t.Context())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		checkSubgraphOutcome(t, c.name, c.w, o)
	}
}

// BenchmarkSubgraph runs, side by side in one run, the generated chain-100
// whose middle node is the generated chain-100 and the generated chain-200,
// without a checkpointer: the cost of the subgraph boundary
// (BENCHMARKS.md, "Graphs inside graphs"). ns/superstep counts the 200
// supersteps of each.
func BenchmarkSubgraph(b *testing.B) {
	for _, c := range subgraphCases() {
		b.Run(c.name+"/generated/none", func(b *testing.B) {
			p, err := c.p()
			if errors.Is(err, workload.ErrNotExpressible) {
				b.Skip(err)
			}
			if err != nil {
				b.Fatal(err)
			}
			r, err := workload.NewRunner(c.w, p, "none", "")
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			o, err := r.Run(ctx)
			if err != nil {
				b.Fatal(err)
			}
			checkSubgraphOutcome(b, c.name, c.w, o)
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if _, err := r.Run(ctx); err != nil {
					b.Fatal(err)
				}
			}
			cpu = cpuTime() - cpu
			units := float64(b.N) * 200
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/units, "ns/superstep")
			b.ReportMetric(float64(cpu.Nanoseconds())/units, "cpu-ns/superstep")
		})
	}
}

// BenchmarkSubgraphRatio runs the two programs of BenchmarkSubgraph
// alternately, one run of each per iteration, and reports the parent with
// its child's wall time over chain-200's (x_chain200), the figure the 1.5×
// target bounds: the two runs of an iteration share whatever load the
// machine has at that moment. It needs -tags bigbench (chain-200).
func BenchmarkSubgraphRatio(b *testing.B) {
	var runners []*workload.Runner
	for _, c := range subgraphCases() {
		p, err := c.p()
		if errors.Is(err, workload.ErrNotExpressible) {
			b.Skip(err)
		}
		if err != nil {
			b.Fatal(err)
		}
		r, err := workload.NewRunner(c.w, p, "none", "")
		if err != nil {
			b.Fatal(err)
		}
		o, err := r.Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		checkSubgraphOutcome(b, c.name, c.w, o)
		runners = append(runners, r)
	}
	ctx := context.Background()
	var took [2]time.Duration
	for b.Loop() {
		for i, r := range runners {
			t0 := time.Now()
			if _, err := r.Run(ctx); err != nil {
				b.Fatal(err)
			}
			took[i] += time.Since(t0)
		}
	}
	b.ReportMetric(float64(took[0])/float64(took[1]), "x_chain200")
}
