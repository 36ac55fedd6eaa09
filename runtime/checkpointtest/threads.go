package checkpointtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

var threadContracts = []contract{
	{"ThreadsOutcomeOfEachEnd", testThreadsOutcome},
	{"ThreadsMetadataMerges", testThreadsMeta},
	{"ThreadsFilters", testThreadsFilters},
	{"ThreadsPagingStableUnderUpdates", testThreadsPaging},
	{"ThreadsQueryRefused", testThreadsQueryRefused},
	{"ThreadsRecordFencedAndDeleted", testThreadsFenced},
	{"ThreadsDeletedDuringRunStayGone", testThreadsDeletedDuringRun},
	{"ThreadsStoppedAtBoundaryAborted", testThreadsStopped},
	{"ThreadsParkedOnTimerThenWoken", testThreadsParked},
}

// lister returns cp's ThreadLister and ThreadRecorder, or skips the test.
func lister(t *testing.T, cp runtime.Checkpointer) (checkpoint.ThreadLister, checkpoint.ThreadRecorder) {
	t.Helper()
	l, ok1 := cp.(checkpoint.ThreadLister)
	r, ok2 := cp.(checkpoint.ThreadRecorder)
	if !ok1 || !ok2 {
		t.Skipf("%T is not a checkpoint.ThreadLister and checkpoint.ThreadRecorder", cp)
	}
	return l, r
}

// listAll pages through q with the given page size and returns every
// thread, failing t on a page over the limit.
func listAll(t *testing.T, l checkpoint.ThreadLister, q checkpoint.ThreadQuery) []checkpoint.ThreadInfo {
	t.Helper()
	var out []checkpoint.ThreadInfo
	for range 1000 {
		page, err := l.ListThreads(t.Context(), q)
		if err != nil {
			t.Fatalf("ListThreads(%+v): %v", q, err)
		}
		if q.Limit > 0 && len(page.Threads) > q.Limit {
			t.Fatalf("a page holds %d threads, over the limit %d", len(page.Threads), q.Limit)
		}
		out = append(out, page.Threads...)
		if page.Next == "" {
			return out
		}
		q.Cursor = page.Next
	}
	t.Fatal("ListThreads never returned a last page")
	return nil
}

func threadIDs(ts []checkpoint.ThreadInfo) []string {
	out := make([]string, len(ts))
	for i, th := range ts {
		out[i] = th.ID
	}
	return out
}

