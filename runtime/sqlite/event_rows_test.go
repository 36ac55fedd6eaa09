package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ilmek-go/ilmek/runtime/checkpointtest"
)

// TestEventLogRowPerWrite: a run with an event log stores a superstep's
// events (about five) in one or two rows, not a row each, and reads them
// back gap-free; rows stored before migration 8 (an event each, no
// first_seq) read as they were, beside newer ones.
func TestEventLogRowPerWrite(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "events.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const steps = 6
	all := checkpointtest.RunEventLog(t, s, "t", steps)
	run := all[0].RunID
	if rows := rowCount(t, s, "SELECT count(*) FROM ilmek_events WHERE run_id = ?", run); rows > 2*(steps+2) {
		t.Errorf("%d events are stored in %d rows; want one or two a write, at most %d", len(all), rows, 2*(steps+2))
	}
	// A row as version 7 stored it, after the run's last.
	last := all[len(all)-1]
	if _, err := s.w.Exec("INSERT INTO ilmek_events (run_id, seq, thread_id, time_ns, kind, data) VALUES (?, ?, ?, ?, ?, ?)",
		run, last.Seq+1, "t", last.Time.UnixNano(), "custom", []byte(`{"old":true}`)); err != nil {
		t.Fatal(err)
	}
	got, err := s.ReadEvents(ctx, run, last.Seq-2, 0)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, e := range got {
		seqs = append(seqs, e.Seq)
	}
	if want := []int64{last.Seq - 1, last.Seq, last.Seq + 1}; !slices.Equal(seqs, want) || string(got[2].Data) != `{"old":true}` {
		t.Errorf("ReadEvents(after %d) = %v (last %s), want %v ending with the version 7 row", last.Seq-2, seqs, got[len(got)-1].Data, want)
	}
}
