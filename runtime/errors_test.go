package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// TestRefusalsAreMatchable: every refusal of a run or resume is told apart
// with errors.Is / errors.As, never by its message.
func TestRefusalsAreMatchable(t *testing.T) {
	ask := func(rc *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
		v, err := runtime.Interrupt[string](rc, "?")
		return runtime.Values{rc.Node(): v}, err
	}
	g := mustCompile(t, runtime.NewBuilder("two").Channel("a", "").Channel("b", "").
		Node("a", ask).Node("b", ask).Edge(spec.Start, "a").Edge(spec.Start, "b"))
	cp := checkpoint.NewMemory()
	th := g.Thread(cp, "t")
	if _, err := th.Invoke(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	pend, _ := g.Thread(cp, "t").Pending(context.Background())
	idA, idB := pend[0].ID, pend[1].ID
	cases := []struct {
		name   string
		run    func() error
		reason error
	}{
		{"input to a waiting thread", func() error { _, err := th.Invoke(context.Background(), nil); return err }, runtime.ErrWaitingOnPerson},
		{"bare answer, two open", func() error { _, err := th.Resume(context.Background(), runtime.Answer("x")); return err }, runtime.ErrAmbiguousAnswer},
		{"unknown id", func() error {
			_, err := th.Resume(context.Background(), runtime.AnswersByID(map[string]any{idA: "x", idB: "y", "nope": 1}))
			return err
		}, runtime.ErrUnknownInterrupt},
		{"missing answer", func() error {
			_, err := th.Resume(context.Background(), runtime.AnswersByID(map[string]any{idA: "x"}))
			return err
		}, runtime.ErrMissingAnswer},
		{"wrong type", func() error {
			_, err := th.Resume(context.Background(), runtime.AnswersByID(map[string]any{idA: "x", idB: 2}))
			return err
		}, runtime.ErrAnswerType},
		{"not interrupted", func() error {
			_, err := g.Thread(cp, "other").Resume(context.Background(), runtime.Answer("x"))
			return err
		}, runtime.ErrNotInterrupted},
	}
	for _, c := range cases {
		err := c.run()
		var re *runtime.ResumeError
		if !errors.Is(err, c.reason) || !errors.As(err, &re) || re.Reason != c.reason {
			t.Errorf("%s: %v; want a ResumeError with reason %v", c.name, err, c.reason)
		}
	}
	// A different answer to an interrupt that already holds one: fail the
	// superstep after the answers are journaled, then answer otherwise.
	failing := mustCompile(t, runtime.NewBuilder("retry").Channel("a", "").
		Node("a", func(rc *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Interrupt[string](rc, "?"); err != nil {
				return nil, err
			}
			return nil, errors.New("fails after the answer")
		}).Edge(spec.Start, "a"))
	r := failing.Thread(cp, "r")
	r.Invoke(context.Background(), nil)
	r.Resume(context.Background(), runtime.Answer("first"))
	if _, err := r.Resume(context.Background(), runtime.Answer("second")); !errors.Is(err, runtime.ErrAnswerConflict) {
		t.Errorf("a different answer: %v; want ErrAnswerConflict", err)
	}

	// Wrong options are an OptionError.
	var oe *runtime.OptionError
	if _, err := g.Thread(nil, "x").Invoke(context.Background(), nil); !errors.As(err, &oe) {
		t.Errorf("a thread without a checkpointer: %v; want an OptionError", err)
	}

	// A run cancelled with a cause of the caller's own matches ErrAborted,
	// context.Canceled and the cause.
	cause := errors.New("shutting down")
	ctx, cancel := context.WithCancelCause(context.Background())
	loop := mustCompile(t, runtime.NewBuilder("loop").Channel("n", "").
		Node("n", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			cancel(cause)
			return nil, nil
		}).Edge(spec.Start, "n").Edge("n", "n"))
	res, err := loop.Invoke(ctx, nil)
	if res.Status != runtime.StatusAborted || !errors.Is(err, runtime.ErrAborted) || !errors.Is(err, context.Canceled) || !errors.Is(err, cause) {
		t.Errorf("cancelled with a cause: %q, %v; want aborted matching ErrAborted, context.Canceled and the cause", res.Status, err)
	}
}

// TestNotInterruptedSaysWhy: a resume of a thread that waits for no answer
// tells a thread no run started from one whose run finished, so the
// caller knows what to do instead.
func TestNotInterruptedSaysWhy(t *testing.T) {
	g := mustCompile(t, runtime.NewBuilder("one").Channel("a", "").
		Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"a": 1}, nil }).
		Edge(spec.Start, "a").Edge("a", spec.End))
	cp := checkpoint.NewMemory()
	if _, err := g.Thread(cp, "done").Invoke(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ thread, want string }{
		{"never", `cannot resume thread "never" — it is not interrupted: no run has started it (it has no checkpoints); start one with Invoke`},
		{"done", `cannot resume thread "done" — it is not interrupted: its last run finished; start a new run with Invoke`},
	} {
		_, err := g.Thread(cp, c.thread).Resume(context.Background(), runtime.Answer("x"))
		if !errors.Is(err, runtime.ErrNotInterrupted) || err.Error() != c.want {
			t.Errorf("resume of thread %q: %v; want ErrNotInterrupted saying %q", c.thread, err, c.want)
		}
	}
}

// TestCheckAnswer: an answer is checked against a pending interrupt's
// Expects as Resume checks it, without a run.
func TestCheckAnswer(t *testing.T) {
	g := mustCompile(t, runtime.NewBuilder("ask").Channel("ok", "").
		Node("ask", func(rc *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			v, err := runtime.Interrupt[bool](rc, "ship it?")
			return runtime.Values{"ok": v}, err
		}).Edge(spec.Start, "ask"))
	cp := checkpoint.NewMemory()
	res, err := g.Thread(cp, "t").Invoke(context.Background(), nil)
	if err != nil || len(res.Pending) != 1 {
		t.Fatalf("invoke: %v, %d pending", err, len(res.Pending))
	}
	p := res.Pending[0]
	for _, c := range []struct {
		answer string
		ok     bool
	}{{`"yes"`, false}, {`1`, false}, {`null`, false}, {`true`, true}} { // the fitting one last: it ends the pause
		err := runtime.CheckAnswer(p, []byte(c.answer))
		var re *runtime.ResumeError
		switch {
		case c.ok && err != nil:
			t.Errorf("CheckAnswer(%s) = %v, want nil", c.answer, err)
		case !c.ok && (!errors.Is(err, runtime.ErrAnswerType) || !errors.As(err, &re) || re.Interrupt != p.ID):
			t.Errorf("CheckAnswer(%s) = %v, want a ResumeError of ErrAnswerType about %s", c.answer, err, p.ID)
		}
		// Resume agrees, and a refused answer leaves the interrupt open.
		_, rerr := g.Thread(cp, "t").Resume(context.Background(), runtime.AnswersByID(map[string]any{p.ID: json.RawMessage(c.answer)}))
		if !c.ok && !errors.Is(rerr, runtime.ErrAnswerType) {
			t.Errorf("Resume(%s) = %v, want ErrAnswerType as CheckAnswer said", c.answer, rerr)
		}
		if c.ok && rerr != nil {
			t.Errorf("Resume(%s) = %v, want it accepted as CheckAnswer said", c.answer, rerr)
		}
	}
	p.Expects = nil
	if err := runtime.CheckAnswer(p, []byte(`"anything"`)); err != nil {
		t.Errorf("CheckAnswer without Expects = %v, want nil (the node decodes it)", err)
	}
}