// testThreadsOutcome: a run that ends done, interrupted, error or aborted
// records that outcome with its run id (and, for an error or an abort, the
// error text; for a pause, its interrupts with id, node and payload); a
// failed superstep writes no checkpoint but the outcome is recorded; a
// resume that finishes the thread replaces the outcome.
func testThreadsOutcome(t *testing.T, cp runtime.Checkpointer) {
	l, _ := lister(t, cp)
	ctx := t.Context()
	started := make(chan struct{}, 1)
	g := compile(t, runtime.NewBuilder("ends").Channel("mode", "").Channel("answer", "").
		Node("work", func(c *runtime.Ctx, v runtime.Values) (runtime.Values, error) {
			switch v["mode"] {
			case "ask":
				ok, err := runtime.Interrupt[string](c, map[string]any{"question": "approve?"})
				if err != nil {
					return nil, err
				}
				return runtime.Values{"answer": ok}, nil
			case "fail":
				return nil, errors.New("the card was declined")
			case "hang":
				started <- struct{}{}
				<-c.Done()
				return nil, c.Err()
			}
			return runtime.Values{"answer": "none needed"}, nil
		}).
		Edge(spec.Start, "work").Edge("work", spec.End))
	runs := map[string]runtime.Result[runtime.Values]{}
	for _, mode := range []string{"done", "ask", "fail"} {
		res, _ := g.Thread(cp, "t-"+mode).Invoke(ctx, runtime.Values{"mode": mode}, runtime.WithThreadMeta(map[string]string{"mode": mode}))
		runs[mode] = res
	}
	hctx, cancel := context.WithCancel(ctx)
	go func() { <-started; cancel() }()
	runs["hang"], _ = g.Thread(cp, "t-hang").Invoke(hctx, runtime.Values{"mode": "hang"}, runtime.WithThreadMeta(map[string]string{"mode": "hang"}))
	want := map[string]runtime.Status{"done": runtime.StatusDone, "ask": runtime.StatusInterrupted, "fail": runtime.StatusError, "hang": runtime.StatusAborted}
	for mode, status := range want {
		if runs[mode].Status != status {
			t.Fatalf("run %s ended %s (%v), want %s", mode, runs[mode].Status, runs[mode].Err, status)
		}
		page, err := l.ListThreads(ctx, checkpoint.ThreadQuery{Status: status})
		if err != nil {
			t.Fatal(err)
		}
		if got := threadIDs(page.Threads); !slices.Equal(got, []string{"t-" + mode}) {
			t.Fatalf("status %s lists %v, want [t-%s]", status, got, mode)
		}
		info := page.Threads[0]
		if info.Outcome.RunID != runs[mode].RunID || info.Outcome.Ended.IsZero() {
			t.Errorf("thread t-%s: outcome %+v, want run id %s and an end time", mode, info.Outcome, runs[mode].RunID)
		}
		if info.Meta["mode"] != mode {
			t.Errorf("thread t-%s: metadata %v, want mode=%s", mode, info.Meta, mode)
		}
		if (info.Outcome.Error != "") != (status == runtime.StatusError || status == runtime.StatusAborted) {
			t.Errorf("thread t-%s: outcome error %q for status %s", mode, info.Outcome.Error, status)
		}
		if info.Updated.IsZero() {
			t.Errorf("thread t-%s: no update time", mode)
		}
	}
	failed, _ := l.ListThreads(ctx, checkpoint.ThreadQuery{Status: runtime.StatusError})
	if e := failed.Threads[0].Outcome.Error; !strings.Contains(e, "the card was declined") {
		t.Errorf("the failed run's outcome error %q does not say why", e)
	}
	asked, _ := l.ListThreads(ctx, checkpoint.ThreadQuery{Status: runtime.StatusInterrupted})
	p := asked.Threads[0].Pending
	if len(p) != 1 || p[0].ID != runs["ask"].Pending[0].ID || p[0].Node != "work" || string(p[0].Payload) != `{"question":"approve?"}` {
		t.Fatalf("the paused thread's pending interrupts = %+v, want %+v", p, runs["ask"].Pending)
	}
	// The failed superstep wrote no checkpoint beyond the run's start.
	if cps, _ := cp.List(ctx, "t-fail", 0); len(cps) != 1 {
		t.Errorf("the failed run left %d checkpoints, want its start checkpoint only", len(cps))
	}
	res, err := g.Thread(cp, "t-ask").Resume(ctx, runtime.Answer("yes"))
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("resume: %s, %v", res.Status, err)
	}
	done := listAll(t, l, checkpoint.ThreadQuery{Status: runtime.StatusDone})
	if got := threadIDs(done); !slices.Equal(got, []string{"t-ask", "t-done"}) {
		t.Fatalf("done threads after the resume: %v, want [t-ask t-done] (the resumed one updated last)", got)
	}
	if done[0].Outcome.RunID != res.RunID || len(done[0].Pending) != 0 || done[0].Meta["mode"] != "ask" {
		t.Errorf("the resumed thread: %+v; want the resume's run id, no pending, its metadata kept", done[0])
	}
	// A refused run (the thread is not interrupted) records nothing.
	if _, err := g.Thread(cp, "t-done").Resume(ctx, runtime.Answer("again")); err == nil {
		t.Fatal("resuming a finished thread was not refused")
	}
	again := listAll(t, l, checkpoint.ThreadQuery{Status: runtime.StatusDone})
	if again[1].Outcome != done[1].Outcome {
		t.Errorf("a refused resume changed the outcome: %+v, was %+v", again[1].Outcome, done[1].Outcome)
	}
}

