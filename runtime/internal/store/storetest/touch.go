package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TouchGrain is how far a thread's Updated may lag its latest checkpoint
// on the SQL stores: a checkpoint insert rewrites the thread's row only
// when the row is at least this much older (their migrations' trigger).
const TouchGrain = 100 * time.Millisecond

// Touch checks how checkpoints move their thread's Updated on a store whose
// trigger keeps it to TouchGrain: a thread's first checkpoint sets it, a
// later one within the grain leaves it, one a grain or more later sets it,
// an older one never moves it back; and a run's end sets it to no earlier
// than the run's last checkpoint.
func Touch(t *testing.T, s interface {
	checkpoint.Checkpointer
	checkpoint.ThreadLister
}) {
	ctx := t.Context()
	t0 := time.Unix(1_800_000_000, 0).UTC()
	for i, tc := range []struct {
		name    string
		created time.Duration // after t0
		want    time.Duration // Updated after the put, after t0
	}{
		{"the thread's first checkpoint sets it", 0, 0},
		{"a checkpoint within the grain leaves it", 50 * time.Millisecond, 0},
		{"a checkpoint just inside the grain leaves it", TouchGrain - time.Nanosecond, 0},
		{"a checkpoint a grain later sets it", TouchGrain, TouchGrain},
		{"an older checkpoint leaves it", 60 * time.Millisecond, TouchGrain},
		{"a checkpoint well after sets it", 3 * TouchGrain, 3 * TouchGrain},
	} {
		id := "c" + string(rune('a'+i))
		cp := &checkpoint.Checkpoint{ID: id, ThreadID: "touched", PlanID: id, Step: i, Channels: json.RawMessage(`{}`), Created: t0.Add(tc.created)}
		if err := s.Put(ctx, cp, nil); err != nil {
			t.Fatalf("%s: put: %v", tc.name, err)
		}
		if got := updated(t, s, "touched"); !got.Equal(t0.Add(tc.want)) {
			t.Errorf("%s: Updated = t0 + %v, want t0 + %v", tc.name, got.Sub(t0), tc.want)
		}
	}

	// A run's supersteps come within the grain of each other; when it
	// ends, the thread's Updated is no earlier than its last checkpoint.
	g := Chain(t, "touch", 5, false)
	th := g.Thread(s, "run")
	if _, err := th.Invoke(ctx, runtime.Values{}, runtime.WithRecursionLimit(6)); err != nil {
		t.Fatal(err)
	}
	last, err := s.Get(ctx, "run", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := updated(t, s, "run"); got.Before(last.Created) {
		t.Errorf("after the run Updated = %v, before its last checkpoint's %v", got, last.Created)
	}
}

// updated returns the Updated of thread in s's listing.
func updated(t *testing.T, s checkpoint.ThreadLister, thread string) time.Time {
	t.Helper()
	p, err := s.ListThreads(context.Background(), checkpoint.ThreadQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range p.Threads {
		if th.ID == thread {
			return th.Updated
		}
	}
	t.Fatalf("thread %q not listed", thread)
	return time.Time{}
}
