package workers_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/spec"
)

// napper is a graph whose node sleeps nap (parking the thread past
// ParkAfter) and then counts, per thread, that it went past the sleep.
func napper(t *testing.T, nap time.Duration, woke func(thread string)) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.NewBuilder("napper").Channel("log", spec.Append).
		Node("nap", func(ctx *runtime.Ctx, v runtime.Values) (runtime.Values, error) {
			if err := runtime.Sleep(ctx, "nap", nap); err != nil {
				return nil, err
			}
			woke(ctx.ThreadID())
			return runtime.Values{"log": "woke"}, nil
		}).
		Edge(spec.Start, "nap").Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestWorkersWakeParkedThreads: four worker goroutines run start requests
// on twelve threads whose node sleeps 2 s: each run ends parked (ended()
// and the outcome say parked, with the wake time), and each thread is
// woken exactly once, by one wake request that ends done; a thread
// cancelled and one deleted while parked are never woken.
func TestWorkersWakeParkedThreads(t *testing.T) {
	q := openQueue(t)
	var mu sync.Mutex
	woken := map[string]int{}
	g := napper(t, 2*time.Second, func(th string) { mu.Lock(); woken[th]++; mu.Unlock() })
	startWorkers(t, q, map[string]workers.Runnable{"napper": workers.Graph(g)}, 4)
	ctx := context.Background()
	const n = 12
	var ids []int64
	for i := range n {
		id, err := q.Submit(ctx, workers.Request{Graph: "napper", Thread: fmt.Sprintf("t%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		if o := wait(t, q, id); o.State != string(runtime.StatusParked) || len(o.Pending) != 1 || !o.Pending[0].Timer || o.Pending[0].WakeAt.IsZero() {
			t.Fatalf("request %d: state %s, pending %+v, err %q; want parked on one timer with its wake time", id, o.State, o.Pending, o.Error)
		}
	}
	if _, err := q.Cancel(ctx, "t0"); err != nil {
		t.Fatal(err)
	}
	if err := q.Store().DeleteThread(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		page, err := q.Store().ListThreads(ctx, checkpoint.ThreadQuery{Status: runtime.StatusDone, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Threads) == n-2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d threads done after 20 s; want %d", len(page.Threads), n-2)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // a second wake would run now
	mu.Lock()
	defer mu.Unlock()
	for i := range n {
		th, want := fmt.Sprintf("t%d", i), 1
		if i < 2 {
			want = 0
		}
		if woken[th] != want {
			t.Errorf("thread %s woken %d times; want %d", th, woken[th], want)
		}
	}
	var wakes, done int
	if err := q.Store().Pool().QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE state = 'done') FROM "`+q.Store().SchemaName()+`".ilmek_requests WHERE kind = 'wake'`).Scan(&wakes, &done); err != nil {
		t.Fatal(err)
	}
	if wakes != n-2 || done != n-2 {
		t.Errorf("%d wake requests, %d done; want %d of each", wakes, done, n-2)
	}
}
