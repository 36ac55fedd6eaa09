package bench

import (
	"context"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/bench/workload"
)

// TestWorkloads runs every workload once on every engine and checkpointer
// and checks what it produced.
func TestWorkloads(t *testing.T) {
	for _, name := range []string{"chain-100", "fanout-100", "loop-100", "fanoutsend-100", "fanoutsend-7", "chain-200"} {
		w, err := workload.Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range engines {
			if _, err := e.program(w); errors.Is(err, workload.ErrNotExpressible) {
				continue
			}
			for _, ck := range e.ckpts {
				if testing.Short() && strings.HasPrefix(ck, "sqlite") {
					continue
				}
				t.Run(name+"/"+e.name+"/"+ck, func(t *testing.T) { runOnce(t, e, w, ck) })
			}
		}
	}
}

// TestNotExpressible checks the cases the harness reports with exit 3.
func TestNotExpressible(t *testing.T) {
	for _, tc := range []struct {
		engine, workload string
	}{
		{"generated", "chain-57"},
		{"generated", "fanout-3"},
		{"eino", "fanoutsend-100"},
	} {
		w, err := workload.Parse(tc.workload)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range engines {
			if e.name != tc.engine {
				continue
			}
			if _, err := e.program(w); !errors.Is(err, workload.ErrNotExpressible) {
				t.Errorf("%s on %s: err = %v, want ErrNotExpressible", tc.workload, tc.engine, err)
			}
		}
	}
}

var benchWorkloads = flag.String("workloads", "chain-100,chain-200,chain-1000,chain-2000,fanout-100,fanout-1000,fanout-2000,loop-100,loop-1000,fanoutsend-100,fanoutsend-1000",
	"comma-separated workloads BenchmarkWorkloads runs")

// sqliteSizes are the workloads run with SQLite: one durable commit per
// superstep makes larger ones slow without saying more.
var sqliteSizes = map[string]bool{"chain-100": true, "chain-1000": true, "fanout-100": true, "loop-100": true, "fanoutsend-100": true}

// BenchmarkWorkloads runs every workload side by side on the generated
// program, the spec-built program and Eino, with each checkpointer they
// support: sub-benchmarks are named WORKLOAD/ENGINE/CKPT. Besides ns/op,
// B/op and allocs/op (per run) each reports ns per superstep (chain, loop)
// or per task (fanout, fanoutsend), in wall time and in process CPU time.
func BenchmarkWorkloads(b *testing.B) {
	for _, name := range strings.Split(*benchWorkloads, ",") {
		w, err := workload.Parse(name)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range engines {
			for _, ck := range e.ckpts {
				if strings.HasPrefix(ck, "sqlite") && !sqliteSizes[name] {
					continue
				}
				b.Run(name+"/"+e.name+"/"+ck, func(b *testing.B) { benchRun(b, e, w, ck) })
			}
		}
	}
}

// benchRun builds w's program on e (skipping what e cannot express), checks
// one run and times the others.
func benchRun(b *testing.B, e engine, w workload.Workload, ck string) {
	p, err := e.program(w)
	if errors.Is(err, workload.ErrNotExpressible) {
		b.Skip(err)
	}
	if err != nil {
		b.Fatal(err)
	}
	r, err := workload.NewRunner(w, p, ck, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	o, err := r.Run(ctx)
	if err == nil {
		err = w.Check(o, e.ordered(w))
	}
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		if _, err := r.Run(ctx); err != nil {
			b.Fatal(err)
		}
	}
	cpu = cpuTime() - cpu
	units := float64(b.N) * float64(w.Units())
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/units, "ns/"+w.Unit())
	// CPU time of the whole process (both cores, GC included) per unit: on
	// a machine shared with other work it is steadier than wall time.
	b.ReportMetric(float64(cpu.Nanoseconds())/units, "cpu-ns/"+w.Unit())
}
