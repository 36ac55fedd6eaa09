package checkpointtest

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

var answerContracts = []contract{
	{"GraphAnswerOfWrongTypeIsRefused", func(t *testing.T, cp runtime.Checkpointer) { testGraphWrongAnswer(t, cp, false) }},
	{"GraphAnswerOfWrongTypeTakenBackAtReplay", func(t *testing.T, cp runtime.Checkpointer) { testGraphWrongAnswer(t, cp, true) }},
}

// testGraphWrongAnswer: an answer the asking node cannot decode (a string
// for Interrupt[bool]) is not accepted: the caller gets a ResumeError with
// ErrAnswerType naming the interrupt, the thread stays waiting on the same
// interrupt (same id, same payload, listed by Thread.Pending with what
// it expects), and a good answer then finishes the run with every earlier
// step run once. With old, the checkpoint carries no Expects (as one
// written before they were recorded): the answer is accepted, fails to
// decode when the node replays, is taken back, and the run ends
// interrupted with the same typed error.
func testGraphWrongAnswer(t *testing.T, cp runtime.Checkpointer, old bool) {
	ctx := t.Context()
	var effects atomic.Int32
	g := compile(t, runtime.NewBuilder("approve").Channel("ok", "").
		Node("ask", func(rc *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Step(rc, "prepare", func() (int, error) { return int(effects.Add(1)), nil }); err != nil {
				return nil, err
			}
			ok, err := runtime.Interrupt[bool](rc, map[string]string{"q": "approve?"})
			if err != nil {
				return nil, err
			}
			return runtime.Values{"ok": ok}, nil
		}).Edge(spec.Start, "ask"))
	res, err := g.Thread(cp, "t").Invoke(ctx, nil)
	if err != nil || res.Status != runtime.StatusInterrupted || len(res.Pending) != 1 {
		t.Fatalf("first run: %q, %v, %v", res.Status, err, res.Pending)
	}
	want := res.Pending[0]
	if x := want.Expects; x == nil || x.Type != "bool" || !strings.Contains(string(x.Schema), `"boolean"`) {
		t.Fatalf("the pending interrupt does not say what it expects: %+v", x)
	}
	if old {
		latest := get(t, cp, "t", "")
		latest.Pending[0].Expects = nil
		latest.ID, latest.ParentID = latest.ID+"0", latest.ID
		put(t, cp, latest)
	}
	res, err = g.Thread(cp, "t").Resume(ctx, runtime.Answer("yes"))
	var re *runtime.ResumeError
	if !errors.Is(err, runtime.ErrAnswerType) || !errors.As(err, &re) || re.Interrupt != want.ID {
		t.Fatalf("Resume with a string for Interrupt[bool]: %q, %v; want a ResumeError with ErrAnswerType for %s", res.Status, err, want.ID)
	}
	if old && res.Status != runtime.StatusInterrupted {
		t.Errorf("taken back at replay: status %q, want interrupted", res.Status)
	}
	open, err := g.Thread(cp, "t").Pending(ctx)
	if err != nil || len(open) != 1 || open[0].ID != want.ID || string(open[0].Payload) != string(want.Payload) || open[0].Expects == nil {
		t.Fatalf("after the refused answer: pending %+v, %v; want %s still open with its payload and expects", open, err, want.ID)
	}
	res, err = g.Thread(cp, "t").Resume(ctx, runtime.Answer(true))
	if err != nil || res.Status != runtime.StatusDone || res.State["ok"] != true {
		t.Fatalf("good answer: %q, %v, state %v", res.Status, err, res.State)
	}
	if effects.Load() != 1 {
		t.Errorf("the step before the interrupt ran %d times, want 1", effects.Load())
	}
}
