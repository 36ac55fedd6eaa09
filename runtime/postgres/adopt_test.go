package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestAdoptLease: a lease row a statement of the caller's took, adopted
// with AdoptLease, is the Store's lease: its commits are fenced by its
// epoch (one whose row another run took over fails with ErrLeaseLost and
// writes nothing, events and thread record included), the thread is busy
// for Lease while it is held, and Release drops the row.
func TestAdoptLease(t *testing.T) {
	s := openStore(t, "adopt")
	ctx := context.Background()
	p, leases := s.Pool(), `"`+s.SchemaName()+`".ilmek_leases`
	take := func(thread string) int64 {
		t.Helper()
		var epoch int64
		err := p.QueryRow(ctx, `INSERT INTO `+leases+` (thread_id, epoch, owner, expires)
			VALUES ($1, nextval('"`+s.SchemaName()+`".ilmek_lease_epoch'), $2, clock_timestamp() + $3::bigint * interval '1 microsecond') RETURNING epoch`,
			thread, s.LeaseOwner(), s.LeaseTTLOf().Microseconds()).Scan(&epoch)
		if err != nil {
			t.Fatal(err)
		}
		return epoch
	}
	epoch := take("a")
	l, err := s.AdoptLease(ctx, "a", epoch, time.Now(), checkpoint.LeaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lease(ctx, "a", checkpoint.LeaseOptions{}); !errors.Is(err, runtime.ErrThreadBusy) {
		t.Fatalf("Lease of a thread whose adopted lease is held: %v, want ErrThreadBusy", err)
	}
	first := &runtime.Checkpoint{ID: "c1", ThreadID: "a", PlanID: "c1", Channels: json.RawMessage(`{"n":1}`), Created: time.Now()}
	ev := func(seq int64) []checkpoint.StoredEvent {
		return []checkpoint.StoredEvent{{RunID: "r", Seq: seq, ThreadID: "a", Time: time.Now(), Kind: "step", Data: json.RawMessage(`{}`)}}
	}
	if err := l.Commit(ctx, checkpoint.Commit{Checkpoint: first, Events: ev(1)}); err != nil {
		t.Fatalf("commit under the adopted lease: %v", err)
	}
	// Another run takes the thread over: the adopted lease's writes fail.
	if _, err := p.Exec(ctx, `UPDATE `+leases+` SET epoch = nextval('"`+s.SchemaName()+`".ilmek_lease_epoch') WHERE thread_id = 'a'`); err != nil {
		t.Fatal(err)
	}
	second := &runtime.Checkpoint{ID: "c2", ParentID: "c1", ThreadID: "a", PlanID: "c2", Step: 1, Channels: json.RawMessage(`{"n":2}`), Created: time.Now()}
	err = l.Commit(ctx, checkpoint.Commit{Checkpoint: second, Events: ev(2),
		Thread: &checkpoint.ThreadWrite{Outcome: &checkpoint.ThreadOutcome{Status: runtime.StatusDone, RunID: "r", Ended: time.Now()}}})
	if !errors.Is(err, checkpoint.ErrLeaseLost) {
		t.Fatalf("commit under a lease taken over: %v, want ErrLeaseLost", err)
	}
	if err := l.Commit(ctx, checkpoint.Commit{Events: ev(3)}); !errors.Is(err, checkpoint.ErrLeaseLost) {
		t.Fatalf("events under a lease taken over: %v, want ErrLeaseLost", err)
	}
	if cp, err := s.Get(ctx, "a", ""); err != nil || cp.ID != "c1" {
		t.Errorf("latest after the refused commit: %v %v, want c1", cp, err)
	}
	if got, err := s.ReadEvents(ctx, "r", 0, 0); err != nil || len(got) != 1 {
		t.Errorf("events after the refused commits: %d (%v), want 1", len(got), err)
	}
	l.Release()

	// Release drops the row of a lease still held.
	l2, err := s.AdoptLease(ctx, "b", take("b"), time.Now(), checkpoint.LeaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l2.Release()
	l3, err := s.Lease(ctx, "b", checkpoint.LeaseOptions{})
	if err != nil {
		t.Fatalf("Lease after the adopted lease's release: %v", err)
	}
	l3.Release()
}
