package workers_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/spec"
)

// TestLastWriteGivesTheLeaseBack: a queued run's last write (its last
// events, with the thread's outcome) deletes its lease row in the same
// statement (checkpoint.Commit.Release), so a request costs one statement
// less. Cut before it ran, the write is retried; cut after the server
// committed it, the retry finds the run's last event stored and writes
// nothing again (the write could not be made again: its fence is gone).
// Either way each request ends done with its run_end event stored once,
// the runtime logs no failed final write, and the thread's lease is free.
func TestLastWriteGivesTheLeaseBack(t *testing.T) {
	const match = "rl AS (DELETE FROM"
	for _, tc := range []struct {
		name  string
		after bool
	}{
		{"cut before it ran", false},
		{"cut after it committed", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, c := openCutQueue(t)
			var h recordHandler
			g, err := runtime.NewBuilder("last").Channel("log", spec.Append).
				Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"log": "a"}, nil }).
				Edge(spec.Start, "a").Edge("a", spec.End).Compile(runtime.WithLogger(slog.New(&h)))
			if err != nil {
				t.Fatal(err)
			}
			c.arm(match, tc.after, 2)
			startWorkers(t, q, map[string]workers.Runnable{"last": workers.Graph(g)}, 1, workers.Concurrency(1))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for i := range 3 {
				thread := fmt.Sprintf("t%d", i)
				id, err := q.Submit(ctx, workers.Request{Graph: "last", Thread: thread})
				if err != nil {
					t.Fatal(err)
				}
				o, err := q.Wait(ctx, id, 50*time.Millisecond)
				if err != nil || o.State != "done" || len(o.Runs) != 1 {
					t.Fatalf("request %d: %+v %v; want done in one run", id, o, err)
				}
				evs, err := q.Store().ReadEvents(ctx, o.Runs[0], 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				ends := 0
				for _, e := range evs {
					if e.Kind == string(runtime.EventRunEnd) {
						ends++
					}
				}
				if ends != 1 {
					t.Errorf("request %d: %d run_end events stored, want 1", id, ends)
				}
				l, err := q.Store().Lease(ctx, thread, checkpoint.LeaseOptions{})
				if err != nil {
					t.Fatalf("request %d: the thread's lease after the run: %v", id, err)
				}
				l.Release()
			}
			if made := c.made.Load(); made != 2 {
				t.Errorf("cuts made %d, want 2", made)
			}
			if n := h.count("recording the thread's outcome and the run's last events failed"); n != 0 {
				t.Errorf("the runtime logged %d failed final writes:\n%s", n, strings.Join(h.msgs, "\n"))
			}
		})
	}
}
