package workers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/spec"
)

// TestWaitGetsTheLocalOutcome: when a worker running on the Queue in the
// waiter's process records a request's outcome, Wait returns the outcome
// the worker's statement wrote, without reading the request back: the
// same Outcome a read returns afterwards (done with a result, interrupted
// with its pending interrupt, error with its message, and a resumed
// thread's second request), and no read of the request after the one
// Wait starts with.
func TestWaitGetsTheLocalOutcome(t *testing.T) {
	ctx := context.Background()
	var c counter
	q := tracedQueue(t, &c)

	ask := runtime.NewBuilder("ask").Channel("ok", spec.LastWrite)
	ask.Node("review", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
		ok, err := runtime.Interrupt[bool](c, "refund 120 EUR?")
		if err != nil {
			return nil, err
		}
		return runtime.Values{"ok": ok}, nil
	})
	ask.Edge(spec.Start, "review")
	askG, err := ask.Compile()
	if err != nil {
		t.Fatal(err)
	}
	fail := runtime.NewBuilder("fail").Channel("n", spec.LastWrite)
	fail.Node("boom", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
		return nil, errors.New("the refund service refused")
	})
	fail.Edge(spec.Start, "boom")
	failG, err := fail.Compile()
	if err != nil {
		t.Fatal(err)
	}
	startWorkers(t, q, map[string]workers.Runnable{
		"chain": workers.Graph(chain(t, 3)), "ask": workers.Graph(askG), "fail": workers.Graph(failG),
	}, 1, workers.Concurrency(1), workers.Poll(time.Hour))

	// A first request starts Wait's listener (whose connection wakes every
	// waiter to read again) and writes the graph's document.
	warm, err := q.Submit(ctx, workers.Request{Graph: "chain", Thread: "w-warm", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, q, warm)
	for _, tc := range []struct {
		name string
		req  workers.Request
		want string // the outcome's state
	}{
		{"done", workers.Request{Graph: "chain", Thread: "w-done", Input: json.RawMessage(`{}`)}, "done"},
		{"interrupted", workers.Request{Graph: "ask", Thread: "w-ask", Input: json.RawMessage(`{}`)}, "interrupted"},
		{"resumed", workers.Request{Graph: "ask", Thread: "w-ask", Kind: workers.KindResume, Input: json.RawMessage(`{"review:interrupt#0": true}`)}, "done"},
		{"error", workers.Request{Graph: "fail", Thread: "w-fail", Input: json.RawMessage(`{}`)}, "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			time.Sleep(100 * time.Millisecond) // the worker idle, listening
			id, err := q.Submit(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			c.start()
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			got, err := q.Wait(wctx, id, time.Hour) // no poll: only the worker's hand-over ends it
			sqls := c.stop()
			if err != nil {
				t.Fatal(err)
			}
			read, err := q.Outcome(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(read, got); diff != "" {
				t.Errorf("Wait's outcome differs from the request as read (-read +Wait):\n%s", diff)
			}
			if got.State != tc.want || len(got.Runs) == 0 || got.Claims != 1 {
				t.Errorf("outcome %+v, want state %s, a run, one claim", got, tc.want)
			}
			if tc.want == "interrupted" && len(got.Pending) != 1 {
				t.Errorf("pending %+v, want the one interrupt", got.Pending)
			}
			if tc.want == "error" && !strings.Contains(got.Error, "refused") {
				t.Errorf("error %q, want the node's", got.Error)
			}
			reads := 0
			for _, s := range sqls {
				if strings.HasPrefix(s, "SELECT thread_id, state, result") {
					reads++
				}
			}
			if reads > 1 {
				t.Errorf("Wait read the request %d times, want at most once (before the worker's hand-over):\n%s", reads, strings.Join(sqls, "\n"))
			}
		})
	}
}

// orderTracer records, in order, when each statement through a pool
// starts and ends ("start " or "end " and its SQL's first words).
type orderTracer struct {
	mu  sync.Mutex
	on  bool
	log []string
}

func (o *orderTracer) add(what, sql string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.on {
		o.log = append(o.log, what+strings.Join(strings.Fields(sql), " "))
	}
}

func (o *orderTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	o.add("start ", d.SQL)
	return context.WithValue(ctx, orderKey{}, d.SQL)
}

func (o *orderTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	sql, _ := ctx.Value(orderKey{}).(string)
	o.add("end ", sql)
}

type orderKey struct{}

// A batch's statements start when it is sent and end when it is closed:
// the order a run's writes keep is the batches' (the checkpoint kept for
// the next write with the one after it, the run's last write with the
// outcome).
func (o *orderTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	for _, q := range d.Batch.QueuedQueries {
		o.add("start ", q.SQL)
	}
	return context.WithValue(ctx, orderKey{}, d.Batch)
}

func (o *orderTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (o *orderTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	if b, ok := ctx.Value(orderKey{}).(*pgx.Batch); ok {
		for _, q := range b.QueuedQueries {
			o.add("end ", q.SQL)
		}
	}
}

// TestRunIDRecordedBeforeTheRunWrites: the worker makes a run's id before
// it claims the request and the claim's statement records it, so a
// request names its run before any checkpoint or event of the run is
// stored (Queue.Runs finds every run that stored something). The write of
// the id ends before the run's first commit starts, request after request,
// and the run's events are stored under that id.
func TestRunIDRecordedBeforeTheRunWrites(t *testing.T) {
	ctx := context.Background()
	var o orderTracer
	q := tracedQueue(t, &o)
	startWorkers(t, q, map[string]workers.Runnable{"chain": workers.Graph(chain(t, 2))}, 1, workers.Concurrency(1))
	for i := range 10 {
		o.mu.Lock()
		o.on, o.log = true, nil
		o.mu.Unlock()
		id, err := q.Submit(ctx, workers.Request{Graph: "chain", Thread: fmt.Sprintf("ids-%d", i), Input: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		got := wait(t, q, id)
		o.mu.Lock()
		log := o.log
		o.on = false
		o.mu.Unlock()
		if len(got.Runs) != 1 {
			t.Fatalf("request %d: runs %v, want one", id, got.Runs)
		}
		idEnd, firstWrite := -1, -1
		for k, l := range log {
			switch {
			case idEnd < 0 && strings.HasPrefix(l, "end ") && strings.Contains(l, "run_ids = "):
				idEnd = k
			case firstWrite < 0 && strings.HasPrefix(l, "start WITH f AS (SELECT 1 FROM") && strings.Contains(l, "ilmek_leases"):
				firstWrite = k
			}
		}
		if idEnd < 0 || firstWrite < 0 || idEnd > firstWrite {
			t.Fatalf("request %d: the run id's write ended at %d, the run's first write started at %d, want the first before the second:\n%s",
				id, idEnd, firstWrite, strings.Join(log, "\n"))
		}
		if evs, err := q.Store().ReadEvents(ctx, got.Runs[0], 0, 100); err != nil || len(evs) == 0 || evs[len(evs)-1].Kind != string(runtime.EventRunEnd) {
			t.Fatalf("request %d: the events of run %s: %v, %v; want the run's, ending with run_end", id, got.Runs[0], evs, err)
		}
	}
}

// stealAtEnd is an Observer that, once per thread, takes the thread's
// lease row over (another epoch, as a holder that found it expired would)
// when a run ends: after the run's last write was handed over, before the
// worker records the outcome with it.
type stealAtEnd struct {
	runtime.NopObserver
	q     *workers.Queue
	t     *testing.T
	stole sync.Map // thread → true
}

func (o *stealAtEnd) RunEnd(ctx context.Context, run runtime.RunRecord, _ runtime.RunEnd) {
	if _, done := o.stole.LoadOrStore(run.ThreadID, true); done {
		return
	}
	_, err := o.q.Store().Pool().Exec(context.WithoutCancel(ctx), `UPDATE "`+o.q.Store().SchemaName()+`".ilmek_leases
		SET epoch = epoch + 1000000, owner = 'thief', expires = clock_timestamp() + interval '300 milliseconds' WHERE thread_id = $1`, run.ThreadID)
	if err != nil {
		o.t.Error(err)
	}
}

// TestOutcomeNotRecordedWithoutItsLastWrite: when the run's last write
// cannot be written with the outcome (its lease was taken over after the
// run ended), neither is: the request is not recorded done by this claim
// but released. The last write held the run's last checkpoint too, so a
// later claim runs that superstep again, once the thief's lease expired
// (a claim before that finds the thread busy and releases the request),
// and records the outcome. The Step's effect ran once (its journal was
// stored before), and the first run's events stop before run_end (its
// last write was not stored), as when a run's last write fails.
func TestOutcomeNotRecordedWithoutItsLastWrite(t *testing.T) {
	ctx := context.Background()
	q := openQueue(t)
	var effects atomic.Int32
	b := runtime.NewBuilder("stolen").Channel("log", spec.Append)
	b.Node("a", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
		if _, err := runtime.Step(c, "effect", func() (int32, error) { return effects.Add(1), nil }); err != nil {
			return nil, err
		}
		return runtime.Values{"log": "a"}, nil
	})
	b.Edge(spec.Start, "a")
	g, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	obs := &stealAtEnd{q: q, t: t}
	startWorkers(t, q, map[string]workers.Runnable{"stolen": workers.Graph(g, runtime.WithObserver(obs))}, 1, workers.Concurrency(1))
	id, err := q.Submit(ctx, workers.Request{Graph: "stolen", Thread: "s1", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	o := wait(t, q, id)
	if o.State != "done" || o.Claims < 2 || logOf(t, o) != "[a]" {
		t.Fatalf("outcome %+v (log %s); want done by a later claim, log [a]", o, logOf(t, o))
	}
	if n := effects.Load(); n != 1 {
		t.Errorf("the effect ran %d times, want once", n)
	}
	evs, err := q.Store().ReadEvents(ctx, o.Runs[0], 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Kind == string(runtime.EventRunEnd) {
			t.Errorf("the first run's run_end is stored, though its last write's lease was taken over: %+v", e)
		}
	}
}
