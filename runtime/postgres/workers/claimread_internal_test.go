package workers

import (
	"context"
	"encoding/json"
	"testing"
)

// TestClaimWithoutTheReadWhenTheServerFailsIt: a claim whose read the
// server fails is not written (one transaction) and fails once; the queue
// then claims without the read, and the run reads the thread itself.
// Without the fallback, a read that always failed would keep every
// request from being claimed.
func TestClaimWithoutTheReadWhenTheServerFailsIt(t *testing.T) {
	ctx := context.Background()
	q := openInternalQueue(t, "claimread")
	if q.latestSQL == "" {
		t.Fatal("the PostgreSQL store gives the queue no read for its claims (pgside.LatestRead)")
	}
	q.latestSQL = "SELECT 1 / 0" // a read the server fails
	id, err := q.Submit(ctx, Request{Graph: "g", Thread: "t", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorker(q, nil)
	if res, err := w.claim(ctx); err == nil || res.c != nil {
		t.Fatalf("the first claim: %+v, %v; want it failed by its read", res.c, err)
	}
	if !q.noRead.Load() {
		t.Fatal("the queue still sends the read the server failed")
	}
	res, err := w.claim(ctx)
	if err != nil || res.c == nil || res.c.id != id || res.c.claim != 1 {
		t.Fatalf("the second claim: %+v, %v; want request %d at its first claim (the failed one wrote nothing)", res.c, err, id)
	}
	if res.c.read != nil {
		t.Errorf("the second claim carries a read: %+v", res.c.read)
	}
}
