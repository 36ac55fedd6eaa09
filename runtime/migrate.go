package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// MigrationError refuses a migration: the thread is not where the
// migration expects it, or the new state or plan does not fit the new
// version. Nothing was written.
type MigrationError struct {
	ThreadID string
	Msg      string
	Err      error
}

// Error names the thread, what the migration could not do, and the cause.
func (e *MigrationError) Error() string {
	s := fmt.Sprintf("migrate thread %q: %s", e.ThreadID, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause: the MigrateFunc's error, the checkpointer's,
// or nil.
func (e *MigrationError) Unwrap() error { return e.Err }

// MigrateFunc moves a thread's state across an incompatible change: given
// the state of the latest checkpoint (decoded by the old version, so typed
// when it is a generated package) and the node ids of its planned tasks,
// it returns the state for the new version and the node ids to plan next
// (each once, in the order given; nil plans nothing, which ends the thread
// at its next run).
type MigrateFunc[OS, NS any] func(old OS, planned []string) (next NS, plan []string, err error)

// MigrationReport says what a migration changes (or, in a dry run, would
// change).
type MigrationReport struct {
	ThreadID string
	// From and To are the fingerprints of the old and the new version.
	From, To string
	// OldPlan and NewPlan are the node ids of the planned tasks.
	OldPlan, NewPlan []string
	// Changed, Added and Removed name the channels whose stored value the
	// migration changes, adds and drops.
	Changed, Added, Removed []string
	// DroppedInterrupts are the ids of the pending interrupts the migration
	// drops: a task the new plan keeps starts afresh and asks again.
	DroppedInterrupts []string
	// CheckpointID is the checkpoint the migration wrote ("" in a dry run).
	CheckpointID string
}

// Migrate moves thread from version from to version to when the change is
// not compatible (see Compatible). It takes the thread's lease, checks that
// the latest checkpoint was written by from (its fingerprint), runs fn,
// validates the result against to — the state must encode and decode
// through to's program, every planned node must exist in to — and, unless
// dryRun, writes one checkpoint whose parent is the old one, recording
// MigratedFrom, with the new state and plan, the new fingerprint and a new
// plan id: the planned tasks start afresh (their old journals are not
// replayed) and pending interrupts are dropped. Nothing is written when
// anything fails or in a dry run; the report says what changes either way.
// Resume the thread on to afterwards with Invoke (nil input).
func Migrate[OS, OU, NS, NU any](ctx context.Context, cp Checkpointer, thread string, from *Graph[OS, OU], to *Graph[NS, NU], fn MigrateFunc[OS, NS], dryRun bool) (*MigrationReport, error) {
	fail := func(msg string, err error) (*MigrationReport, error) {
		return nil, &MigrationError{ThreadID: thread, Msg: msg, Err: err}
	}
	if err := CheckThreadID(thread); err != nil {
		return nil, err
	}
	lease, err := cp.Lease(ctx, thread, checkpoint.LeaseOptions{})
	if err != nil {
		return nil, err
	}
	defer lease.Release()
	latest, err := cp.Get(ctx, thread, "")
	if err != nil {
		return fail("read the latest checkpoint", err)
	}
	rep := &MigrationReport{ThreadID: thread, From: from.Fingerprint(), To: to.Fingerprint()}
	if latest.Fingerprint != rep.From {
		return fail(fmt.Sprintf("the latest checkpoint %s was written by version %q, not by the migration's old version %s; migrate from the version that wrote it", latest.ID, latest.Fingerprint, rep.From), nil)
	}
	for _, t := range latest.Next {
		rep.OldPlan = append(rep.OldPlan, t.Node)
		if t.Input != nil {
			return fail(fmt.Sprintf("the checkpoint plans a send to %q with its own input, which a migration cannot carry; let the thread pass the send first", t.Node), nil)
		}
	}
	old, err := from.p.DecodeState(latest.Channels)
	if err != nil {
		return fail("the old version cannot decode the checkpoint's state", err)
	}
	next, plan, err := fn(old, slices.Clone(rep.OldPlan))
	if err != nil {
		return fail("the migration function failed", err)
	}
	enc, err := to.p.EncodeState(next)
	if err != nil {
		return fail("the new state does not encode", err)
	}
	if _, err := to.p.DecodeState(enc); err != nil {
		return fail("the new state does not fit the new version", err)
	}
	seen := map[string]bool{}
	for _, id := range plan {
		if _, ok := to.index[id]; !ok {
			return fail(fmt.Sprintf("the new plan names node %q, which the new version does not have", id), nil)
		}
		if seen[id] {
			return fail(fmt.Sprintf("the new plan names node %q twice", id), nil)
		}
		seen[id] = true
		rep.NewPlan = append(rep.NewPlan, id)
	}
	rep.Changed, rep.Added, rep.Removed = diffChannels(latest.Channels, enc)
	for _, p := range latest.Pending {
		rep.DroppedInterrupts = append(rep.DroppedInterrupts, p.ID)
	}
	if dryRun {
		return rep, nil
	}
	c := &Checkpoint{ID: newID(), ParentID: latest.ID, ThreadID: thread, Step: latest.Step, Channels: enc,
		Next: make([]checkpoint.TaskRef, 0, len(rep.NewPlan)), Created: time.Now().UTC(),
		Fingerprint: rep.To, Format: checkpoint.Format, MigratedFrom: rep.From}
	c.PlanID = c.ID
	for _, id := range rep.NewPlan {
		c.Next = append(c.Next, checkpoint.TaskRef{Node: id, Key: id})
	}
	fp, doc := to.versionDocument()
	if ds, ok := cp.(checkpoint.DocumentStore); ok {
		if err := ds.PutDocument(ctx, fp, doc); err != nil {
			return fail("store the new version's document", err)
		}
	}
	if err := lease.Commit(ctx, checkpoint.Commit{Checkpoint: c}); err != nil {
		return fail("write the migrated checkpoint", err)
	}
	rep.CheckpointID = c.ID
	return rep, nil
}

// diffChannels compares two encoded states by channel.
func diffChannels(a, b []byte) (changed, added, removed []string) {
	var ma, mb map[string]json.RawMessage
	_ = json.Unmarshal(a, &ma)
	_ = json.Unmarshal(b, &mb)
	for k, va := range ma {
		vb, ok := mb[k]
		switch {
		case !ok:
			removed = append(removed, k)
		case !bytes.Equal(va, vb) && !rawEqual(va, vb):
			changed = append(changed, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			added = append(added, k)
		}
	}
	slices.Sort(changed)
	slices.Sort(added)
	slices.Sort(removed)
	return changed, added, removed
}
