package postgres_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/internal/store/storetest"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

// chat is one turn of a chat: the user's message is folded in, the reply
// node appends its answer; a thread grows by two messages a turn.
func chat(b *testing.B) *runtime.Graph[runtime.Values, runtime.Values] {
	g, err := runtime.NewBuilder("chat").Channel("messages", spec.Append).
		Node("reply", func(ctx *runtime.Ctx, v runtime.Values) (runtime.Values, error) {
			msgs, _ := v["messages"].([]any)
			return runtime.Values{"messages": fmt.Sprintf("reply %d: you said %v", len(msgs), msgs[len(msgs)-1])}, nil
		}).
		Edge(spec.Start, "reply").Compile()
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// timed records the latency of every Put (a superstep's commit).
type timed struct {
	runtime.Checkpointer
	mu  sync.Mutex
	lat []time.Duration
}

func (t *timed) Put(ctx context.Context, cp *runtime.Checkpoint, done []string) error {
	start := time.Now()
	err := t.Checkpointer.Put(ctx, cp, done)
	d := time.Since(start)
	t.mu.Lock()
	t.lat = append(t.lat, d)
	t.mu.Unlock()
	return err
}

func (t *timed) report(b *testing.B) {
	slices.Sort(t.lat)
	if len(t.lat) == 0 {
		return
	}
	b.ReportMetric(float64(t.lat[len(t.lat)/2].Microseconds()), "p50-commit-µs")
	b.ReportMetric(float64(t.lat[len(t.lat)*99/100].Microseconds()), "p99-commit-µs")
}

// benchBackends are the durable checkpointers compared: PostgreSQL (its
// default settings: a commit waits for the server's WAL flush) and SQLite
// (default synchronous FULL), each on this machine.
func benchBackends(b *testing.B) map[string]func(*testing.B) runtime.Checkpointer {
	return map[string]func(*testing.B) runtime.Checkpointer{
		"postgres": func(b *testing.B) runtime.Checkpointer { return openStore(b, "bench") },
		"sqlite": func(b *testing.B) runtime.Checkpointer {
			s, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		},
	}
}

// BenchmarkDurableSupersteps runs chain-100 (one op: a 100-superstep run
// on a new thread) and chat (one op: a one-superstep turn on one of 64
// threads that grow as they talk) with 1, 2 and 4 concurrent runners
// ("workers": goroutines of one process, each running its own threads),
// on PostgreSQL and SQLite, and reports durable supersteps per second and
// the p50/p99 latency of a superstep's commit.
func BenchmarkDurableSupersteps(b *testing.B) {
	dsn(b)
	for _, backend := range []string{"postgres", "sqlite"} {
		for _, work := range []string{"chain100", "chat"} {
			for _, workers := range []int{1, 2, 4} {
				b.Run(fmt.Sprintf("%s/%s/workers=%d", work, backend, workers), func(b *testing.B) {
					cp := &timed{Checkpointer: benchBackends(b)[backend](b)}
					var g *runtime.Graph[runtime.Values, runtime.Values]
					per := 1
					if work == "chain100" {
						g, per = storetest.Chain(b, "chain", 100, false), 100
					} else {
						g = chat(b)
					}
					var (
						mu   sync.Mutex
						next int
						errs []error
					)
					take := func() (int, bool) {
						mu.Lock()
						defer mu.Unlock()
						if next >= b.N {
							return 0, false
						}
						next++
						return next, true
					}
					b.ResetTimer()
					var wg sync.WaitGroup
					for w := range workers {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for {
								i, ok := take()
								if !ok {
									return
								}
								thread := fmt.Sprint("t", i)
								var in runtime.Values
								if work == "chat" {
									// each worker talks on its own 16 threads
									thread = fmt.Sprintf("w%d-t%d", w, i%16)
									in = runtime.Values{"messages": fmt.Sprint("message ", i)}
								}
								res, err := g.Thread(cp, thread).Invoke(context.Background(), in, runtime.WithRecursionLimit(200))
								if err == nil && res.Supersteps != per {
									err = fmt.Errorf("%d supersteps, want %d", res.Supersteps, per)
								}
								if err != nil {
									mu.Lock()
									errs = append(errs, err)
									mu.Unlock()
									return
								}
							}
						}()
					}
					wg.Wait()
					b.StopTimer()
					if len(errs) > 0 {
						b.Fatal(errs[0])
					}
					b.ReportMetric(float64(b.N*per)/b.Elapsed().Seconds(), "supersteps/s")
					cp.report(b)
				})
			}
		}
	}
}
