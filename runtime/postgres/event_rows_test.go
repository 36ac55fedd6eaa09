package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/checkpointtest"
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
	const steps = 6
	all := checkpointtest.RunEventLog(t, s, "t", steps)
	run := all[0].RunID
	var rows int
	if err := s.Pool().QueryRow(t.Context(), "SELECT count(*) FROM "+s.SchemaName()+".ilmek_events WHERE run_id = $1", run).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows > steps+2 {
		t.Errorf("%d events are stored in %d rows; want a row per write, at most %d", len(all), rows, steps+2)
	}
	for after := range int64(len(all)) {
		got := eventSeqs(t, s, run, after, 3)
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

// TestEventRowsOfACommit: a superstep's events are written with its
// checkpoint as one row (inserted from scalars) or, when they outgrow a
// row's bound, as several (from arrays); either way a run's events are
// read back whole, gap-free and in order, with the values its nodes
// wrote.
func TestEventRowsOfACommit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		size     int // bytes of each node's output
		moreRows bool
	}{
		{"one row a superstep", 10, false},
		{"several rows a superstep", 40 << 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t, "evcommit")
			const steps = 3
			b := runtime.NewBuilder("chain").Channel("out", spec.LastWrite)
			prev := spec.Start
			for i := range steps {
				id := fmt.Sprintf("n%d", i)
				out := strings.Repeat(string(rune('a'+i)), tc.size)
				b.Node(id, func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"out": out}, nil })
				b.Edge(prev, id)
				prev = id
			}
			g, err := b.Compile()
			if err != nil {
				t.Fatal(err)
			}
			res, err := g.Thread(s, "t").Invoke(t.Context(), runtime.Values{}, runtime.WithEventLog())
			if err != nil {
				t.Fatal(err)
			}
			all, err := s.ReadEvents(t.Context(), res.RunID, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			var ends []string
			for i, e := range all {
				if e.Seq != int64(i+1) {
					t.Fatalf("event %d has Seq %d; want %d", i, e.Seq, i+1)
				}
				var ev runtime.Event
				if err := json.Unmarshal(e.Data, &ev); err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				if ev.Type == runtime.EventNodeEnd {
					out, _ := ev.Update.(map[string]any)["out"].(string)
					if len(out) != tc.size || out != strings.Repeat(out[:1], tc.size) {
						t.Fatalf("event %d: node %s wrote %d bytes; want %d of one letter", i, ev.Node, len(out), tc.size)
					}
					ends = append(ends, ev.Node)
				}
			}
			if len(ends) != steps || all[len(all)-1].Kind != string(runtime.EventRunEnd) {
				t.Fatalf("node_end events %v in %d events; want %d, and run_end last", ends, len(all), steps)
			}
			var rows int
			if err := s.Pool().QueryRow(t.Context(), "SELECT count(*) FROM "+s.SchemaName()+".ilmek_events WHERE run_id = $1", res.RunID).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			if tc.moreRows != (rows > steps+2) {
				t.Errorf("%d events in %d rows; want more rows than writes (%d): %v", len(all), rows, steps+2, tc.moreRows)
			}
		})
	}
}
