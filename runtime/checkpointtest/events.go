package checkpointtest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

var eventContracts = []contract{
	{"EventsOrderAfterSeqAndLimit", testEventsRead},
	{"EventsStoredAgainOnce", testEventsAgain},
	{"EventsCappedPerRun", testEventsCap},
	{"EventsDeletedWithThreadAndPruned", testEventsDelete},
	{"EventsOfAnInvokedRun", testEventsRun},
}

// events returns cp's EventStore, or skips the test.
func events(t *testing.T, cp runtime.Checkpointer) checkpoint.EventStore {
	t.Helper()
	es, ok := cp.(checkpoint.EventStore)
	if !ok {
		t.Skipf("%T is not a checkpoint.EventStore", cp)
	}
	return es
}

// mkEvents returns events from..to (inclusive) of run in thread, one a
// second from unix second sec.
func mkEvents(run, thread string, from, to int64, sec int64) []checkpoint.StoredEvent {
	var out []checkpoint.StoredEvent
	for s := from; s <= to; s++ {
		out = append(out, checkpoint.StoredEvent{RunID: run, Seq: s, ThreadID: thread, Time: time.Unix(sec+s, 0).UTC(), Kind: "custom",
			Data: json.RawMessage(fmt.Sprintf(`{"type":"custom","seq":%d}`, s))})
	}
	return out
}

func seqs(es []checkpoint.StoredEvent) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.Seq
	}
	return out
}

func readSeqs(t *testing.T, es checkpoint.EventStore, run string, after int64, limit int) []int64 {
	t.Helper()
	got, err := es.ReadEvents(t.Context(), run, after, limit)
	if err != nil {
		t.Fatalf("ReadEvents(%s, %d, %d): %v", run, after, limit, err)
	}
	return seqs(got)
}

