package workers_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/spec"
)

// TestWorkersReportDroppedWake: a wake request queued for a parked thread
// that is woken by someone else before a worker claims it is dropped: the
// request ends cancelled, and the worker reports EventTimerDropped to
// OnEvent and logs "timer dropped". So it is when an earlier claim of the
// wake request had died before its run wrote anything: the thread moved
// past the base that claim noted, but by the other writer, not the
// request's run (whose outcome the request would then record, done).
func TestWorkersReportDroppedWake(t *testing.T) {
	for _, earlierClaimDied := range []bool{false, true} {
		name := "unclaimed"
		if earlierClaimDied {
			name = "an earlier claim died"
		}
		t.Run(name, func(t *testing.T) { testDroppedWake(t, earlierClaimDied) })
	}
}

func testDroppedWake(t *testing.T, earlierClaimDied bool) {
	q := openQueue(t)
	g, err := runtime.NewBuilder("napper").Channel("log", spec.Append).
		Node("nap", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			// Long enough that the timer's journal write, which is durable
			// before the run parks, cannot outlast it on a loaded machine:
			// a timer already due does not park (the run went on to done
			// when the write took over 50 ms in CI).
			if err := runtime.Sleep(ctx, "nap", 500*time.Millisecond); err != nil {
				return nil, err
			}
			return runtime.Values{"log": "woke"}, nil
		}).Edge(spec.Start, "nap").Compile(runtime.WithParkAfter(0))
	if err != nil {
		t.Fatal(err)
	}
	graphs := map[string]workers.Runnable{"napper": workers.Graph(g)}
	ctx := context.Background()
	// A worker runs the start request until the thread parks, then stops.
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { workers.NewWorker(q, graphs, workers.Poll(10*time.Millisecond)).Run(wctx); close(done) }()
	id, err := q.Submit(ctx, workers.Request{Graph: "napper", Thread: "t"})
	if err != nil {
		t.Fatal(err)
	}
	o := wait(t, q, id)
	stop()
	<-done
	if o.State != string(runtime.StatusParked) || len(o.Pending) != 1 {
		t.Fatalf("start request: state %s pending %+v, want parked", o.State, o.Pending)
	}
	time.Sleep(time.Until(o.Pending[0].WakeAt))
	ids, err := q.QueueDueWakes(ctx)
	if err != nil || len(ids) != 1 {
		t.Fatalf("queued wakes %v (%v), want one", ids, err)
	}
	if earlierClaimDied {
		// As the claim statement leaves it, with an expired claim whose
		// run wrote nothing.
		sch := `"` + q.Store().SchemaName() + `".`
		if _, err := q.Store().Pool().Exec(ctx, "UPDATE "+sch+"ilmek_requests SET state = 'running', claim = 1, worker = 'dead', claim_until = clock_timestamp() - interval '1 second', "+
			"base_cp = (SELECT id FROM "+sch+"ilmek_checkpoints WHERE thread_id = 't' ORDER BY seq DESC LIMIT 1), run_ids = '{dead}' WHERE id = $1", ids[0]); err != nil {
			t.Fatal(err)
		}
	}
	// Another process wakes the thread first.
	if res, err := g.Thread(q.Store(), "t").Wake(ctx); err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("direct wake: status %q err %v", res.Status, err)
	}
	var mu sync.Mutex
	var events []workers.Event
	var logs bytes.Buffer
	onEvent := func(_ context.Context, e workers.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Kind != workers.EventClaim {
			events = append(events, e)
		}
	}
	startWorkers(t, q, graphs, 1, workers.OnEvent(onEvent), workers.Logger(slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil))))
	if o := wait(t, q, ids[0]); o.State != "cancelled" || !strings.Contains(o.Error, "nothing was due") {
		t.Fatalf("wake request: state %s err %q, want cancelled, nothing was due", o.State, o.Error)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 1 || events[0].Kind != workers.EventTimerDropped || events[0].Request != ids[0] || events[0].Thread != "t" ||
		events[0].Graph != "napper" || !strings.Contains(events[0].Error, "nothing was due") {
		t.Errorf("events %+v, want one %s of request %d", events, workers.EventTimerDropped, ids[0])
	}
	if !strings.Contains(logs.String(), `msg="timer dropped`) {
		t.Errorf("log %q has no timer dropped record", logs.String())
	}
}

// syncWriter serializes writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
