package runtime_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestCompatible applies the compatibility rule alone, to a checkpoint
// paused in review with a task of pay planned, for each kind of change:
// what the checkpoint holds must stay as it was, anything else may change.
func TestCompatible(t *testing.T) {
	const old = `{"channels": {"amount": {}, "log": {"reducer": "append"}, "notes": {"reducer": "merge"}},
		"nodes": [{"id": "review", "type": "ask", "config": {"to": "bob"}}, {"id": "pay", "type": "http", "config": {"url": "u", "n": 1}}, {"id": "mail", "type": "mail"}],
		"edges": [{"from": "__start__", "to": "review"}]}`
	cp := &runtime.Checkpoint{
		ID: "c-7", ThreadID: "t-1", Fingerprint: "sha256:old",
		Channels: json.RawMessage(`{"amount": 5, "log": ["a"]}`),
		Next:     []checkpoint.TaskRef{{Node: "pay", Key: "pay"}, {Node: "pay", Key: "pay#0", Input: json.RawMessage(`{"notes": {"k": 1}}`)}},
		Pending:  []runtime.PendingInterrupt{{ID: "review:interrupt#0", Key: "interrupt#0", Node: "review"}},
	}
	type reason struct {
		Kind    runtime.ReasonKind
		Subject string
	}
	tests := []struct {
		name     string
		old, new string // old "": the backend does not know the old document
		want     []reason
	}{
		{"the same document", old, old, nil},
		{"what the checkpoint does not hold changes", old, `{"channels": {"amount": {"reducer": "last_write"}, "log": {"reducer": "append"}, "notes": {"reducer": "merge"}, "extra": {}},
			"nodes": [{"id": "pay", "type": "http", "config": {"n": 1.0, "url": "u"}}, {"id": "review", "type": "ask", "config": {"to": "bob"}}, {"id": "fresh", "type": "x"}],
			"edges": [{"from": "__start__", "to": "pay"}]}`, nil},
		{"a planned and a pending node removed", old, `{"channels": {"amount": {}, "log": {"reducer": "append"}, "notes": {"reducer": "merge"}}, "nodes": [{"id": "mail", "type": "mail"}]}`,
			[]reason{{runtime.ReasonNodeMissing, "pay"}, {runtime.ReasonNodeMissing, "review"}}},
		{"a node's type and another's config changed", old, `{"channels": {"amount": {}, "log": {"reducer": "append"}, "notes": {"reducer": "merge"}},
			"nodes": [{"id": "review", "type": "ask2", "config": {"to": "bob"}}, {"id": "pay", "type": "http", "config": {"url": "v", "n": 1}}]}`,
			[]reason{{runtime.ReasonNodeConfig, "pay"}, {runtime.ReasonNodeType, "review"}}},
		{"channels removed, one held only by a send's input", old, `{"channels": {"log": {"reducer": "append"}},
			"nodes": [{"id": "review", "type": "ask", "config": {"to": "bob"}}, {"id": "pay", "type": "http", "config": {"url": "u", "n": 1}}]}`,
			[]reason{{runtime.ReasonChannelMissing, "amount"}, {runtime.ReasonChannelMissing, "notes"}}},
		{"a reducer changed", old, `{"channels": {"amount": {"reducer": "append"}, "log": {"reducer": "append"}, "notes": {"reducer": "merge"}},
			"nodes": [{"id": "review", "type": "ask", "config": {"to": "bob"}}, {"id": "pay", "type": "http", "config": {"url": "u", "n": 1}}]}`,
			[]reason{{runtime.ReasonReducer, "amount"}}},
		{"old document unknown: only existence counts", "", `{"channels": {"amount": {"reducer": "append"}, "log": {}},
			"nodes": [{"id": "review", "type": "other"}, {"id": "pay", "type": "other"}]}`,
			[]reason{{runtime.ReasonChannelMissing, "notes"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var oldDoc []byte
			if tc.old != "" {
				oldDoc = []byte(tc.old)
			}
			err := runtime.Compatible(cp, oldDoc, []byte(tc.new))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ie *runtime.IncompatibleError
			if !errors.As(err, &ie) || !errors.Is(err, runtime.ErrIncompatible) {
				t.Fatalf("err %v, want an *IncompatibleError matching ErrIncompatible", err)
			}
			if ie.ThreadID != "t-1" || ie.CheckpointID != "c-7" || ie.From != "sha256:old" {
				t.Errorf("the error names thread %q, checkpoint %q, from %q", ie.ThreadID, ie.CheckpointID, ie.From)
			}
			var got []reason
			for _, r := range ie.Reasons {
				got = append(got, reason{r.Kind, r.Subject})
				if r.Msg == "" || r.Fix == "" {
					t.Errorf("reason %+v says no why or no fix", r)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("reasons (-want +got):\n%s", d)
			}
		})
	}
	// A document that is not a stored form is an error of the call, not a
	// refusal of the thread.
	for _, docs := range [][2]string{{old, "not json"}, {"[1]", old}} {
		if err := runtime.Compatible(cp, []byte(docs[0]), []byte(docs[1])); err == nil || errors.Is(err, runtime.ErrIncompatible) {
			t.Errorf("Compatible(%.10q, %.10q) = %v, want an error that is not ErrIncompatible", docs[0], docs[1], err)
		}
	}
}
