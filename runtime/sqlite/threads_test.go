package sqlite

import (
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// TestEventsReconnectFromAnotherStore: a run stores its events as it goes
// (with the checkpoint of each superstep, in its commit); a reader with its own Store on the same file
// reads what is there mid-run, then reconnects after the last Seq it saw
// and gets the rest, gap-free, up to run_end.
func TestEventsReconnectFromAnotherStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.db")
	writer, reader := openT(t, path), openT(t, path)
	gate := make(chan struct{})
	g, err := runtime.NewBuilder("slow").Channel("n", "").
		Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"n": 1}, nil }).
		Node("b", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			<-gate
			return runtime.Values{"n": 2}, nil
		}).
		Edge(spec.Start, "a").Edge("a", "b").Edge("b", spec.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	runID := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		first := true
		for ev, err := range g.Thread(writer, "t").Stream(t.Context(), nil, runtime.WithEventLog()) {
			if err != nil {
				done <- err
				return
			}
			if first {
				runID <- ev.RunID
				first = false
			}
		}
		done <- nil
	}()
	id := <-runID
	// Wait until the first superstep's events are stored (node a's end,
	// committed with its checkpoint): node b's start is in the batch of
	// the superstep it runs in, which has not ended.
	var seen []checkpoint.StoredEvent
	deadline := time.Now().Add(10 * time.Second)
	for !slices.ContainsFunc(seen, func(e checkpoint.StoredEvent) bool { return e.Kind == string(runtime.EventNodeEnd) }) {
		if time.Now().After(deadline) {
			t.Fatalf("the first superstep's events never reached the file; read %d", len(seen))
		}
		time.Sleep(5 * time.Millisecond)
		if seen, err = reader.ReadEvents(t.Context(), id, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if slices.ContainsFunc(seen, func(e checkpoint.StoredEvent) bool { return e.Kind == string(runtime.EventRunEnd) }) {
		t.Fatal("run_end stored while node b still waits")
	}
	n := seen[len(seen)-1].Seq
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rest, err := reader.ReadEvents(t.Context(), id, n, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range rest {
		if e.Seq != n+int64(i)+1 {
			t.Fatalf("event %d after seq %d has seq %d: a gap", i, n, e.Seq)
		}
	}
	if len(rest) == 0 || rest[len(rest)-1].Kind != string(runtime.EventRunEnd) {
		t.Fatalf("after seq %d the reader got %d events, the last not run_end", n, len(rest))
	}
}

// TestPreReleaseVersion3File: a file of schema version 3 written before
// version 3 held thread records and the event log gets them on Open, its
// threads listable.
func TestPreReleaseVersion3File(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v3pre.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	// Migrations 1 to 3 without the part of 3 that such a file lacks, and
	// the checkpoint of a run that ended.
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	v3, _, _ := strings.Cut(ms[2].SQL, threadsMarker)
	for _, q := range []string{"CREATE TABLE ilmek_meta (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
		"INSERT INTO ilmek_meta (key, value) VALUES ('schema_version', '3')", ms[0].SQL, ms[1].SQL, v3,
		`INSERT INTO ilmek_checkpoints (thread_id, id, plan_id, step, created_ns, channels, next, pending) VALUES ('old', 'c1', 'c1', 1, 1, '{"n":1}', '[]', 'null')`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s := openT(t, path)
	page, err := s.ListThreads(t.Context(), checkpoint.ThreadQuery{})
	if err != nil || len(page.Threads) != 1 || page.Threads[0].ID != "old" || page.Threads[0].Outcome.Status != runtime.StatusDone {
		t.Fatalf("threads after reopening: %+v %v, want old, done", page.Threads, err)
	}
	if _, err := s.ReadEvents(t.Context(), "x", 0, 0); err != nil {
		t.Fatal(err)
	}
}
