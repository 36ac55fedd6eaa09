package workers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/spec"
)

var schemas atomic.Int64

// openQueue opens a store in a fresh schema (dropped at cleanup) and its
// queue. Without ILMEK_POSTGRES_DSN the test skips, unless CI=true.
func openQueue(t testing.TB, opts ...postgres.Option) *workers.Queue {
	t.Helper()
	dsn := pgtest.DSN(t)
	schema := fmt.Sprintf("ilmek_pgtest_workers_%d_%d", os.Getpid(), schemas.Add(1))
	s, err := postgres.Open(context.Background(), dsn, append([]postgres.Option{postgres.Schema(schema)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Pool().Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		s.Close()
	})
	return workers.NewQueue(s)
}

// openPoolQueue opens a queue on a new schema over pool (a pool of the
// test's own, with a tracer or a cutting dialer); admin drops the schema at
// cleanup, where pool may be cut.
func openPoolQueue(t testing.TB, pool, admin *pgxpool.Pool, opts ...postgres.Option) *workers.Queue {
	t.Helper()
	schema := fmt.Sprintf("ilmek_pgtest_workers_%d_%d", os.Getpid(), schemas.Add(1))
	s, err := postgres.OpenPool(context.Background(), pool, append([]postgres.Option{postgres.Schema(schema)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		s.Close()
	})
	return workers.NewQueue(s)
}

// tracedQueue opens a queue on a new schema over a pool of its own whose
// connections report their statements to tracer.
func tracedQueue(t testing.TB, tracer pgx.QueryTracer) *workers.Queue {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return openPoolQueue(t, pool, pool)
}

// chain is a graph of n supersteps, n0 … n(n-1), each writing its index
// to "n".
func chain(t testing.TB, n int) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	bld := runtime.NewBuilder("chain").Channel("n", spec.LastWrite)
	prev := spec.Start
	for i := range n {
		id := fmt.Sprintf("n%d", i)
		bld.Node(id, func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"n": i}, nil })
		bld.Edge(prev, id)
		prev = id
	}
	g, err := bld.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// steps is a graph of two supersteps appending to "log": "a:<in>", "b".