// testThreadsMeta: WithThreadMeta merges into the thread's metadata (a key
// given "" is removed), RecordThread creates a thread that has no
// checkpoint, and a run with an invalid key or no recorder is refused.
func testThreadsMeta(t *testing.T, cp runtime.Checkpointer) {
	l, rec := lister(t, cp)
	ctx := t.Context()
	g := compile(t, runtime.NewBuilder("meta").Channel("n", "").
		Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"n": 1}, nil }).
		Edge(spec.Start, "a").Edge("a", spec.End))
	meta := func(m map[string]string) {
		t.Helper()
		if _, err := g.Thread(cp, "m").Invoke(ctx, nil, runtime.WithThreadMeta(m)); err != nil {
			t.Fatal(err)
		}
	}
	meta(map[string]string{"user": "ada", "team": "ops"})
	meta(map[string]string{"team": "", "ticket": "42"})
	if _, err := g.Thread(cp, "m").Invoke(ctx, nil); err != nil { // no metadata: kept as is
		t.Fatal(err)
	}
	all := listAll(t, l, checkpoint.ThreadQuery{})
	if len(all) != 1 || all[0].ID != "m" {
		t.Fatalf("threads = %v, want [m]", threadIDs(all))
	}
	if d := cmp.Diff(map[string]string{"user": "ada", "ticket": "42"}, all[0].Meta); d != "" {
		t.Errorf("merged metadata (-want +got):\n%s", d)
	}
	if err := rec.RecordThread(ctx, "fresh", checkpoint.ThreadWrite{Meta: map[string]string{"user": "ada"}}); err != nil {
		t.Fatal(err)
	}
	got := listAll(t, l, checkpoint.ThreadQuery{Meta: map[string]string{"user": "ada"}})
	if ids := threadIDs(got); !slices.Equal(ids, []string{"fresh", "m"}) {
		t.Fatalf("threads of user ada: %v, want [fresh m] (fresh updated last)", ids)
	}
	if got[0].Outcome.Status != "" || len(got[0].Pending) != 0 {
		t.Errorf("a thread with no run has outcome %+v", got[0].Outcome)
	}
	if _, err := g.Thread(cp, "bad").Invoke(ctx, nil, runtime.WithThreadMeta(map[string]string{"": "x"})); err == nil {
		t.Error("WithThreadMeta with an empty key was not refused")
	}
	if _, err := g.Invoke(ctx, nil, runtime.WithThreadMeta(map[string]string{"a": "b"})); err == nil {
		t.Error("WithThreadMeta without a checkpointer was not refused")
	}
	if ids := threadIDs(listAll(t, l, checkpoint.ThreadQuery{})); slices.Contains(ids, "bad") {
		t.Error("a refused run created its thread")
	}
}

// putAt stores a checkpoint of thread created at unix second sec.
func putAt(t *testing.T, cp runtime.Checkpointer, thread string, sec int64) {
	t.Helper()
	c := mk(thread, "", 0)
	c.Created = time.Unix(sec, 0).UTC()
	if err := cp.Put(t.Context(), c, nil); err != nil {
		t.Fatal(err)
	}
}

// testThreadsFilters: id, status, metadata (every pair) and updated
// before/after select; the order is newest first, ties by id descending.
func testThreadsFilters(t *testing.T, cp runtime.Checkpointer) {
	l, rec := lister(t, cp)
	ctx := t.Context()
	const base = 1_800_000_000
	for i, th := range []string{"a", "b", "c", "d", "e"} {
		putAt(t, cp, th, base+int64(i/2)) // a,b at base; c,d at base+1; e at base+2
	}
	end := func(th string, s runtime.Status, meta map[string]string) {
		t.Helper()
		o := &checkpoint.ThreadOutcome{Status: s, RunID: "run-" + th, Ended: time.Unix(base-100, 0).UTC()}
		if err := rec.RecordThread(ctx, th, checkpoint.ThreadWrite{Meta: meta, Outcome: o}); err != nil {
			t.Fatal(err)
		}
	}
	end("a", runtime.StatusDone, map[string]string{"team": "ops", "tier": "1"})
	end("b", runtime.StatusInterrupted, map[string]string{"team": "ops", "tier": "2"})
	end("c", runtime.StatusInterrupted, map[string]string{"team": "dev"})
	end("d", runtime.StatusError, nil)
	for _, c := range []struct {
		name string
		q    checkpoint.ThreadQuery
		want []string
	}{
		{"all", checkpoint.ThreadQuery{}, []string{"e", "d", "c", "b", "a"}},
		{"interrupted", checkpoint.ThreadQuery{Status: runtime.StatusInterrupted}, []string{"c", "b"}},
		{"team ops", checkpoint.ThreadQuery{Meta: map[string]string{"team": "ops"}}, []string{"b", "a"}},
		{"team ops tier 2", checkpoint.ThreadQuery{Meta: map[string]string{"team": "ops", "tier": "2"}}, []string{"b"}},
		{"interrupted ops", checkpoint.ThreadQuery{Status: runtime.StatusInterrupted, Meta: map[string]string{"team": "ops"}}, []string{"b"}},
		{"no such value", checkpoint.ThreadQuery{Meta: map[string]string{"team": "qa"}}, nil},
		{"after base", checkpoint.ThreadQuery{UpdatedAfter: time.Unix(base, 0)}, []string{"e", "d", "c"}},
		{"before base+2", checkpoint.ThreadQuery{UpdatedBefore: time.Unix(base+2, 0)}, []string{"d", "c", "b", "a"}},
		{"between", checkpoint.ThreadQuery{UpdatedAfter: time.Unix(base, 0), UpdatedBefore: time.Unix(base+2, 0)}, []string{"d", "c"}},
		{"aborted", checkpoint.ThreadQuery{Status: runtime.StatusAborted}, nil},
		{"paged by 2", checkpoint.ThreadQuery{Limit: 2}, []string{"e", "d", "c", "b", "a"}},
		{"id", checkpoint.ThreadQuery{ID: "c"}, []string{"c"}},
		{"id with its status", checkpoint.ThreadQuery{ID: "b", Status: runtime.StatusInterrupted, Meta: map[string]string{"tier": "2"}}, []string{"b"}},
		{"id, other status", checkpoint.ThreadQuery{ID: "a", Status: runtime.StatusInterrupted}, nil},
		{"id, other metadata", checkpoint.ThreadQuery{ID: "a", Meta: map[string]string{"team": "dev"}}, nil},
		{"id, updated before", checkpoint.ThreadQuery{ID: "e", UpdatedAfter: time.Unix(base+2, 0)}, nil},
		{"id of no thread", checkpoint.ThreadQuery{ID: "z"}, nil},
		{"id, a prefix of one", checkpoint.ThreadQuery{ID: "a%"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := threadIDs(listAll(t, l, c.q))
			if len(got) == 0 {
				got = nil
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("ListThreads(%+v) = %v, want %v", c.q, got, c.want)
			}
		})
	}
	page, err := l.ListThreads(ctx, checkpoint.ThreadQuery{Limit: 5})
	if err != nil || page.Next != "" || len(page.Threads) != 5 {
		t.Errorf("a page holding the last thread: %d threads, next %q, err %v; want 5, no next", len(page.Threads), page.Next, err)
	}
	if u := page.Threads[0].Updated; !u.Equal(time.Unix(base+2, 0)) {
		t.Errorf("thread e updated %v, want its checkpoint's time %v", u, time.Unix(base+2, 0))
	}
}

