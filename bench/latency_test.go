package bench

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// BenchmarkQueueLatency runs chain10 requests (Builder nodes, see
// builderChain) through a queue on PostgreSQL with one worker in the same
// process, one request at a time, each submitted and then waited for, as
// BenchmarkQueueVsDirect's chain10/queue-1worker does, and reports the
// distribution of a request's time from submit to outcome: p50_ms, p90_ms
// and p99_ms, beside requests/s. The mean moves with the odd slow request
// (the server's checkpoint, the machine's other work); the median is what
// the request's own statements cost, and tells two builds apart where the
// mean does not. Without a PostgreSQL server it is skipped.
func BenchmarkQueueLatency(b *testing.B) {
	const steps = 10
	g := builderChain(b, steps)
	q := workers.NewQueue(openPG(b, 4))
	startBenchWorkers(b, q, g, steps, 1, 1)
	op := queueOp(q)
	ctx := context.Background()
	if err := op(ctx); err != nil { // the connections, the prepared statements, the listener
		b.Fatal(err)
	}
	took := make([]time.Duration, 0, b.N)
	start := time.Now()
	for b.Loop() {
		t0 := time.Now()
		if err := op(ctx); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(t0))
	}
	total := time.Since(start)
	slices.Sort(took)
	at := func(p float64) float64 {
		return float64(took[min(len(took)-1, int(p*float64(len(took))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50_ms")
	b.ReportMetric(at(0.90), "p90_ms")
	b.ReportMetric(at(0.99), "p99_ms")
	b.ReportMetric(float64(len(took))/total.Seconds(), "requests/s")
}