// gate, when not nil, holds node b until it is closed or the run stops.
func steps(t *testing.T, gate <-chan struct{}) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := stepsGraph(gate, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// stepsGraph is the graph steps returns; enter, when set, is called at
// the start of each node with the node's name and the input.
func stepsGraph(gate <-chan struct{}, enter func(node string, in any)) (*runtime.Graph[runtime.Values, runtime.Values], error) {
	return runtime.NewBuilder("steps").Channel("in", spec.LastWrite).Channel("log", spec.Append).
		Node("a", func(ctx *runtime.Ctx, v runtime.Values) (runtime.Values, error) {
			if enter != nil {
				enter("a", v["in"])
			}
			return runtime.Values{"log": fmt.Sprintf("a:%v", v["in"])}, nil
		}).
		Node("b", func(ctx *runtime.Ctx, v runtime.Values) (runtime.Values, error) {
			if enter != nil {
				enter("b", v["in"])
			}
			if gate != nil {
				select {
				case <-gate:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return runtime.Values{"log": "b"}, nil
		}).
		Edge(spec.Start, "a").Edge("a", "b").Compile()
}

func startWorkers(t testing.TB, q *workers.Queue, graphs map[string]workers.Runnable, n int, opts ...workers.WorkerOption) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, n)
	for range n {
		w := workers.NewWorker(q, graphs, append([]workers.WorkerOption{workers.Poll(10 * time.Millisecond)}, opts...)...)
		go func() { w.Run(ctx); done <- struct{}{} }()
	}
	t.Cleanup(func() {
		cancel()
		for range n {
			<-done
		}
	})
}

func wait(t *testing.T, q *workers.Queue, id int64) workers.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o, err := q.Wait(ctx, id, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func logOf(t *testing.T, o workers.Outcome) string {
	t.Helper()
	var st struct {
		Log []string `json:"log"`
	}
	if err := json.Unmarshal(o.Result, &st); err != nil {
		t.Fatalf("request %d: result %s: %v", o.ID, o.Result, err)
	}
	return fmt.Sprint(st.Log)
}

// TestWorkersDrainTheQueue: two workers run forty start requests on twenty
// threads (two per thread, enqueued); every request ends done, and each
// thread's requests ran in the order they were submitted.
func TestWorkersDrainTheQueue(t *testing.T) {
	q := openQueue(t)
	startWorkers(t, q, map[string]workers.Runnable{"steps": workers.Graph(steps(t, nil))}, 2)
	ctx := context.Background()
	type sub struct {
		id     int64
		thread string
		second bool
	}
	var subs []sub
	for i := range 20 {
		thread := fmt.Sprintf("t%d", i)
		for k, in := range []string{"1", "2"} {
			id, err := q.Submit(ctx, workers.Request{Graph: "steps", Thread: thread, Input: json.RawMessage(`{"in":` + in + `}`)})
			if err != nil {
				t.Fatal(err)
			}
			subs = append(subs, sub{id, thread, k == 1})
		}
	}
	for _, s := range subs {
		o := wait(t, q, s.id)
		want := "[a:1 b]"
		if s.second {
			want = "[a:1 b a:2 b]"
		}
		if o.State != "done" || logOf(t, o) != want || o.Thread != s.thread {
			t.Errorf("request %d on %s: state %s, log %s, err %q; want done, %s", s.id, s.thread, o.State, logOf(t, o), o.Error, want)
		}
	}
}

// TestDoubleTexting: with no worker running, a second request for a thread
// is refused under reject and queued under enqueue; cancel-and-replace
// cancels the queued ones (and a running one at its superstep boundary)
// and then runs.
func TestDoubleTexting(t *testing.T) {
	q := openQueue(t)
	ctx := context.Background()
	first, err := q.Submit(ctx, workers.Request{Graph: "steps", Thread: "t", Input: json.RawMessage(`{"in":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Submit(ctx, workers.Request{Graph: "steps", Thread: "t", Policy: runtime.DoubleTextReject}); !errors.Is(err, runtime.ErrThreadBusy) {
		t.Errorf("reject while a request is queued: %v, want ErrThreadBusy", err)
	}
	second, err := q.Submit(ctx, workers.Request{Graph: "steps", Thread: "t", Input: json.RawMessage(`{"in":2}`), Policy: runtime.DoubleTextEnqueue})
	if err != nil {
		t.Fatal(err)
	}
	third, err := q.Submit(ctx, workers.Request{Graph: "steps", Thread: "t", Input: json.RawMessage(`{"in":3}`), Policy: runtime.DoubleTextCancelReplace})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Submit(ctx, workers.Request{Graph: "steps", Thread: "t", Policy: "sometimes"}); err == nil {
		t.Error("an unknown policy was accepted")
	}
	gate := make(chan struct{})
	startWorkers(t, q, map[string]workers.Runnable{"steps": workers.Graph(steps(t, gate))}, 1)
	close(gate)
	for _, id := range []int64{first, second} {
		if o := wait(t, q, id); o.State != "cancelled" {
			t.Errorf("request %d replaced while queued: state %s, want cancelled", id, o.State)
		}
	}
	if o := wait(t, q, third); o.State != "done" || logOf(t, o) != "[a:3 b]" {
		t.Errorf("replacing request: state %s, log %s, err %q; want done, [a:3 b]", o.State, logOf(t, o), o.Error)
	}
}

// TestSubmitToAWaitingThread: on a thread whose latest checkpoint waits on
// a person, a cancel-and-replace start is refused with ErrWaitsOnPerson at
// Submit whether or not a request is queued, and cancels nothing; a
// resume or a fork under it, a start under reject or enqueue, and a
// cancel-and-replace start on a thread parked on a timer are queued. A
// reject refused by a queued request says so, not that a lease is held.
func TestSubmitToAWaitingThread(t *testing.T) {
	q := openQueue(t)
	ctx := context.Background()
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
	nap := napper(t, time.Hour, func(string) {})
	// No worker runs: the threads are brought to their pause directly.
	pause := func(t *testing.T, g *runtime.Graph[runtime.Values, runtime.Values], thread string, want runtime.Status) string {
		t.Helper()
		res, err := g.Thread(q.Store(), thread).Invoke(ctx, runtime.Values{}, runtime.WithParkAfter(0))
		if err != nil || res.Status != want {
			t.Fatalf("thread %s: status %s, err %v; want %s", thread, res.Status, err, want)
		}
		h, err := g.Thread(q.Store(), thread).History(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		return h[len(h)-1].ID // the first checkpoint, before the pause
	}
	for _, tc := range []struct {
		name    string
		graph   *runtime.Graph[runtime.Values, runtime.Values]
		status  runtime.Status // of the thread before the requests
		queued  bool           // a start request is queued before r
		r       workers.Request
		want    error // nil: queued
		wantMsg string
	}{
		{name: "replace", graph: askG, status: runtime.StatusInterrupted,
			r: workers.Request{Graph: "ask", Policy: runtime.DoubleTextCancelReplace}, want: workers.ErrWaitsOnPerson, wantMsg: "review:interrupt#0"},
		{name: "replace behind a queued request", graph: askG, status: runtime.StatusInterrupted, queued: true,
			r: workers.Request{Graph: "ask", Policy: runtime.DoubleTextCancelReplace}, want: workers.ErrWaitsOnPerson, wantMsg: "review:interrupt#0"},
		{name: "replace with a resume", graph: askG, status: runtime.StatusInterrupted, queued: true,
			r: workers.Request{Graph: "ask", Kind: workers.KindResume, Input: json.RawMessage(`{"review:interrupt#0": true}`), Policy: runtime.DoubleTextCancelReplace}},
		{name: "replace with a fork", graph: askG, status: runtime.StatusInterrupted,
			r: workers.Request{Graph: "ask", From: "first", Policy: runtime.DoubleTextCancelReplace}},
		{name: "reject", graph: askG, status: runtime.StatusInterrupted,
			r: workers.Request{Graph: "ask", Policy: runtime.DoubleTextReject}},
		{name: "reject behind a queued request", graph: askG, status: runtime.StatusInterrupted, queued: true,
			r: workers.Request{Graph: "ask", Policy: runtime.DoubleTextReject}, want: runtime.ErrThreadBusy, wantMsg: "1 run request(s) queued or running"},
		{name: "enqueue", graph: askG, status: runtime.StatusInterrupted,
			r: workers.Request{Graph: "ask", Policy: runtime.DoubleTextEnqueue}},
		{name: "replace a timer", graph: nap, status: runtime.StatusParked,
			r: workers.Request{Graph: "napper", Policy: runtime.DoubleTextCancelReplace}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			thread := "w-" + strings.ReplaceAll(tc.name, " ", "-")
			first := pause(t, tc.graph, thread, tc.status)
			var before int64
			if tc.queued {
				if before, err = q.Submit(ctx, workers.Request{Graph: tc.r.Graph, Thread: thread, Kind: workers.KindResume, Input: json.RawMessage(`{"review:interrupt#0": false}`)}); err != nil {
					t.Fatal(err)
				}
			}
			r := tc.r
			r.Thread = thread
			if r.From != "" {
				r.From = first
			}
			id, err := q.Submit(ctx, r)
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("Submit: %v, want the request queued", err)
			case tc.want != nil && (!errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.wantMsg) || strings.Contains(err.Error(), "lease")):
				t.Fatalf("Submit: id %d, err %v; want an error matching %q that names %q and no lease", id, err, tc.want, tc.wantMsg)
			}
			if tc.queued {
				o, err := q.Outcome(ctx, before)
				if err != nil {
					t.Fatal(err)
				}
				want := "queued"
				if tc.want == nil && r.Policy == runtime.DoubleTextCancelReplace {
					want = "cancelled"
				}
				if o.State != want {
					t.Errorf("the request queued before: state %s, want %s", o.State, want)
				}
			}
		})
	}
}

// TestCancelReplaceStopsTheRunningRequest: cancel-and-replace arrives while
// the running request is in node b, its second superstep. b runs to its
// end and its superstep commits; c, the third, does not start, and the
// request ends aborted. Then the new request runs on the thread: it
// continues with c, and b does not run again.
func TestCancelReplaceStopsTheRunningRequest(t *testing.T) {
	q := openQueue(t)
	ctx := context.Background()
	gate := make(chan struct{})
	var bRuns, cRuns atomic.Int64
	g, err := runtime.NewBuilder("three").Channel("in", spec.LastWrite).Channel("log", spec.Append).
		Node("a", func(ctx *runtime.Ctx, v runtime.Values) (runtime.Values, error) {
			return runtime.Values{"log": fmt.Sprintf("a:%v", v["in"])}, nil
		}).
		Node("b", func(ctx *runtime.Ctx, v runtime.Values) (runtime.Values, error) {
			bRuns.Add(1)
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return runtime.Values{"log": "b"}, nil
		}).
		Node("c", func(ctx *runtime.Ctx, v runtime.Values) (runtime.Values, error) {
			cRuns.Add(1)
			return runtime.Values{"log": "c"}, nil
		}).
		Edge(spec.Start, "a").Edge("a", "b").Edge("b", "c").Compile()
	if err != nil {
		t.Fatal(err)
	}
	// A claim TTL far beyond the test: only the notification can deliver
	// the cancel in time.
	startWorkers(t, q, map[string]workers.Runnable{"three": workers.Graph(g)}, 1, workers.ClaimTTL(time.Minute))
	first, err := q.Submit(ctx, workers.Request{Graph: "three", Thread: "t", Input: json.RawMessage(`{"in":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	for bRuns.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	second, err := q.Submit(ctx, workers.Request{Graph: "three", Thread: "t", Input: json.RawMessage(`{"in":2}`), Policy: runtime.DoubleTextCancelReplace})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the cancel reaches the worker
	if o, err := q.Outcome(ctx, first); err != nil || o.State != "running" {
		t.Fatalf("the running request before b returned: %s %v; the stop must wait for the boundary", o.State, err)
	}
	close(gate)
	o := wait(t, q, first)
	// c's runs are counted below, with the replacing request's: that one
	// may run c as soon as this one ended.
	if o.State != "aborted" || logOf(t, o) != "[a:1 b]" {
		t.Errorf("the replaced running request: state %s, log %s, err %q; want aborted after b's superstep", o.State, logOf(t, o), o.Error)
	}
	o = wait(t, q, second)
	if o.State != "done" || bRuns.Load() != 1 || cRuns.Load() != 1 {
		t.Errorf("the replacing request: state %s, log %s, b ran %d, c ran %d times, err %q; want done, each once", o.State, logOf(t, o), bRuns.Load(), cRuns.Load(), o.Error)
	}
}

// TestWaitAndWorkersWakeOnNotifications: with polls of an hour, a worker
// still claims a request as soon as it is submitted, and Wait returns as
// soon as the worker records the outcome: both are woken by notifications.
func TestWaitAndWorkersWakeOnNotifications(t *testing.T) {
	q := openQueue(t)
	startWorkers(t, q, map[string]workers.Runnable{"steps": workers.Graph(steps(t, nil))}, 2, workers.Poll(time.Hour))
	time.Sleep(200 * time.Millisecond) // the workers listen, idle
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 5 {
		id, err := q.Submit(ctx, workers.Request{Graph: "steps", Thread: fmt.Sprintf("t%d", i), Input: json.RawMessage(`{"in":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		o, err := q.Wait(ctx, id, time.Hour)
		if err != nil || o.State != "done" {
			t.Fatalf("request %d: %s %v", id, o.State, err)
		}
		if d := time.Since(t0); d > 5*time.Second {
			t.Errorf("request %d ended %v after it was submitted; a notification should have woken the worker and Wait", id, d)
		}
	}
}

// TestRequestEventsAreStored: a request's run records its events in the
// store's event log, and its outcome names the run, so another process
// (here another Queue on another Store of the schema) reads them.
func TestRequestEventsAreStored(t *testing.T) {
	q := openQueue(t)
	startWorkers(t, q, map[string]workers.Runnable{"steps": workers.Graph(steps(t, nil))}, 1)
	id, err := q.Submit(context.Background(), workers.Request{Graph: "steps", Thread: "t", Input: json.RawMessage(`{"in":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	o := wait(t, q, id)
	if o.State != "done" || len(o.Runs) != 1 {
		t.Fatalf("outcome %s, runs %v; want done after one run", o.State, o.Runs)
	}
	other, err := postgres.Open(context.Background(), os.Getenv(pgtest.EnvDSN), postgres.Schema(q.Store().SchemaName()))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	evs, err := other.ReadEvents(context.Background(), o.Runs[0], 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	if len(evs) < 4 || evs[0].Seq != 1 || kinds[0] != string(runtime.EventRunStart) || kinds[len(kinds)-1] != string(runtime.EventRunEnd) {
		t.Fatalf("the stored events of run %s: %v", o.Runs[0], kinds)
	}
	later, err := other.ReadEvents(context.Background(), o.Runs[0], evs[1].Seq, 0)
	if err != nil || len(later) != len(evs)-2 {
		t.Fatalf("events after seq %d: %d, %v; want %d", evs[1].Seq, len(later), err, len(evs)-2)
	}
}
