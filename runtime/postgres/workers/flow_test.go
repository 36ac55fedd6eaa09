package workers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/spec"
)

// claimLog records the workers' claim events in the order they came.
type claimLog struct {
	mu     sync.Mutex
	claims []workers.Event
	waits  atomic.Int64
}

func (l *claimLog) on(_ context.Context, e workers.Event) {
	switch e.Kind {
	case workers.EventClaim:
		l.mu.Lock()
		l.claims = append(l.claims, e)
		l.mu.Unlock()
	case workers.EventRateWait:
		l.waits.Add(1)
	}
}

func (l *claimLog) snapshot() []workers.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.claims)
}

// otherProcess opens the queue's schema through a store and pool of its
// own, as another worker process would.
func otherProcess(t *testing.T, q *workers.Queue) *workers.Queue {
	t.Helper()
	s, err := postgres.Open(context.Background(), pgtest.DSN(t), postgres.Schema(q.Store().SchemaName()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return workers.NewQueue(s)
}

// gauge is a graph of one node that holds for d, counting how many runs
// are inside it at once per partition (the input's "p") and overall.
type gauge struct {
	mu      sync.Mutex
	now     map[string]int
	peak    map[string]int
	overall int
	maxAll  int
	// until, when set, holds each run (up to 5 s) until it is true of the
	// gauge, so that a peak the test wants reached is reached however
	// slowly a loaded machine claims: peaks only grow, so once it holds it
	// holds for every later run.
	until func(*gauge) bool
}

func (g *gauge) graph(t *testing.T, d time.Duration) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g.now, g.peak = map[string]int{}, map[string]int{}
	gr, err := runtime.NewBuilder("gauge").Channel("p", spec.LastWrite).
		Node("hold", func(_ *runtime.Ctx, in runtime.Values) (runtime.Values, error) {
			p, _ := in["p"].(string)
			g.mu.Lock()
			g.now[p]++
			g.overall++
			g.peak[p] = max(g.peak[p], g.now[p])
			g.maxAll = max(g.maxAll, g.overall)
			g.mu.Unlock()
			for deadline := time.Now().Add(5 * time.Second); g.until != nil && time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
				g.mu.Lock()
				ok := g.until(g)
				g.mu.Unlock()
				if ok {
					break
				}
			}
			time.Sleep(d)
			g.mu.Lock()
			g.now[p]--
			g.overall--
			g.mu.Unlock()
			return nil, nil
		}).Edge(spec.Start, "hold").Compile()
	if err != nil {
		t.Fatal(err)
	}
	return gr
}

