package checkpointtest

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

var batchContracts = []contract{
	{"BatchIsAllOrNothing", testBatchAllOrNothing},
}

// testBatchAllOrNothing checks a lease's CommitBatch (checkpoint.BatchLease):
// a batch whose last commit is a delta of a checkpoint the thread lacks
// writes nothing, not even its first commit or its journal, and fails with
// ErrNotFound; a batch of a full checkpoint, a delta of it and a journal
// writes all three, the delta's channels built on the checkpoint before it
// in the same batch; after the lease is released, a batch writes nothing.
func testBatchAllOrNothing(t *testing.T, cp runtime.Checkpointer) {
	ctx := t.Context()
	l, err := cp.Lease(ctx, "t", checkpoint.LeaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	bl, ok := l.(checkpoint.BatchLease)
	if !ok {
		t.Skip("the backend's leases write one commit at a time (no checkpoint.BatchLease)")
	}
	root := mk("t", "", 0)
	if err := l.Commit(ctx, checkpoint.Commit{Checkpoint: root}); err != nil {
		t.Fatal(err)
	}
	_, deltas := cp.(checkpoint.DeltaCheckpointer)
	full := mk("t", root.ID, 1)
	next := mk("t", full.ID, 2)
	entries := []checkpoint.JournalEntry{{Key: "effect#0", Value: json.RawMessage(`42`)}}
	journal := &checkpoint.JournalWrite{TaskID: next.ID + ":a", Entries: entries}

	if deltas {
		orphan := mk("t", full.ID, 2)
		orphan.Channels = nil
		bad := []checkpoint.Commit{{Checkpoint: full}, {Checkpoint: orphan, Delta: &checkpoint.Delta{Base: "nope"}}}
		if err := bl.CommitBatch(ctx, bad, journal); !errors.Is(err, runtime.ErrNotFound) {
			t.Fatalf("a batch whose delta's base is missing: %v, want ErrNotFound", err)
		}
		for _, id := range []string{full.ID, orphan.ID} {
			if _, err := cp.Get(ctx, "t", id); !errors.Is(err, runtime.ErrNotFound) {
				t.Errorf("checkpoint %s of the failed batch: %v, want ErrNotFound (nothing written)", id, err)
			}
		}
		if j, err := cp.GetJournal(ctx, "t", journal.TaskID); err != nil || j != nil {
			t.Errorf("the journal of the failed batch: %v %v, want none", j, err)
		}
		if got := get(t, cp, "t", ""); got.ID != root.ID {
			t.Errorf("latest after the failed batch %s, want %s", got.ID, root.ID)
		}
	}

	second := checkpoint.Commit{Checkpoint: next}
	want := next.Channels
	if deltas {
		next.Channels = nil
		second.Delta = &checkpoint.Delta{Base: full.ID, Writes: []checkpoint.ChannelWrite{{Channel: "n", Value: json.RawMessage(`2`)}}}
	}
	if err := bl.CommitBatch(ctx, []checkpoint.Commit{{Checkpoint: full}, second}, journal); err != nil {
		t.Fatalf("a batch of a checkpoint, a delta of it and a journal: %v", err)
	}
	got := get(t, cp, "t", "")
	if got.ID != next.ID {
		t.Fatalf("latest after the batch %s, want %s", got.ID, next.ID)
	}
	sameJSON(t, "the batch's delta's channels", want, got.Channels)
	get(t, cp, "t", full.ID)
	j, err := cp.GetJournal(ctx, "t", journal.TaskID)
	if err != nil || len(j) != 1 || j[0].Key != "effect#0" {
		t.Errorf("the batch's journal: %+v %v, want its one entry", j, err)
	}

	l.Release()
	late := mk("t", next.ID, 3)
	if err := bl.CommitBatch(ctx, []checkpoint.Commit{{Checkpoint: late}}, nil); err == nil {
		t.Error("a batch under a released lease was written")
	}
	if _, err := cp.Get(ctx, "t", late.ID); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("checkpoint %s of a batch under a released lease: %v, want ErrNotFound", late.ID, err)
	}
}
