package workers_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// TestClaimLeaseDroppedWhenUnused: the claim takes the thread's lease for
// the run; a request that ends without a run (its graph is not registered)
// drops it with its outcome, so the next request of the thread runs at
// once rather than after the lease's TTL. That request lists no runs.
func TestClaimLeaseDroppedWhenUnused(t *testing.T) {
	q := openQueue(t)
	ctx := context.Background()
	startWorkers(t, q, map[string]workers.Runnable{"chain1": workers.Graph(chain(t, 1))}, 1)
	first, err := q.Submit(ctx, workers.Request{Graph: "missing", Thread: "t", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	second, err := q.Submit(ctx, workers.Request{Graph: "chain1", Thread: "t", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if o := wait(t, q, first); o.State != "error" || len(o.Runs) != 0 {
		t.Fatalf("the request of a graph not registered: %+v, want error and no runs", o)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second) // the lease's TTL is 30 s
	defer cancel()
	o, err := q.Wait(wctx, second, 10*time.Millisecond)
	if err != nil || o.State != "done" {
		t.Fatalf("the thread's next request: %+v, %v; want done within 10 s", o, err)
	}
}
