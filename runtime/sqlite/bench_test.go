package sqlite_test

import (
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store/storetest"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

// chain10 is a chain of 10 nodes, each writing a channel: a run is 10
// supersteps and 11 checkpoints (the start and one per superstep).
func chain10(b *testing.B) *runtime.Graph[runtime.Values, runtime.Values] {
	return storetest.Chain(b, "chain10", 10, true)
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
// pool of read connections; and 16 threads at once at synchronous FULL,
// the default, which is what the group commit of runs' writes is for
// (commits that arrive during a flush share the next one).
func BenchmarkChain10Parallel(b *testing.B) {
	for _, tc := range []struct {
		be      backend
		threads int // 0: GOMAXPROCS
	}{
		{sqliteBackend("sqlite-sync-normal", sqlite.Synchronous("NORMAL")), 0},
		{sqliteBackend("sqlite-sync-normal-one-conn", sqlite.Synchronous("NORMAL"), sqlite.ReadConns(0)), 0},
		{sqliteBackend("sqlite-16-threads"), 16},
	} {
		b.Run(tc.be.name, func(b *testing.B) {
			g, cp := chain10(b), tc.be.open(b)
			b.ReportAllocs()
			if tc.threads > 0 {
				b.SetParallelism(max(1, tc.threads/goruntime.GOMAXPROCS(0)))
			}
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
