package workers_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// TestSubmitKey: a Submit retried with its request's Key (its reply lost)
// returns the request it made and queues nothing more, under every
// policy: the same input runs once. The key with another request is
// refused; another key is another request.
func TestSubmitKey(t *testing.T) {
	q := openQueue(t)
	ctx := context.Background()
	rows := func(thread string) int {
		t.Helper()
		var n int
		if err := q.Store().Pool().QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{q.Store().SchemaName()}.Sanitize()+".ilmek_requests WHERE thread_id = $1", thread).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, policy := range []runtime.DoubleTexting{runtime.DoubleTextEnqueue, runtime.DoubleTextReject, runtime.DoubleTextCancelReplace} {
		t.Run(string(policy), func(t *testing.T) {
			thread := "key-" + string(policy)
			r := workers.Request{Graph: "chain", Thread: thread, Input: json.RawMessage(`{"n":1}`), Policy: policy, Key: "order-7 placed"}
			first, err := q.Submit(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			again, err := q.Submit(ctx, r)
			if err != nil || again != first {
				t.Fatalf("the same request again: id %d, %v; want %d, nil", again, err, first)
			}
			if n := rows(thread); n != 1 {
				t.Errorf("%d requests queued for the thread, want 1", n)
			}
			other := r
			other.Input = json.RawMessage(`{"n":2}`)
			if _, err := q.Submit(ctx, other); !errors.Is(err, workers.ErrKeyReused) {
				t.Errorf("the key with another input: %v, want ErrKeyReused", err)
			}
			other.Key, other.Policy = "order-8 placed", runtime.DoubleTextEnqueue
			if id, err := q.Submit(ctx, other); err != nil || id == first {
				t.Errorf("another key: id %d, %v; want a request of its own", id, err)
			}
		})
	}
	// Run: the retried start ran once.
	startWorkers(t, q, map[string]workers.Runnable{"chain": workers.Graph(chain(t, 3))}, 1)
	r := workers.Request{Graph: "chain", Thread: "key-run", Input: json.RawMessage(`{}`), Key: "k1"}
	id, err := q.Submit(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if o := wait(t, q, id); o.State != "done" {
		t.Fatalf("outcome %+v, want done", o)
	}
	if again, err := q.Submit(ctx, r); err != nil || again != id {
		t.Fatalf("the start retried after it ran: id %d, %v; want %d, nil", again, err, id)
	}
	if o := wait(t, q, id); len(o.Runs) != 1 {
		t.Errorf("runs %v, want the one run", o.Runs)
	}
	if n := rows("key-run"); n != 1 {
		t.Errorf("%d requests for the thread, want 1", n)
	}
}