// testEventsRead: events come back in Seq order with every field, after a
// given Seq, at most limit; runs do not mix; an unknown run has none.
func testEventsRead(t *testing.T, cp runtime.Checkpointer) {
	es := events(t, cp)
	ctx := t.Context()
	for _, b := range [][]checkpoint.StoredEvent{mkEvents("r1", "t", 1, 3, 1_800_000_000), mkEvents("r2", "t", 1, 2, 1_800_000_000), mkEvents("r1", "t", 4, 6, 1_800_000_000)} {
		if err := es.AppendEvents(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := es.AppendEvents(ctx, nil); err != nil {
		t.Errorf("AppendEvents of nothing: %v", err)
	}
	all, err := es.ReadEvents(ctx, "r1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := mkEvents("r1", "t", 1, 6, 1_800_000_000)
	if len(all) != len(want) {
		t.Fatalf("run r1 has %v, want seqs 1..6", seqs(all))
	}
	for i := range want {
		w, g := want[i], all[i]
		if g.RunID != w.RunID || g.Seq != w.Seq || g.ThreadID != w.ThreadID || !g.Time.Equal(w.Time) || g.Kind != w.Kind {
			t.Errorf("event %d = %+v, want %+v", i, g, w)
		}
		sameJSON(t, fmt.Sprintf("event %d data", i), w.Data, g.Data)
	}
	for _, c := range []struct {
		run   string
		after int64
		limit int
		want  []int64
	}{
		{"r1", 3, 0, []int64{4, 5, 6}},
		{"r1", 2, 2, []int64{3, 4}},
		{"r1", 6, 0, nil},
		{"r2", 0, 0, []int64{1, 2}},
		{"nope", 0, 0, nil},
	} {
		got := readSeqs(t, es, c.run, c.after, c.limit)
		if len(got) == 0 {
			got = nil
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("ReadEvents(%s, after %d, limit %d) = %v, want %v", c.run, c.after, c.limit, got, c.want)
		}
	}
}

// testEventsAgain: events stored again, alone or with more after them
// (a write retried after a cut connection hid that its first try
// committed), read back once each, in order, from any Seq and with any
// limit.
func testEventsAgain(t *testing.T, cp runtime.Checkpointer) {
	es := events(t, cp)
	for _, w := range [][2]int64{{1, 5}, {1, 8}, {5, 5}, {9, 9}, {9, 12}, {3, 4}} {
		if err := es.AppendEvents(t.Context(), mkEvents("again", "t", w[0], w[1], 1_800_000_000)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		after int64
		limit int
		want  []int64
	}{
		{0, 0, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{0, 7, []int64{1, 2, 3, 4, 5, 6, 7}},
		{4, 1, []int64{5}},
		{5, 2, []int64{6, 7}},
		{8, 2, []int64{9, 10}},
		{12, 0, nil},
	} {
		got := readSeqs(t, es, "again", c.after, c.limit)
		if len(got) == 0 {
			got = nil
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("ReadEvents(after %d, limit %d) = %v, want %v", c.after, c.limit, got, c.want)
		}
	}
}

// testEventsCap: a run keeps its last checkpoint.MaxStoredEvents events.
func testEventsCap(t *testing.T, cp runtime.Checkpointer) {
	es := events(t, cp)
	const extra = 5
	if err := es.AppendEvents(t.Context(), mkEvents("big", "t", 1, checkpoint.MaxStoredEvents, 1_800_000_000)); err != nil {
		t.Fatal(err)
	}
	if err := es.AppendEvents(t.Context(), mkEvents("big", "t", checkpoint.MaxStoredEvents+1, checkpoint.MaxStoredEvents+extra, 1_800_000_000)); err != nil {
		t.Fatal(err)
	}
	got := readSeqs(t, es, "big", 0, 0)
	if len(got) != checkpoint.MaxStoredEvents || got[0] != extra+1 || got[len(got)-1] != checkpoint.MaxStoredEvents+extra {
		t.Fatalf("run holds %d events from %d to %d; want the last %d, %d to %d", len(got), got[0], got[len(got)-1], checkpoint.MaxStoredEvents, extra+1, checkpoint.MaxStoredEvents+extra)
	}
}

// testEventsDelete: DeleteThread deletes the thread's events (and only
// its); Prune drops those older than the oldest checkpoint it keeps; a
// write under the lease of a deleted thread is refused.
func testEventsDelete(t *testing.T, cp runtime.Checkpointer) {
	es := events(t, cp)
	ctx := t.Context()
	if err := es.AppendEvents(ctx, mkEvents("keep", "other", 1, 2, 1_800_000_000)); err != nil {
		t.Fatal(err)
	}
	lease, err := cp.Lease(ctx, "gone", checkpoint.LeaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	if err := lease.Commit(ctx, checkpoint.Commit{Events: mkEvents("g", "gone", 1, 3, 1_800_000_000)}); err != nil {
		t.Fatalf("AppendEvents under the lease: %v", err)
	}
	if err := cp.DeleteThread(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := lease.Commit(ctx, checkpoint.Commit{Events: mkEvents("g", "gone", 4, 5, 1_800_000_000)}); err == nil {
		t.Error("AppendEvents under the lease of a deleted thread was not refused")
	}
	if got := readSeqs(t, es, "g", 0, 0); len(got) != 0 {
		t.Errorf("the deleted thread's run still has events %v", got)
	}
	if got := readSeqs(t, es, "keep", 0, 0); len(got) != 2 {
		t.Errorf("another thread's run lost events: %v", got)
	}
	pr, ok := cp.(checkpoint.Pruner)
	if !ok {
		return
	}
	// Checkpoints at 1_800_000_010, _020 and _030; events of run "old" at
	// _001.._005 and of run "new" at _021.._025 (unix seconds).
	parent := ""
	for i := int64(1); i <= 3; i++ {
		c := mk("p", parent, int(i))
		c.Created = time.Unix(1_800_000_000+10*i, 0).UTC()
		if err := cp.Put(ctx, c, nil); err != nil {
			t.Fatal(err)
		}
		parent = c.ID
	}
	if err := es.AppendEvents(ctx, mkEvents("old", "p", 1, 5, 1_800_000_000)); err != nil {
		t.Fatal(err)
	}
	if err := es.AppendEvents(ctx, mkEvents("new", "p", 1, 5, 1_800_000_020)); err != nil {
		t.Fatal(err)
	}
	if _, err := pr.Prune(ctx, "p", checkpoint.PruneOptions{KeepLast: 2}); err != nil {
		t.Fatal(err)
	}
	if got := readSeqs(t, es, "old", 0, 0); len(got) != 0 {
		t.Errorf("Prune kept events %v of run old, older than the oldest kept checkpoint", got)
	}
	if got := readSeqs(t, es, "new", 0, 0); len(got) != 5 {
		t.Errorf("Prune dropped events of run new: %v left", got)
	}
}

// testEventsRun: a run with WithEventLog (Invoke, nobody streaming)
// stores every event of its stream, gap-free from Seq 1 to its run_end; a
// reader resumes after any Seq; a run without the option stores nothing.
func testEventsRun(t *testing.T, cp runtime.Checkpointer) {
	es := events(t, cp)
	ctx := t.Context()
	g := compile(t, runtime.NewBuilder("ev").Channel("n", "").
		Node("a", func(c *runtime.Ctx, v runtime.Values) (runtime.Values, error) {
			c.Emit(map[string]any{"progress": 1})
			return runtime.Values{"n": 1}, nil
		}).
		Node("b", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"n": 2}, nil }).
		Edge(spec.Start, "a").Edge("a", "b").Edge("b", spec.End))
	res, err := g.Thread(cp, "ev").Invoke(ctx, nil, runtime.WithEventLog())
	if err != nil {
		t.Fatal(err)
	}
	var streamed []runtime.EventType
	for ev, err := range g.Thread(checkpoint.NewMemory(), "ev-mem").Stream(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		streamed = append(streamed, ev.Type)
	}
	stored, err := es.ReadEvents(ctx, res.RunID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []runtime.EventType
	for i, se := range stored {
		if se.Seq != int64(i+1) || se.RunID != res.RunID || se.ThreadID != "ev" {
			t.Errorf("stored event %d: run %s seq %d thread %s", i, se.RunID, se.Seq, se.ThreadID)
		}
		ev, err := decodeEvent(se)
		if err != nil {
			t.Fatal(err)
		}
		if string(ev.Type) != se.Kind || ev.Seq != se.Seq {
			t.Errorf("stored event %d decodes to type %s seq %d, kind %s", i, ev.Type, ev.Seq, se.Kind)
		}
		kinds = append(kinds, ev.Type)
	}
	if !slices.Equal(kinds, streamed) {
		t.Fatalf("stored event types %v, want those a stream of the same run yields %v", kinds, streamed)
	}
	last, _ := decodeEvent(stored[len(stored)-1])
	if last.Type != runtime.EventRunEnd || last.Status != runtime.StatusDone {
		t.Errorf("last stored event %+v, want run_end done", last)
	}
	if got := readSeqs(t, es, res.RunID, 3, 0); len(got) != len(stored)-3 || got[0] != 4 {
		t.Errorf("events after seq 3: %v", got)
	}
	plain, err := g.Thread(cp, "ev2").Invoke(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := readSeqs(t, es, plain.RunID, 0, 0); len(got) != 0 {
		t.Errorf("a run without WithEventLog stored events %v", got)
	}
}

// decodeEvent decodes a stored event's Data into the run's Event.
func decodeEvent(se checkpoint.StoredEvent) (runtime.Event, error) {
	var ev runtime.Event
	err := json.Unmarshal(se.Data, &ev)
	return ev, err
}

// RunEventLog runs a chain of steps nodes (each writes its number to a
// last-write channel) on thread of cp with runtime.WithEventLog and
// returns the run's stored events, which it checks are gap-free from Seq
// 1 to the run's run_end, each of the run and thread. A store's own tests
// use it to look at how the log is stored.
func RunEventLog(t testing.TB, cp runtime.Checkpointer, thread string, steps int) []checkpoint.StoredEvent {
	t.Helper()
	es, ok := cp.(checkpoint.EventStore)
	if !ok {
		t.Fatalf("%T is not a checkpoint.EventStore", cp)
	}
	b := runtime.NewBuilder("chain").Channel("n", spec.LastWrite)
	prev := spec.Start
	for i := range steps {
		id := fmt.Sprintf("n%d", i)
		b.Node(id, func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"n": i}, nil })
		b.Edge(prev, id)
		prev = id
	}
	g, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Thread(cp, thread).Invoke(context.Background(), runtime.Values{}, runtime.WithEventLog())
	if err != nil {
		t.Fatal(err)
	}
	all, err := es.ReadEvents(context.Background(), res.RunID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 4*steps || all[len(all)-1].Kind != string(runtime.EventRunEnd) {
		t.Fatalf("the run stored %d events; want at least %d, ending with run_end", len(all), 4*steps)
	}
	for i, e := range all {
		var ev runtime.Event
		if e.Seq != int64(i+1) || e.RunID != res.RunID || e.ThreadID != thread {
			t.Fatalf("event %d: run %q thread %q Seq %d; want Seq %d of run %q in thread %q", i, e.RunID, e.ThreadID, e.Seq, i+1, res.RunID, thread)
		}
		if err := json.Unmarshal(e.Data, &ev); err != nil || ev.Seq != e.Seq || string(ev.Type) != e.Kind || !ev.Time.Equal(e.Time) {
			t.Fatalf("event %d's data %s does not match its Seq %d, kind %q and time %v (%v)", i, e.Data, e.Seq, e.Kind, e.Time, err)
		}
	}
	return all
}
