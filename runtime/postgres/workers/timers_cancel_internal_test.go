package workers

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// TestTimerScanRacesCancel: a timer scan (QueueDueWakes) that runs while
// a Cancel of the parked thread is under way (its transaction holds the
// thread's lock and has marked the thread aborted, not yet committed)
// queues no wake: before, the scan read the thread as parked and queued a
// wake that the Cancel could not see, and the cancelled thread's node ran
// on past its sleep. A thread whose lock a submit holds is woken by the
// scan after the lock is released; a thread nobody touches, by the first.
func TestTimerScanRacesCancel(t *testing.T) {
	ctx := context.Background()
	q := openInternalQueue(t, "timerscan")
	g, err := runtime.NewBuilder("nap").Channel("out", "").
		Node("n", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := runtime.Sleep(c, "nap", 2*time.Second); err != nil {
				return nil, err
			}
			return runtime.Values{"out": "woke"}, nil
		}).Edge(spec.Start, "n").Compile()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		lock   bool // a transaction holds the thread's lock during the first scan
		cancel bool // and cancels the thread in it
		first  int  // wakes the scan during the transaction queues
		later  int  // and the scan after it
	}{
		{"cancel under way", true, true, 0, 0},
		{"submit under way", true, false, 0, 1},
		{"untouched", false, false, 1, 0},
	}
	var ids []int64
	for _, c := range cases {
		id, err := q.Submit(ctx, Request{Graph: "nap", Thread: c.name})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	wctx, stop := context.WithCancel(ctx)
	w := NewWorker(q, map[string]Runnable{"nap": Graph(g, runtime.WithParkAfter(10*time.Millisecond))}, Poll(10*time.Millisecond))
	done := make(chan struct{})
	go func() { _ = w.Run(wctx); close(done) }()
	var due time.Time
	for _, id := range ids {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		o, err := q.Wait(wctx, id, 10*time.Millisecond)
		cancel()
		if err != nil || o.State != string(runtime.StatusParked) || len(o.Pending) != 1 {
			stop()
			<-done
			t.Fatalf("request %d: %s, %v; want parked on its timer", id, o.State, err)
		}
		due = o.Pending[0].WakeAt
	}
	stop() // no worker scans from here on: the test does
	<-done
	time.Sleep(time.Until(due) + 50*time.Millisecond) // every timer is due
	active := func(thread string) int {
		var n int
		if err := q.store.Pool().QueryRow(ctx, "SELECT count(*) FROM "+q.t("ilmek_requests")+" WHERE thread_id = $1 AND kind = 'wake' AND state IN ('queued', 'running')", thread).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The transactions of a Cancel and a Submit under way, each holding
	// its thread's lock, while a worker's scan runs.
	var txs []pgx.Tx
	for _, c := range cases {
		if !c.lock {
			continue
		}
		tx, err := q.store.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 1))", q.s+"/"+c.name); err != nil {
			t.Fatal(err)
		}
		if c.cancel {
			if _, _, err := cancelCount(ctx, tx, q, c.name); err != nil {
				t.Fatal(err)
			}
		}
		txs = append(txs, tx)
	}
	if _, err := q.QueueDueWakes(ctx); err != nil {
		t.Fatal(err)
	}
	first := map[string]int{}
	for _, c := range cases {
		first[c.name] = active(c.name)
	}
	for _, tx := range txs {
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.QueueDueWakes(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if n := active(c.name); first[c.name] != c.first || n != c.first+c.later {
			t.Errorf("thread %q: %d wake requests after the scan during the transactions, %d after the next; want %d, %d", c.name, first[c.name], n, c.first, c.first+c.later)
		}
	}
}