// testThreadsPaging: paging with a small limit while other goroutines
// update threads never returns a thread twice and returns every thread
// that was not updated meanwhile.
func testThreadsPaging(t *testing.T, cp runtime.Checkpointer) {
	l, _ := lister(t, cp)
	const n = 40
	const base = 1_800_000_000
	for i := range n {
		putAt(t, cp, fmt.Sprintf("p%02d", i), base+int64(i/3)) // ties in threes
	}
	for round := range 3 {
		moved := map[string]bool{}
		var mu sync.Mutex
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				th := fmt.Sprintf("p%02d", (i*7+round)%n)
				mu.Lock()
				moved[th] = true
				mu.Unlock()
				c := mk(th, "", i)
				c.Created = time.Unix(base+1000+int64(round*1000+i), 0).UTC()
				if err := cp.Put(t.Context(), c, nil); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(200 * time.Microsecond)
			}
		}()
		var seen []string
		q := checkpoint.ThreadQuery{Limit: 4}
		for {
			page, err := l.ListThreads(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, threadIDs(page.Threads)...)
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
			time.Sleep(time.Millisecond) // let updates land between pages
		}
		close(stop)
		wg.Wait()
		count := map[string]int{}
		for _, id := range seen {
			count[id]++
			if count[id] > 1 {
				t.Errorf("round %d: thread %s listed twice", round, id)
			}
		}
		for i := range n {
			id := fmt.Sprintf("p%02d", i)
			if !moved[id] && count[id] != 1 {
				t.Errorf("round %d: thread %s, not updated during the listing, listed %d times", round, id, count[id])
			}
		}
	}
	final := threadIDs(listAll(t, l, checkpoint.ThreadQuery{Limit: 3}))
	if len(final) != n {
		t.Fatalf("a quiet listing found %d threads, want %d", len(final), n)
	}
}

// testThreadsQueryRefused: a malformed query or cursor fails with an error
// matching checkpoint.ErrThreadQuery.
func testThreadsQueryRefused(t *testing.T, cp runtime.Checkpointer) {
	l, _ := lister(t, cp)
	for _, q := range []checkpoint.ThreadQuery{
		{Status: "running"},
		{Meta: map[string]string{"": "x"}},
		{Limit: -1},
		{Cursor: "not-a-cursor"},
		{Cursor: "t1.!!!"},
	} {
		if _, err := l.ListThreads(t.Context(), q); !errors.Is(err, checkpoint.ErrThreadQuery) {
			t.Errorf("ListThreads(%+v) = %v, want an error matching ErrThreadQuery", q, err)
		}
	}
	if _, err := l.ListThreads(t.Context(), checkpoint.ThreadQuery{Limit: checkpoint.MaxThreadLimit + 1}); err != nil {
		t.Errorf("a limit over the maximum is capped, not refused: %v", err)
	}
}

