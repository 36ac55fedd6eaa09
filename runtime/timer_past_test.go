package runtime_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

// TestTimerInThePast: a timer whose wake time has passed when it is first
// asked (Until of the zero time or of a year before 0, Sleep of zero or a
// negative duration) returns at once, and a later replay of its task (the
// resume of an interrupt after it) takes the journaled timer up again
// instead of failing with a NondeterminismError; the step between them
// runs once. On the memory store and on SQLite (whose journal is JSON).
func TestTimerInThePast(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		wait func(c *runtime.Ctx) error
	}{
		{"until the zero time", func(c *runtime.Ctx) error { return runtime.Until(c, "t", time.Time{}) }},
		{"until a year before 0", func(c *runtime.Ctx) error {
			return runtime.Until(c, "t", time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC))
		}},
		{"until an hour ago", func(c *runtime.Ctx) error { return runtime.Until(c, "t", time.Now().Add(-time.Hour)) }},
		{"sleep zero", func(c *runtime.Ctx) error { return runtime.Sleep(c, "t", 0) }},
		{"sleep a negative duration", func(c *runtime.Ctx) error { return runtime.Sleep(c, "t", -time.Hour) }},
	} {
		for _, backend := range []string{"memory", "sqlite"} {
			t.Run(tc.name+"/"+backend, func(t *testing.T) {
				var cp runtime.Checkpointer = checkpoint.NewMemory()
				if backend == "sqlite" {
					s, err := sqlite.Open(filepath.Join(t.TempDir(), "t.db"))
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { s.Close() })
					cp = s
				}
				var steps atomic.Int32
				g := mustCompile(t, runtime.NewBuilder("past").Channel("out", "").
					Node("n", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
						if err := tc.wait(c); err != nil {
							return nil, err
						}
						if _, err := runtime.Step(c, "after", func() (int, error) { return int(steps.Add(1)), nil }); err != nil {
							return nil, err
						}
						a, err := runtime.Interrupt[string](c, "ok?")
						if err != nil {
							return nil, err
						}
						return runtime.Values{"out": a}, nil
					}).Edge(spec.Start, "n"))
				th := g.Thread(cp, "t")
				res, err := th.Invoke(ctx, nil)
				if err != nil || res.Status != runtime.StatusInterrupted || !res.WakeAt.IsZero() {
					t.Fatalf("invoke: status %q, wake at %v, err %v; want interrupted on the question, no timer left", res.Status, res.WakeAt, err)
				}
				res, err = th.Resume(ctx, runtime.Answer("yes"))
				if err != nil || res.Status != runtime.StatusDone || res.State["out"] != "yes" {
					t.Fatalf("resume: status %q, out %v, err %v; want done with the answer", res.Status, res.State["out"], err)
				}
				if n := steps.Load(); n != 1 {
					t.Errorf("the step after the timer ran %d times, want 1", n)
				}
			})
		}
	}
}

// TestTimerAfterYear9999: Until of a time the journal cannot keep fails
// the node at once, naming the timer and the fix, on every store, and
// journals nothing.
func TestTimerAfterYear9999(t *testing.T) {
	g := mustCompile(t, runtime.NewBuilder("far").Channel("out", "").
		Node("n", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			return nil, runtime.Until(c, "far", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))
		}).Edge(spec.Start, "n"))
	res, err := g.Thread(checkpoint.NewMemory(), "t").Invoke(context.Background(), nil)
	if err == nil || res.Status != runtime.StatusError || !strings.Contains(err.Error(), `timer "n:sleep:far#0"`) || !strings.Contains(err.Error(), "earlier time") {
		t.Fatalf("status %q, err %v; want an error naming the timer and the fix", res.Status, err)
	}
}
