package checkpointtest

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

var idSeq atomic.Int64

// newID returns an id that sorts after every id it returned before.
func newID() string { return fmt.Sprintf("cp-%012d", idSeq.Add(1)) }

// mk returns a plain checkpoint of thread with parent (may be ""), whose
// channels record n.
func mk(thread, parent string, n int) *runtime.Checkpoint {
	id := newID()
	return &runtime.Checkpoint{
		ID: id, ParentID: parent, ThreadID: thread, PlanID: id, Step: n,
		Channels: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)),
		Next:     []checkpoint.TaskRef{{Node: "a", Key: "a"}},
		Created:  time.Unix(1_700_000_000, int64(n)).UTC(),
	}
}

// ids returns the ids of cps in order.
func ids(cps []*runtime.Checkpoint) []string {
	out := make([]string, len(cps))
	for i, c := range cps {
		out[i] = c.ID
	}
	return out
}

// jsonValue decodes raw for a value comparison; nil stays nil.
func jsonValue(t *testing.T, what string, raw json.RawMessage) any {
	t.Helper()
	if raw == nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s is not valid JSON (%q): %v", what, raw, err)
	}
	return v
}

// sameJSON fails t unless want and got hold the same JSON value and are
// both nil or both non-nil (a static task's Input must stay nil, a send's
// must not become nil).
func sameJSON(t *testing.T, what string, want, got json.RawMessage) {
	t.Helper()
	if (want == nil) != (got == nil) {
		t.Errorf("%s: nil-ness changed in the round trip: want %q, got %q", what, want, got)
		return
	}
	if d := cmp.Diff(jsonValue(t, what, want), jsonValue(t, what, got)); d != "" {
		t.Errorf("%s: JSON value changed in the round trip (-want +got):\n%s", what, d)
	}
}

// sameCheckpoint fails t unless got is want after a round trip through a
// backend: every field equal, JSON compared by value, times by instant.
func sameCheckpoint(t *testing.T, want, got *runtime.Checkpoint) {
	t.Helper()
	if got == nil {
		t.Fatalf("checkpoint %s: got nil", want.ID)
	}
	type plain struct {
		ID, ParentID, ThreadID, PlanID, Fingerprint, MigratedFrom string
		Format                                                    int
	}
	if d := cmp.Diff(plain{want.ID, want.ParentID, want.ThreadID, want.PlanID, want.Fingerprint, want.MigratedFrom, want.Format},
		plain{got.ID, got.ParentID, got.ThreadID, got.PlanID, got.Fingerprint, got.MigratedFrom, got.Format}); d != "" {
		t.Errorf("checkpoint %s: ids differ (-want +got):\n%s", want.ID, d)
	}
	if want.Step != got.Step {
		t.Errorf("checkpoint %s: step %d, want %d", want.ID, got.Step, want.Step)
	}
	if !want.Created.Equal(got.Created) {
		t.Errorf("checkpoint %s: created %v, want %v", want.ID, got.Created, want.Created)
	}
	sameJSON(t, "checkpoint "+want.ID+" channels", want.Channels, got.Channels)
	if len(want.Next) != len(got.Next) {
		t.Fatalf("checkpoint %s: %d next tasks, want %d: %+v", want.ID, len(got.Next), len(want.Next), got.Next)
	}
	for i := range want.Next {
		w, g := want.Next[i], got.Next[i]
		if w.Node != g.Node || w.Key != g.Key {
			t.Errorf("checkpoint %s: next[%d] = %s/%s, want %s/%s", want.ID, i, g.Node, g.Key, w.Node, w.Key)
		}
		sameJSON(t, fmt.Sprintf("checkpoint %s next[%d] (%s) input", want.ID, i, w.Key), w.Input, g.Input)
	}
	if len(want.Pending) != len(got.Pending) {
		t.Fatalf("checkpoint %s: %d pending interrupts, want %d: %+v", want.ID, len(got.Pending), len(want.Pending), got.Pending)
	}
	for i := range want.Pending {
		w, g := want.Pending[i], got.Pending[i]
		type ids struct{ ID, Key, Node, TaskID string }
		if d := cmp.Diff(ids{w.ID, w.Key, w.Node, w.TaskID}, ids{g.ID, g.Key, g.Node, g.TaskID}); d != "" {
			t.Errorf("checkpoint %s: pending[%d] differs (-want +got):\n%s", want.ID, i, d)
		}
		sameJSON(t, fmt.Sprintf("checkpoint %s pending[%d] payload", want.ID, i), w.Payload, g.Payload)
		if len(w.Actions) != len(g.Actions) {
			t.Fatalf("checkpoint %s: pending[%d] has actions %+v, want %+v", want.ID, i, g.Actions, w.Actions)
		}
		for k := range w.Actions {
			if w.Actions[k].Label != g.Actions[k].Label {
				t.Errorf("checkpoint %s: pending[%d] action %d is %q, want %q", want.ID, i, k, g.Actions[k].Label, w.Actions[k].Label)
			}
			if len(w.Actions[k].Value) > 0 || len(g.Actions[k].Value) > 0 {
				sameJSON(t, fmt.Sprintf("checkpoint %s pending[%d] action %d value", want.ID, i, k), w.Actions[k].Value, g.Actions[k].Value)
			}
		}
	}
}

// sameJournal fails t unless got holds the entries of want, JSON compared
// by value.
func sameJournal(t *testing.T, what string, want, got []checkpoint.JournalEntry) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d entries, want %d: %+v", what, len(got), len(want), got)
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.Key != g.Key || w.Interrupt != g.Interrupt || w.Answered != g.Answered {
			t.Errorf("%s[%d] = {key %q interrupt %v answered %v}, want {key %q interrupt %v answered %v}", what, i, g.Key, g.Interrupt, g.Answered, w.Key, w.Interrupt, w.Answered)
		}
		sameJSON(t, fmt.Sprintf("%s[%d] value", what, i), w.Value, g.Value)
		sameJSON(t, fmt.Sprintf("%s[%d] payload", what, i), w.Payload, g.Payload)
	}
}