// testThreadsFenced: RecordThread under a lease of a deleted thread is
// refused, and DeleteThread removes the thread from the listing.
func testThreadsFenced(t *testing.T, cp runtime.Checkpointer) {
	l, _ := lister(t, cp)
	ctx := t.Context()
	lease, err := cp.Lease(ctx, "f", checkpoint.LeaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	w := checkpoint.ThreadWrite{Meta: map[string]string{"k": "v"}, Outcome: &checkpoint.ThreadOutcome{Status: runtime.StatusDone, RunID: "r1", Ended: time.Now()}}
	if err := lease.Commit(ctx, checkpoint.Commit{Thread: &w}); err != nil {
		t.Fatalf("RecordThread under the lease: %v", err)
	}
	if err := cp.DeleteThread(ctx, "f"); err != nil {
		t.Fatal(err)
	}
	if err := lease.Commit(ctx, checkpoint.Commit{Thread: &w}); err == nil {
		t.Error("RecordThread under the lease of a deleted thread was not refused")
	}
	if ids := threadIDs(listAll(t, l, checkpoint.ThreadQuery{})); len(ids) != 0 {
		t.Errorf("after DeleteThread the listing holds %v", ids)
	}
}

// testThreadsDeletedDuringRun: a run whose thread is deleted under it
// records neither its outcome nor its metadata nor its events: nothing of
// the thread reappears.
func testThreadsDeletedDuringRun(t *testing.T, cp runtime.Checkpointer) {
	l, _ := lister(t, cp)
	var run string
	g := compile(t, runtime.NewBuilder("deleted").Channel("x", "").
		Node("first", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"x": 1}, nil }).
		Node("second", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			run = c.RunID()
			if err := cp.DeleteThread(context.Background(), "gone"); err != nil {
				return nil, err
			}
			return runtime.Values{"x": 2}, nil
		}).
		Edge(spec.Start, "first").Edge("first", "second").Edge("second", spec.End))
	opts := []runtime.RunOption{runtime.WithThreadMeta(map[string]string{"k": "v"})}
	if es, ok := cp.(checkpoint.EventStore); ok {
		opts = append(opts, runtime.WithEventLog())
		defer func() {
			if got, err := es.ReadEvents(t.Context(), run, 0, 0); err != nil || len(got) != 0 {
				t.Errorf("the deleted thread's run left %d events (%v)", len(got), err)
			}
		}()
	}
	res, err := g.Thread(cp, "gone").Invoke(t.Context(), nil, opts...)
	if res.Status != runtime.StatusError || !errors.Is(err, checkpoint.ErrThreadDeleted) {
		t.Fatalf("status %q, err %v; want error matching ErrThreadDeleted", res.Status, err)
	}
	if ids := threadIDs(listAll(t, l, checkpoint.ThreadQuery{})); len(ids) != 0 {
		t.Errorf("after the run the listing holds %v", ids)
	}
}

// testThreadsStopped: a run stopped between supersteps (WithStopSignal)
// records the outcome aborted with why.
func testThreadsStopped(t *testing.T, cp runtime.Checkpointer) {
	l, _ := lister(t, cp)
	stop := make(chan struct{})
	g := compile(t, runtime.NewBuilder("stopped").Channel("x", "").
		Node("first", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			close(stop)
			return runtime.Values{"x": 1}, nil
		}).
		Node("second", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"x": 2}, nil }).
		Edge(spec.Start, "first").Edge("first", "second").Edge("second", spec.End))
	res, _ := g.Thread(cp, "s").Invoke(t.Context(), nil, runtime.WithStopSignal(stop))
	if res.Status != runtime.StatusAborted {
		t.Fatalf("status %q, want aborted", res.Status)
	}
	page, err := l.ListThreads(t.Context(), checkpoint.ThreadQuery{Status: runtime.StatusAborted})
	if err != nil || len(page.Threads) != 1 || page.Threads[0].Outcome.RunID != res.RunID || !strings.Contains(page.Threads[0].Outcome.Error, res.Err.Error()) {
		t.Fatalf("aborted threads: %+v %v; want s, run %s, error %q", page.Threads, err, res.RunID, res.Err)
	}
}
