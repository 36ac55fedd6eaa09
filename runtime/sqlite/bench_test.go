package sqlite_test

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

// chain10 is a chain of 10 nodes, each writing a channel: a run is 10
// supersteps and 11 checkpoints (the start and one per superstep).
func chain10(b *testing.B) *runtime.Graph[runtime.Values, runtime.Values] {
	bld := runtime.NewBuilder("chain10").Channel("n", "").Channel("trail", spec.Append)
	prev := spec.Start
	for i := range 10 {
		id := fmt.Sprintf("n%d", i)
		bld.Node(id, func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			return runtime.Values{"n": i, "trail": id}, nil
		})
		bld.Edge(prev, id)
		prev = id
	}
	g, err := bld.Compile()
	if err != nil {
		b.Fatal(err)
	}
	return g
}

type backend struct {
	name string
	open func(b *testing.B) runtime.Checkpointer
}

func sqliteBackend(name string, opts ...sqlite.Option) backend {
	return backend{name, func(b *testing.B) runtime.Checkpointer {
		s, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"), opts...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}}
}

var backends = []backend{
	{"memory", func(*testing.B) runtime.Checkpointer { return checkpoint.NewMemory() }},
	sqliteBackend("sqlite"),
	sqliteBackend("sqlite-sync-normal", sqlite.Synchronous("NORMAL")),
}

// reportSupersteps adds supersteps and checkpoints committed per second.
func reportSupersteps(b *testing.B, runs int64) {
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(runs*10)/secs, "supersteps/s")
	b.ReportMetric(float64(runs*11)/secs, "checkpoints/s")
}

// BenchmarkChain10 runs a 10-superstep graph to its end on a new thread per
// iteration (so each op is 10 supersteps, 11 checkpoints, a lease).
func BenchmarkChain10(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			g, cp := chain10(b), be.open(b)
			b.ReportAllocs()
			var n int64
			for b.Loop() {
				n++
				res, err := g.Thread(cp, fmt.Sprint("t", n)).Invoke(b.Context(), nil)
				if err != nil || res.Supersteps != 10 {
					b.Fatalf("run %d: %d supersteps, %v", n, res.Supersteps, err)
				}
			}
			reportSupersteps(b, n)
		})
	}
}

// BenchmarkChain10Parallel runs threads from GOMAXPROCS goroutines on one
// store: it measures the one-writer-connection design with and without the
// pool of read connections.
func BenchmarkChain10Parallel(b *testing.B) {
	for _, be := range []backend{
		sqliteBackend("sqlite-sync-normal", sqlite.Synchronous("NORMAL")),
		sqliteBackend("sqlite-sync-normal-one-conn", sqlite.Synchronous("NORMAL"), sqlite.ReadConns(0)),
	} {
		b.Run(be.name, func(b *testing.B) {
			g, cp := chain10(b), be.open(b)
			b.ReportAllocs()
			var n atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := n.Add(1)
					if _, err := g.Thread(cp, fmt.Sprint("t", id)).Invoke(b.Context(), nil); err != nil {
						b.Error(err)
						return
					}
				}
			})
			reportSupersteps(b, n.Load())
		})
	}
}
