package postgres_test

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

// storedEvents returns events from..to of run in thread, a second apart.
func storedEvents(run, thread string, from, to int64) []checkpoint.StoredEvent {
	var out []checkpoint.StoredEvent
	for s := from; s <= to; s++ {
		out = append(out, checkpoint.StoredEvent{RunID: run, Seq: s, ThreadID: thread, Time: time.Unix(1_800_000_000+s, 0).UTC(), Kind: "custom",
			Data: json.RawMessage(fmt.Sprintf(`{"type":"custom","seq":%d}`, s))})
	}
	return out
}

// eventSeqs reads the run's events after after, at most limit, as Seqs.
func eventSeqs(t *testing.T, s interface {
	ReadEvents(context.Context, string, int64, int) ([]checkpoint.StoredEvent, error)
}, run string, after int64, limit int) []int64 {
	t.Helper()
	got, err := s.ReadEvents(t.Context(), run, after, limit)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, e := range got {
		out = append(out, e.Seq)
	}
	return out
}

// TestEventLogRowPerWrite: a run with an event log stores its events in a
// row per write (one per superstep here, about five events each), not a
// row per event, and reads them back gap-free in order, from any Seq.
func TestEventLogRowPerWrite(t *testing.T) {
	s := openStore(t, "evrows")
	ctx := t.Context()
	const steps = 6
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
	res, err := g.Thread(s, "t").Invoke(ctx, runtime.Values{}, runtime.WithEventLog())
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.ReadEvents(ctx, res.RunID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 4*steps || all[len(all)-1].Kind != string(runtime.EventRunEnd) {
		t.Fatalf("the run stored %d events ending %q; want at least %d ending run_end", len(all), all[len(all)-1].Kind, 4*steps)
	}
	for i, e := range all {
		if e.Seq != int64(i+1) || e.RunID != res.RunID || e.ThreadID != "t" {
			t.Fatalf("event %d: run %q thread %q Seq %d; want Seq %d of the run in thread t", i, e.RunID, e.ThreadID, e.Seq, i+1)
		}
		var ev runtime.Event
		if err := json.Unmarshal(e.Data, &ev); err != nil || ev.Seq != e.Seq || string(ev.Type) != e.Kind || !ev.Time.Equal(e.Time) {
			t.Fatalf("event %d's data %s does not match its Seq %d, kind %q, time %v (%v)", i, e.Data, e.Seq, e.Kind, e.Time, err)
		}
	}
	var rows int
	if err := s.Pool().QueryRow(ctx, "SELECT count(*) FROM "+s.SchemaName()+".ilmek_events WHERE run_id = $1", res.RunID).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows > steps+2 {
		t.Errorf("%d events are stored in %d rows; want a row per write, at most %d", len(all), rows, steps+2)
	}
	for after := range int64(len(all)) {
		got := eventSeqs(t, s, res.RunID, after, 3)
		want := []int64{after + 1, after + 2, after + 3}[:min(3, int64(len(all))-after)]
		if !slices.Equal(got, want) {
			t.Errorf("ReadEvents(after %d, limit 3) = %v, want %v", after, got, want)
		}
	}
}

// TestEventRowsOfEarlierVersions: rows stored before migration 11, an
// event each without first_seq, read as they were, beside newer rows.
func TestEventRowsOfEarlierVersions(t *testing.T) {
	s := openStore(t, "evold")
	ctx := t.Context()
	for _, e := range storedEvents("r", "t", 1, 3) {
		if _, err := s.Pool().Exec(ctx, "INSERT INTO "+s.SchemaName()+".ilmek_events (run_id, seq, thread_id, time_ns, kind, data) VALUES ($1, $2, $3, $4, $5, $6)",
			e.RunID, e.Seq, e.ThreadID, e.Time.UnixNano(), e.Kind, []byte(e.Data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AppendEvents(ctx, storedEvents("r", "t", 4, 7)); err != nil {
		t.Fatal(err)
	}
	got, err := s.ReadEvents(ctx, "r", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := storedEvents("r", "t", 1, 7)
	if len(got) != len(want) {
		t.Fatalf("read %d events, want 7", len(got))
	}
	for i := range want {
		if g, w := got[i], want[i]; g.Seq != w.Seq || g.Kind != w.Kind || !g.Time.Equal(w.Time) || string(g.Data) != string(w.Data) || g.ThreadID != w.ThreadID {
			t.Errorf("event %d = %+v, want %+v", i, g, w)
		}
	}
	if got := eventSeqs(t, s, "r", 2, 3); !slices.Equal(got, []int64{3, 4, 5}) {
		t.Errorf("ReadEvents(after 2, limit 3) = %v, want [3 4 5]", got)
	}
}

// TestEventRowsOverlap: a write stored again with more events (a retry
// after a cut connection hid that the first try committed) reads each
// event once; a write with fewer events under a stored row's key does not
// replace it; a page of rows that holds fewer new events than the limit
// reads on.
func TestEventRowsOverlap(t *testing.T) {
	s := openStore(t, "evover")
	ctx := t.Context()
	for _, w := range [][2]int64{{1, 5}, {1, 8}, {5, 5}, {9, 9}, {9, 12}} {
		if err := s.AppendEvents(ctx, storedEvents("r", "t", w[0], w[1])); err != nil {
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
		if got := eventSeqs(t, s, "r", c.after, c.limit); !slices.Equal(got, c.want) {
			t.Errorf("ReadEvents(after %d, limit %d) = %v, want %v", c.after, c.limit, got, c.want)
		}
	}
}
