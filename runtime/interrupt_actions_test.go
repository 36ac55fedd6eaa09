package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

type refundAnswer struct {
	Approved bool `json:"approved"`
}

// TestInterruptActions: the actions offered with WithActions are on the
// run's pending interrupt, on Thread.Pending and on ListThreads, in both
// the memory and the SQLite store, also after the replay of a resume that
// does not answer; AnswerFor maps a label to its value; bad actions fail
// the run with ErrBadAction.
func TestInterruptActions(t *testing.T) {
	ctx := context.Background()
	approve := runtime.NewAction("Approve", refundAnswer{Approved: true})
	cancel := runtime.Action{Label: "Cancel", Value: json.RawMessage(`{"approved":false}`)}
	stores := map[string]func(t *testing.T) runtime.Checkpointer{
		"memory": func(*testing.T) runtime.Checkpointer { return checkpoint.NewMemory() },
		"sqlite": func(t *testing.T) runtime.Checkpointer {
			s, err := sqlite.Open(filepath.Join(t.TempDir(), "a.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
	for _, tc := range []struct {
		name    string
		actions []runtime.Action
		wantErr error
	}{
		{name: "two actions", actions: []runtime.Action{approve, cancel}},
		{name: "no label", actions: []runtime.Action{{Value: json.RawMessage(`{}`)}}, wantErr: runtime.ErrBadAction},
		{name: "label twice", actions: []runtime.Action{approve, approve}, wantErr: runtime.ErrBadAction},
		{name: "value of the wrong type", actions: []runtime.Action{{Label: "x", Value: json.RawMessage(`"yes"`)}}, wantErr: runtime.ErrBadAction},
		{name: "value not JSON", actions: []runtime.Action{runtime.NewAction("x", func() {})}, wantErr: runtime.ErrBadAction},
	} {
		for sname, open := range stores {
			t.Run(tc.name+"/"+sname, func(t *testing.T) {
				var answers []refundAnswer
				g := mustCompile(t, runtime.NewBuilder("refund").Channel("out", "").
					Node("agent", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
						a, err := runtime.Interrupt[refundAnswer](c, map[string]string{"title": "Refund 249.9?"}, runtime.WithActions(tc.actions...))
						if err != nil {
							return nil, err
						}
						answers = append(answers, a)
						return runtime.Values{"out": a.Approved}, nil
					}).Edge(spec.Start, "agent"))
				cp := open(t)
				th := g.Thread(cp, "t1")
				res, err := th.Invoke(ctx, nil)
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) && !errors.Is(res.Err, tc.wantErr) {
						t.Fatalf("status %q err %v / %v, want %v", res.Status, err, res.Err, tc.wantErr)
					}
					return
				}
				if res.Status != runtime.StatusInterrupted || len(res.Pending) != 1 {
					t.Fatalf("status %q pending %+v err %v", res.Status, res.Pending, err)
				}
				check := func(where string, ps []runtime.PendingInterrupt) {
					t.Helper()
					if len(ps) != 1 || len(ps[0].Actions) != 2 || ps[0].Actions[0].Label != "Approve" ||
						string(ps[0].Actions[0].Value) != `{"approved":true}` || ps[0].Actions[1].Label != "Cancel" {
						t.Errorf("%s: pending %+v, want the two actions in order", where, ps)
					}
				}
				check("result", res.Pending)
				ps, err := th.Pending(ctx)
				if err != nil {
					t.Fatal(err)
				}
				check("Thread.Pending", ps)
				page, err := cp.(checkpoint.ThreadLister).ListThreads(ctx, checkpoint.ThreadQuery{})
				if err != nil || len(page.Threads) != 1 {
					t.Fatalf("ListThreads: %+v %v", page, err)
				}
				check("ListThreads", page.Threads[0].Pending)
				raw, ok := runtime.AnswerFor(ps[0], "Approve")
				if !ok || string(raw) != `{"approved":true}` {
					t.Fatalf("AnswerFor(Approve) = %s %v", raw, ok)
				}
				if _, ok := runtime.AnswerFor(ps[0], "approve"); ok {
					t.Errorf("AnswerFor matched a label that differs in case")
				}
				res, err = th.Resume(ctx, runtime.Answer(raw))
				if err != nil || res.Status != runtime.StatusDone || len(answers) != 1 || !answers[0].Approved {
					t.Fatalf("resume: %q %v, node saw %+v", res.Status, err, answers)
				}
			})
		}
	}
}
