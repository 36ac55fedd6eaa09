package bench

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// BenchmarkQueuePhases splits a request through the queue into its
// phases, on PostgreSQL, beside a direct run of the same graph that
// stores its events as a worker's runs do (runtime.WithEventLog): one op
// is a request (chain100 of Builder nodes, one worker running one request
// at a time), submitted and waited for, then the direct run. It reports
// the median of each, in µs: submit_us (Submit's statement), claim_us
// (from Submit's return to the worker's EventClaim, after its claim
// committed), run_us (from the claim to Wait's return: the run, its
// outcome and the hand-over), request_us (the whole request) and
// direct_us (the direct run); request_mean_us and direct_mean_us are the
// means, request_max_us the slowest request. request_us less direct_us
// is what the queue itself costs a request; direct_us against a direct
// run without the event log is BenchmarkEventLogCost.
func BenchmarkQueuePhases(b *testing.B) {
	const steps = 100
	g := builderChain(b, steps)
	s := openPG(b, 8)
	q := workers.NewQueue(s)
	var mu sync.Mutex
	claimed := map[int64]time.Time{}
	ctx, cancel := context.WithCancel(context.Background())
	w := workers.NewWorker(q, map[string]workers.Runnable{"chain": workers.Graph(g, runtime.WithRecursionLimit(steps+1))},
		workers.Concurrency(1), workers.Poll(50*time.Millisecond),
		workers.OnEvent(func(_ context.Context, e workers.Event) {
			if e.Kind == workers.EventClaim {
				mu.Lock()
				claimed[e.Request] = time.Now()
				mu.Unlock()
			}
		}))
	var wg sync.WaitGroup
	wg.Go(func() { w.Run(ctx) })
	b.Cleanup(func() { cancel(); wg.Wait() })
	direct := invokeOp(g, s, steps, runtime.WithEventLog())
	var submit, claim, run, request, directs []time.Duration
	one := func() {
		t0 := time.Now()
		id, err := q.Submit(ctx, workers.Request{Graph: "chain", Thread: newThread(), Input: json.RawMessage(`{}`)})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if o, err := q.Wait(ctx, id, time.Second); err != nil || o.State != "done" {
			b.Fatalf("request %d: %s %v", id, o.State, err)
		}
		t2 := time.Now()
		if err := direct(ctx); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		mu.Lock()
		tc, ok := claimed[id]
		mu.Unlock()
		if !ok {
			b.Fatalf("request %d ended without the worker reporting its claim", id)
		}
		submit, claim, run = append(submit, t1.Sub(t0)), append(claim, tc.Sub(t1)), append(run, t2.Sub(tc))
		request, directs = append(request, t2.Sub(t0)), append(directs, t3.Sub(t2))
	}
	one() // the pool's connections and plans, the worker's first claim
	submit, claim, run, request, directs = nil, nil, nil, nil, nil
	b.ResetTimer()
	for range b.N {
		one()
	}
	b.StopTimer()
	med := func(ds []time.Duration) float64 {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds())
	}
	mean := func(ds []time.Duration) float64 {
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		return float64(sum.Microseconds()) / float64(len(ds))
	}
	b.ReportMetric(med(submit), "submit_us")
	b.ReportMetric(med(claim), "claim_us")
	b.ReportMetric(med(run), "run_us")
	b.ReportMetric(med(request), "request_us")
	b.ReportMetric(med(directs), "direct_us")
	b.ReportMetric(mean(request), "request_mean_us")
	b.ReportMetric(mean(directs), "direct_mean_us")
	b.ReportMetric(slices.Max(request).Seconds()*1e6, "request_max_us")
	b.ReportMetric(0, "ns/op")
}
