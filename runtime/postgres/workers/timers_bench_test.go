package workers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/spec"
)

// BenchmarkTimers measures parked threads on PostgreSQL with 4 workers:
// b.N start requests on new threads whose node waits until one wake time
// (runtime.Until, parking each thread); parked/s is b.N over the time
// until every request ended parked, woken/s is b.N over the time from the
// wake time until every thread is done (each woken by a wake request).
// Run it with -benchtime=Nx: the wake time is set from N (40 ms a
// thread: parking must keep up 25 threads/s, or late threads find their
// wake time passed and run through without parking).
func BenchmarkTimers(b *testing.B) {
	var wakeAt time.Time
	g, err := runtime.NewBuilder("timers").Channel("log", spec.Append).
		Node("nap", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := runtime.Until(ctx, "nap", wakeAt); err != nil {
				return nil, err
			}
			return runtime.Values{"log": "woke"}, nil
		}).Edge(spec.Start, "nap").Compile()
	if err != nil {
		b.Fatal(err)
	}
	q := openQueue(b)
	startWorkers(b, q, map[string]workers.Runnable{"timers": workers.Graph(g)}, 4, workers.Poll(100*time.Millisecond))
	ctx := context.Background()
	b.ResetTimer()
	t0 := time.Now()
	wakeAt = t0.Add(2*time.Second + time.Duration(b.N)*40*time.Millisecond)
	ids := make([]int64, b.N)
	for i := range b.N {
		if ids[i], err = q.Submit(ctx, workers.Request{Graph: "timers", Thread: fmt.Sprintf("t%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	for _, id := range ids {
		if o, err := q.Wait(ctx, id, time.Second); err != nil || o.State != string(runtime.StatusParked) {
			b.Fatalf("request %d: %s %v %s", id, o.State, err, o.Error)
		}
	}
	parked := time.Since(t0)
	if time.Now().After(wakeAt) {
		b.Fatalf("parking %d threads took %v, past their wake time", b.N, parked)
	}
	for {
		var done int
		if err := q.Store().Pool().QueryRow(ctx, `SELECT count(*) FROM "`+q.Store().SchemaName()+`".ilmek_requests WHERE kind = 'wake' AND state = 'done'`).Scan(&done); err != nil {
			b.Fatal(err)
		}
		if done == b.N {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	woken := time.Since(wakeAt)
	b.ReportMetric(float64(b.N)/parked.Seconds(), "parked/s")
	b.ReportMetric(float64(b.N)/woken.Seconds(), "woken/s")
}
