package resent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/internal/resent"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// TestAnswer: where a thread stands is the answer to a request sent again,
// and a run cut short is continued, its node run once more and no more.
func TestAnswer(t *testing.T) {
	ctx := context.Background()
	var runs int
	g, err := runtime.NewBuilder("g").Channel("mode", "").Channel("out", "").
		Node("n", func(c *runtime.Ctx, v runtime.Values) (runtime.Values, error) {
			runs++
			switch v["mode"] {
			case "ask":
				a, err := runtime.Interrupt[string](c, "ok?")
				return runtime.Values{"out": a}, err
			case "fail":
				return nil, errors.New("declined")
			}
			return runtime.Values{"out": "done"}, nil
		}).Edge(spec.Start, "n").Compile()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mode    string
		cut     bool // the run's first checkpoint alone was written
		want    runtime.Status
		out     string
		pending int
		runs    int    // runs of n, the answer's included
		err     string // in the answer's Err
	}{
		{mode: "plain", want: runtime.StatusDone, out: "done", runs: 1},
		{mode: "ask", want: runtime.StatusInterrupted, pending: 1, runs: 1},
		{mode: "fail", want: runtime.StatusError, runs: 1, err: "declined"},
		{mode: "plain", cut: true, want: runtime.StatusDone, out: "done", runs: 1},
	} {
		t.Run(c.mode, func(t *testing.T) {
			runs = 0
			store := checkpoint.NewMemory()
			th := g.Thread(store, "t")
			if c.cut {
				// What a killed process leaves: the input folded in and the
				// node planned, no outcome.
				if _, err := th.Invoke(ctx, runtime.Values{"mode": c.mode}, runtime.WithStopSignal(closed())); err == nil {
					t.Fatal("the stopped run ended without an error")
				}
			} else {
				_, _ = th.Invoke(ctx, runtime.Values{"mode": c.mode})
			}
			_, info, err := resent.Read(ctx, store, "t")
			if err != nil || info == nil {
				t.Fatalf("Read: %v %v", info, err)
			}
			o := info.Outcome
			if c.cut {
				o = checkpoint.ThreadOutcome{} // no run of it ended
			}
			res, err := resent.Answer(ctx, th, o)
			gotErr := ""
			if res.Err != nil {
				gotErr = res.Err.Error()
			}
			if err != nil || res.Status != c.want || res.State["out"] != nil && res.State["out"] != c.out || len(res.Pending) != c.pending || runs != c.runs || !strings.Contains(gotErr, c.err) || (c.err == "") != (gotErr == "") {
				t.Errorf("answer: %q %v, pending %d, err %q (%v), %d runs; want %q %q, pending %d, err %q, %d runs",
					res.Status, res.State["out"], len(res.Pending), gotErr, err, runs, c.want, c.out, c.pending, c.err, c.runs)
			}
		})
	}
}

// closed is a stop signal given at once: the run stops at its first
// superstep boundary, after its first checkpoint.
func closed() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}
