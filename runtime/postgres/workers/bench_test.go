package workers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// BenchmarkWorkers measures the whole path through the queue: one op is a
// request for a 10- or 100-superstep run on a new thread, submitted,
// claimed by one of 1, 2 or 4 workers (one request at a time each), run
// durably and recorded; all b.N are submitted, then waited for.
func BenchmarkWorkers(b *testing.B) {
	for _, steps := range []int{10, 100} {
		b.Run(fmt.Sprintf("chain%d", steps), func(b *testing.B) { benchWorkers(b, steps) })
	}
}

func benchWorkers(b *testing.B, steps int) {
	g := chain(b, steps)
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			q := openQueue(b)
			startWorkers(b, q, map[string]workers.Runnable{"chain": workers.Graph(g, runtime.WithRecursionLimit(steps))}, n, workers.Concurrency(1))
			ctx := context.Background()
			ids := make([]int64, b.N)
			b.ResetTimer()
			t0 := time.Now()
			for i := range b.N {
				id, err := q.Submit(ctx, workers.Request{Graph: "chain", Thread: fmt.Sprintf("t%d", i), Input: json.RawMessage(`{}`)})
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = id
			}
			for _, id := range ids {
				if o, err := q.Wait(ctx, id, time.Second); err != nil || o.State != "done" {
					b.Fatalf("request %d: %s %v %s", id, o.State, err, o.Error)
				}
			}
			b.ReportMetric(float64(b.N*steps)/time.Since(t0).Seconds(), "supersteps/s")
			b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "requests/s")
		})
	}
}
