package stream_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/stream"
	"github.com/ilmek-go/ilmek/spec"
)

// TestProject pins which modes have a view of which event, and the data
// of each view.
func TestProject(t *testing.T) {
	token := runtime.Token{Type: "token", Text: "hi"}
	all := []stream.Mode{stream.ModeValues, stream.ModeUpdates, stream.ModeCustom, stream.ModeMessages, stream.ModeDebug}
	tests := []struct {
		name string
		ev   runtime.Event
		want map[stream.Mode]any // the Data of each mode with a view; debug is the event
	}{
		{"state", runtime.Event{Type: runtime.EventState, Channels: map[string]any{"x": 1.0}},
			map[stream.Mode]any{stream.ModeValues: map[string]any{"x": 1.0}}},
		{"node end", runtime.Event{Type: runtime.EventNodeEnd, Node: "a", Update: map[string]any{"x": 2.0}},
			map[stream.Mode]any{stream.ModeUpdates: map[string]any{"a": map[string]any{"x": 2.0}}}},
		{"token", runtime.Event{Type: runtime.EventCustom, Payload: token},
			map[stream.Mode]any{stream.ModeCustom: token, stream.ModeMessages: token}},
		{"token pointer", runtime.Event{Type: runtime.EventCustom, Payload: &token},
			map[stream.Mode]any{stream.ModeCustom: &token, stream.ModeMessages: &token}},
		{"nil token pointer", runtime.Event{Type: runtime.EventCustom, Payload: (*runtime.Token)(nil)},
			map[stream.Mode]any{stream.ModeCustom: (*runtime.Token)(nil)}},
		{"token through JSON", runtime.Event{Type: runtime.EventCustom, Payload: map[string]any{"type": "token", "text": "x"}},
			map[stream.Mode]any{stream.ModeCustom: map[string]any{"type": "token", "text": "x"}, stream.ModeMessages: map[string]any{"type": "token", "text": "x"}}},
		{"a Token of another type", runtime.Event{Type: runtime.EventCustom, Payload: runtime.Token{Type: "note"}},
			map[stream.Mode]any{stream.ModeCustom: runtime.Token{Type: "note"}}},
		{"other custom payload", runtime.Event{Type: runtime.EventCustom, Payload: map[string]any{"progress": 1.0}},
			map[stream.Mode]any{stream.ModeCustom: map[string]any{"progress": 1.0}}},
		{"run end", runtime.Event{Type: runtime.EventRunEnd, Status: runtime.StatusDone}, map[stream.Mode]any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.ev.Seq, tc.ev.NS = 7, []string{"sub"}
			var want []stream.Part
			for _, m := range all {
				if d, ok := tc.want[m]; ok {
					want = append(want, stream.Part{Mode: m, Seq: 7, NS: []string{"sub"}, Data: d})
				}
				if m == stream.ModeDebug {
					want = append(want, stream.Part{Mode: m, Seq: 7, NS: []string{"sub"}, Data: tc.ev})
				}
			}
			if d := cmp.Diff(want, stream.Project(tc.ev, all...)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	// Parts come in the order of the modes asked for, and none without one.
	ev := runtime.Event{Type: runtime.EventCustom, Payload: token}
	got := stream.Project(ev, stream.ModeMessages, stream.ModeDebug, stream.ModeCustom)
	if len(got) != 3 || got[0].Mode != stream.ModeMessages || got[1].Mode != stream.ModeDebug || got[2].Mode != stream.ModeCustom {
		t.Errorf("parts %+v, want messages, debug, custom", got)
	}
	if got := stream.Project(ev); got != nil {
		t.Errorf("no modes: %+v", got)
	}
}

// TestProjected reads several views of one run at once, stops a run by
// stopping the iteration, and passes a refused run's error on.
func TestProjected(t *testing.T) {
	g, err := runtime.NewBuilder("p").Channel("x", "").
		Node("a", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			ctx.EmitToken("tok", map[string]any{"i": 1})
			ctx.Emit("progress")
			return runtime.Values{"x": 1}, nil
		}).Edge(spec.Start, "a").Compile()
	if err != nil {
		t.Fatal(err)
	}
	var got []stream.Mode
	var seqs []int64
	for p, err := range stream.Projected(g.Stream(context.Background(), nil), stream.ModeUpdates, stream.ModeMessages, stream.ModeValues) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.Mode)
		seqs = append(seqs, p.Seq)
	}
	if d := cmp.Diff([]stream.Mode{stream.ModeMessages, stream.ModeUpdates, stream.ModeValues}, got); d != "" {
		t.Errorf("modes (-want +got):\n%s", d)
	}
	if len(seqs) != 3 || seqs[0] >= seqs[1] || seqs[1] >= seqs[2] {
		t.Errorf("seqs %v, want the rising Seq of each part's event", seqs)
	}

	// Stopping after the first part stops the run's stream.
	n := 0
	for range stream.Projected(g.Stream(context.Background(), nil), stream.ModeDebug) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("took %d parts, want 1", n)
	}

	// A run refused before it starts yields its error once.
	var errs []error
	for p, err := range stream.Projected(g.Stream(context.Background(), nil, runtime.WithRecursionLimit(-1)), stream.ModeDebug) {
		if err == nil {
			t.Errorf("part %+v from a refused run", p)
		}
		errs = append(errs, err)
	}
	var oe *runtime.OptionError
	if len(errs) != 1 || !errors.As(errs[0], &oe) {
		t.Errorf("errors %v, want one OptionError (a negative recursion limit)", errs)
	}
}
