package workers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// BenchmarkFlow measures queue throughput with flow control off and on,
// side by side in one run (-count repeats both in turn): 4 workers
// (Concurrency 4 each) drain b.N requests for a 1-superstep run, on new
// threads. "on" spreads them over 8 partitions and 3 priorities, under a
// graph limit of 16 running and 10,000 starts per second and a limit of 4
// running for each partition: limits that are taken and given back by
// every request, and rarely hold one back.
func BenchmarkFlow(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) { benchFlow(b, on) })
	}
}

func benchFlow(b *testing.B, on bool) {
	q := openQueue(b)
	ctx := context.Background()
	if on {
		for _, l := range []workers.Limit{
			{Scope: workers.ScopeGraph, Key: "chain", Concurrency: 64, Rate: 10000, Burst: 100},
			{Scope: workers.ScopePartition, Key: workers.AnyPartition, Concurrency: 4},
		} {
			if err := q.SetLimit(ctx, l); err != nil {
				b.Fatal(err)
			}
		}
	}
	startWorkers(b, q, map[string]workers.Runnable{"chain": workers.Graph(chain(b, 1))}, 4, workers.Concurrency(4))
	ids := make([]int64, b.N)
	b.ResetTimer()
	t0 := time.Now()
	for i := range b.N {
		r := workers.Request{Graph: "chain", Thread: fmt.Sprintf("t%d", i), Input: json.RawMessage(`{}`)}
		if on {
			r.Partition, r.Priority = fmt.Sprintf("p%d", i%8), int32(i%3)
		}
		id, err := q.Submit(ctx, r)
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
	b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "requests/s")
}