func submitAll(t *testing.T, q *workers.Queue, reqs []workers.Request) []int64 {
	t.Helper()
	ids := make([]int64, len(reqs))
	for i, r := range reqs {
		id, err := q.Submit(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	return ids
}

// TestPriorityOrdersClaims: with one worker claiming one request at a
// time, requests are claimed highest priority first and, within a
// priority, in submission order; each claim is an event and a slog
// record.
func TestPriorityOrdersClaims(t *testing.T) {
	q := openQueue(t)
	var log claimLog
	prios := []int32{0, 5, -1, 5, 0, 9}
	var reqs []workers.Request
	for i, p := range prios {
		reqs = append(reqs, workers.Request{Graph: "chain", Thread: fmt.Sprintf("t%d", i), Input: json.RawMessage(`{}`), Priority: p})
	}
	ids := submitAll(t, q, reqs)
	var h recordHandler
	startWorkers(t, q, map[string]workers.Runnable{"chain": workers.Graph(chain(t, 1))}, 1, workers.Concurrency(1), workers.OnEvent(log.on), workers.Logger(slog.New(&h)))
	for _, id := range ids {
		wait(t, q, id)
	}
	if n := h.count("request claimed"); n != len(ids) {
		t.Errorf("%d slog records of claims, want %d", n, len(ids))
	}
	var got []string
	for _, e := range log.snapshot() {
		got = append(got, e.Thread)
	}
	want := []string{"t5", "t1", "t3", "t0", "t4", "t2"}
	if !slices.Equal(got, want) {
		t.Errorf("claim order %v, want %v (priority, then submission)", got, want)
	}
}

// TestConcurrencyLimitsHoldAcrossWorkers runs three worker processes
// (stores and pools of their own), four requests at a time each, under a
// graph limit of 3 running and a limit of 1 running for every partition:
// never more than 3 requests of the graph, nor 2 of a partition, run at
// once, and the limits are reached.
func TestConcurrencyLimitsHoldAcrossWorkers(t *testing.T) {
	q := openQueue(t)
	ctx := context.Background()
	for _, l := range []workers.Limit{
		{Scope: workers.ScopeGraph, Key: "gauge", Concurrency: 3},
		{Scope: workers.ScopePartition, Key: workers.AnyPartition, Concurrency: 1},
		{Scope: workers.ScopePartition, Key: "big", Concurrency: 2},
	} {
		if err := q.SetLimit(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	g := gauge{until: func(g *gauge) bool { return g.maxAll >= 3 }}
	graphs := map[string]workers.Runnable{"gauge": workers.Graph(g.graph(t, 40*time.Millisecond))}
	for range 3 {
		startWorkers(t, otherProcess(t, q), graphs, 1, workers.Concurrency(4))
	}
	var reqs []workers.Request
	for i := range 24 {
		p := []string{"a", "b", "big", "c"}[i%4]
		reqs = append(reqs, workers.Request{Graph: "gauge", Thread: fmt.Sprintf("t%d", i), Partition: p, Input: json.RawMessage(`{"p":"` + p + `"}`)})
	}
	for _, id := range submitAll(t, q, reqs) {
		if o := wait(t, q, id); o.State != "done" {
			t.Fatalf("request %d: %s %s", id, o.State, o.Error)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.maxAll != 3 {
		t.Errorf("at most %d requests of the graph ran at once, want 3 (its limit, reached)", g.maxAll)
	}
	for p, want := range map[string]int{"a": 1, "b": 1, "c": 1, "big": 2} {
		if g.peak[p] > want {
			t.Errorf("partition %s: %d ran at once, limit %d", p, g.peak[p], want)
		}
	}
	ls, err := q.Limits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if l.Running != 0 {
			t.Errorf("limit %s %s counts %d running after every request ended", l.Scope, l.Key, l.Running)
		}
	}
	if len(ls) != 3 {
		t.Errorf("Limits listed %d, want the 3 set (not the partitions' copies): %+v", len(ls), ls)
	}
}

// TestRateLimitHoldsAcrossWorkers: three worker processes, four requests
// at a time each, under a graph rate limit of 20 requests per second
// (burst 4): past the first burst, requests start at 20 per second ±
// 10 %, and the workers waited on the bucket.
func TestRateLimitHoldsAcrossWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("about 3 s of rate-limited requests")
	}
	q := openQueue(t)
	ctx := context.Background()
	const rate = 20.0
	if err := q.SetLimit(ctx, workers.Limit{Scope: workers.ScopeGraph, Key: "chain", Rate: rate, Burst: 4}); err != nil {
		t.Fatal(err)
	}
	var log claimLog
	graphs := map[string]workers.Runnable{"chain": workers.Graph(chain(t, 1))}
	for range 3 {
		startWorkers(t, otherProcess(t, q), graphs, 1, workers.Concurrency(4), workers.Poll(time.Second), workers.OnEvent(log.on))
	}
	var reqs []workers.Request
	for i := range 64 {
		reqs = append(reqs, workers.Request{Graph: "chain", Thread: fmt.Sprintf("t%d", i), Input: json.RawMessage(`{}`)})
	}
	for _, id := range submitAll(t, q, reqs) {
		wait(t, q, id)
	}
	claims := log.snapshot()
	if len(claims) != len(reqs) {
		t.Fatalf("%d claims for %d requests", len(claims), len(reqs))
	}
	// Past the burst, the starts are one token apart.
	from := claims[4].At
	got := float64(len(claims)-5) / claims[len(claims)-1].At.Sub(from).Seconds()
	t.Logf("%d requests started at %.2f/s past the burst (limit %v/s), %d rate-limit waits", len(claims), got, rate, log.waits.Load())
	if got < rate*0.9 || got > rate*1.1 {
		t.Errorf("requests started at %.2f/s, want %v/s ± 10 %%", got, rate)
	}
	if log.waits.Load() == 0 {
		t.Error("no worker reported a rate-limit wait")
	}
}

// TestFairnessBetweenPartitions: W workers drain tenant "busy"'s 1,000
// requests; tenant "quiet" submits one request meanwhile. It is claimed
// before W more of busy's requests are.
func TestFairnessBetweenPartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 requests")
	}
	const W = 2
	q := openQueue(t)
	var log claimLog
	graphs := map[string]workers.Runnable{"chain": workers.Graph(chain(t, 1))}
	startWorkers(t, q, graphs, W, workers.Concurrency(1), workers.OnEvent(log.on))
	var reqs []workers.Request
	for i := range 1000 {
		reqs = append(reqs, workers.Request{Graph: "chain", Thread: fmt.Sprintf("busy%d", i), Partition: "busy", Input: json.RawMessage(`{}`)})
	}
	submitAll(t, q, reqs)
	id, err := q.Submit(context.Background(), workers.Request{Graph: "chain", Thread: "quiet", Partition: "quiet", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	submitted := time.Now()
	wait(t, q, id)
	claims := log.snapshot()
	i := slices.IndexFunc(claims, func(e workers.Event) bool { return e.Request == id })
	if i < 0 {
		t.Fatal("quiet's request ran without a claim event")
	}
	// busy's requests whose claim was sent once quiet's was queued, and
	// before quiet's claim was sent.
	before, ahead := 0, 0
	for _, e := range claims {
		switch {
		case e.Request == id:
		case e.At.Before(submitted):
			before++
		case e.At.Before(claims[i].At):
			ahead++
		}
	}
	t.Logf("busy had %d of 1,000 requests claimed when quiet's was queued; %d more were claimed before quiet's", before, ahead)
	if before > 1000-10*W {
		t.Fatalf("the workers drained busy's requests before quiet submitted (%d claimed): the test proves nothing; slow them down", before)
	}
	if ahead >= W {
		t.Errorf("%d of busy's requests were claimed before quiet's single one, want fewer than W = %d", ahead, W)
	}
}

// TestSetLimitRefuses: SetLimit refuses limits it cannot apply, with an
// error matching ErrBadLimit; a limit of neither concurrency nor rate
// deletes the limit.
func TestSetLimitRefuses(t *testing.T) {
	q := openQueue(t)
	ctx := context.Background()
	for _, l := range []workers.Limit{
		{Scope: "tenant", Key: "a", Concurrency: 1},
		{Scope: workers.ScopeGraph, Key: "", Concurrency: 1},
		{Scope: workers.ScopeGraph, Key: workers.AnyPartition, Concurrency: 1},
		{Scope: workers.ScopeGraph, Key: "g", Concurrency: -1},
		{Scope: workers.ScopePartition, Key: "a", Rate: -2},
	} {
		if err := q.SetLimit(ctx, l); !errors.Is(err, workers.ErrBadLimit) {
			t.Errorf("SetLimit(%+v) = %v, want ErrBadLimit", l, err)
		}
	}
	if err := q.SetLimit(ctx, workers.Limit{Scope: workers.ScopeGraph, Key: "g", Rate: 5}); err != nil {
		t.Fatal(err)
	}
	ls, err := q.Limits(ctx)
	if err != nil || len(ls) != 1 || ls[0] != (workers.Limit{Scope: workers.ScopeGraph, Key: "g", Rate: 5, Burst: 1}) {
		t.Fatalf("Limits = %+v, %v; want graph g at 5/s, burst 1", ls, err)
	}
	if err := q.SetLimit(ctx, workers.Limit{Scope: workers.ScopeGraph, Key: "g"}); err != nil {
		t.Fatal(err)
	}
	if ls, err := q.Limits(ctx); err != nil || len(ls) != 0 {
		t.Errorf("after an empty limit: %+v, %v; want none", ls, err)
	}
	if _, err := q.Submit(ctx, workers.Request{Graph: "g", Thread: "t", Partition: workers.AnyPartition}); err == nil {
		t.Error("Submit took a request in partition *, which is reserved")
	}
}

// TestRetentionPrunesEndedRequests: a worker with Retention deletes the
// requests that ended longer ago than it keeps, and reports it.
func TestRetentionPrunesEndedRequests(t *testing.T) {
	q := openQueue(t)
	pruned := make(chan int64, 16)
	startWorkers(t, q, map[string]workers.Runnable{"chain": workers.Graph(chain(t, 1))}, 1,
		workers.Retention(time.Millisecond, 50*time.Millisecond),
		workers.OnEvent(func(_ context.Context, e workers.Event) {
			if e.Kind == workers.EventPrune && e.Pruned > 0 {
				pruned <- e.Pruned
			}
		}))
	id := submitAll(t, q, []workers.Request{{Graph: "chain", Thread: "t", Input: json.RawMessage(`{}`)}})[0]
	// No Wait for the request: kept 1 ms after it ends, it can be pruned
	// before a Wait polling every 10 ms reads its outcome. The pruner
	// deletes only requests that ended, so its report says it did.
	select {
	case n := <-pruned:
		if n != 1 {
			t.Errorf("pruned %d requests, want 1", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the pruner deleted nothing in 10 s")
	}
	if _, err := q.Outcome(context.Background(), id); !errors.Is(err, workers.ErrNoRequest) {
		t.Errorf("the pruned request's outcome: %v, want ErrNoRequest", err)
	}
}

// TestAnyPartitionLimitIsCopiedAndReset: a partition's first request
// copies AnyPartition's limit; setting AnyPartition's limit again resets
// the copies, and deleting it deletes them, so the partition's requests
// run unlimited.
func TestAnyPartitionLimitIsCopiedAndReset(t *testing.T) {
	q := openQueue(t)
	ctx := context.Background()
	if err := q.SetLimit(ctx, workers.Limit{Scope: workers.ScopePartition, Key: workers.AnyPartition, Concurrency: 1}); err != nil {
		t.Fatal(err)
	}
	submitAll(t, q, []workers.Request{{Graph: "gauge", Thread: "t0", Partition: "a", Input: json.RawMessage(`{"p":"a"}`)}})
	copies := func() (n, concurrency int) {
		t.Helper()
		err := q.Store().Pool().QueryRow(ctx, `SELECT count(*), coalesce(max(concurrency), 0) FROM "`+q.Store().SchemaName()+`".ilmek_flow WHERE inherited AND key = 'a'`).Scan(&n, &concurrency)
		if err != nil {
			t.Fatal(err)
		}
		return n, concurrency
	}
	if n, c := copies(); n != 1 || c != 1 {
		t.Fatalf("partition a's copy: %d rows, concurrency %d; want 1 row of concurrency 1", n, c)
	}
	if err := q.SetLimit(ctx, workers.Limit{Scope: workers.ScopePartition, Key: workers.AnyPartition, Concurrency: 3}); err != nil {
		t.Fatal(err)
	}
	if n, c := copies(); n != 1 || c != 3 {
		t.Fatalf("after resetting *: %d rows, concurrency %d; want 1 row of concurrency 3", n, c)
	}
	if err := q.DeleteLimit(ctx, workers.ScopePartition, workers.AnyPartition); err != nil {
		t.Fatal(err)
	}
	if n, _ := copies(); n != 0 {
		t.Fatalf("after deleting *: %d copies left", n)
	}
	g := gauge{until: func(g *gauge) bool { return g.peak["a"] >= 2 }}
	startWorkers(t, q, map[string]workers.Runnable{"gauge": workers.Graph(g.graph(t, 30*time.Millisecond))}, 1, workers.Concurrency(4))
	var reqs []workers.Request
	for i := 1; i < 8; i++ {
		reqs = append(reqs, workers.Request{Graph: "gauge", Thread: fmt.Sprintf("t%d", i), Partition: "a", Input: json.RawMessage(`{"p":"a"}`)})
	}
	for _, id := range submitAll(t, q, reqs) {
		wait(t, q, id)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.peak["a"] < 2 {
		t.Errorf("with no limit left, partition a ran at most %d at once; want more than 1", g.peak["a"])
	}
}
