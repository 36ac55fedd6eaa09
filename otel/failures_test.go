package otel_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// failingPut is a Checkpointer whose checkpoint writes fail.
type failingPut struct{ runtime.Checkpointer }

func (c failingPut) Lease(ctx context.Context, thread string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	l, err := c.Checkpointer.Lease(ctx, thread, opts)
	if err != nil {
		return nil, err
	}
	return failingLease{l}, nil
}

// failingLease fails every commit that carries a checkpoint.
type failingLease struct{ checkpoint.Lease }

func (l failingLease) Commit(ctx context.Context, c checkpoint.Commit) error {
	if c.Checkpoint != nil {
		return errors.New("disk full")
	}
	return l.Lease.Commit(ctx, c)
}

// TestFailureSpans checks how failures show in spans and metrics: a node's
// error, a panic, a refused resume, a cancelled run, a failed checkpoint
// write and a lost lease.
func TestFailureSpans(t *testing.T) {
	ok := func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }
	for _, tc := range []struct {
		name    string
		fn      runtime.NodeFunc
		run     func(ctx context.Context, g *runtime.Graph[runtime.Values, runtime.Values], obs runtime.RunOption) error
		tree    string
		metrics []string
	}{
		{
			name: "node error",
			fn:   func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, errors.New("boom") },
			tree: `run one ilmek.graph.name=one ilmek.run.status=error ilmek.run.supersteps=1 error.type=*errors.errorString ERROR "node \"a\" (task \"a\"): boom"
  superstep ilmek.superstep=1 ilmek.superstep.tasks=1 error.type=*errors.errorString ERROR "node \"a\" (task \"a\"): boom"
    task a ilmek.node.id=a ilmek.task.key=a ilmek.superstep=1 ilmek.task.attempt=1 ilmek.task.outcome=error error.type=*errors.errorString ERROR "node \"a\" (task \"a\"): boom"
      · exception exception.type=*runtime.NodeError exception.message="node \"a\" (task \"a\"): boom"
`,
			metrics: []string{
				"ilmek.run.duration{ilmek.graph.name=one,ilmek.run.status=error} count=1",
				"ilmek.runs{ilmek.graph.name=one,ilmek.run.status=error} 1",
				"ilmek.supersteps{ilmek.graph.name=one} 1",
				"ilmek.task.duration{ilmek.graph.name=one,ilmek.node.id=a,ilmek.task.outcome=error} count=1",
				"ilmek.tasks{ilmek.graph.name=one,ilmek.node.id=a,ilmek.task.outcome=error} 1",
			},
		},
		{
			name: "panic",
			fn:   func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { panic("boom") },
			tree: `run one ilmek.graph.name=one ilmek.run.status=error ilmek.run.supersteps=1 error.type=panic ERROR "node \"a\" (task \"a\") panicked: panic: boom"
  superstep ilmek.superstep=1 ilmek.superstep.tasks=1 error.type=panic ERROR "node \"a\" (task \"a\") panicked: panic: boom"
    task a ilmek.node.id=a ilmek.task.key=a ilmek.superstep=1 ilmek.task.attempt=1 ilmek.task.outcome=error error.type=panic ERROR "node \"a\" (task \"a\") panicked: panic: boom"
      · exception exception.type=*runtime.NodeError exception.message="node \"a\" (task \"a\") panicked: panic: boom"
`,
			metrics: []string{
				"ilmek.run.duration{ilmek.graph.name=one,ilmek.run.status=error} count=1",
				"ilmek.runs{ilmek.graph.name=one,ilmek.run.status=error} 1",
				"ilmek.supersteps{ilmek.graph.name=one} 1",
				"ilmek.task.duration{ilmek.graph.name=one,ilmek.node.id=a,ilmek.task.outcome=error} count=1",
				"ilmek.tasks{ilmek.graph.name=one,ilmek.node.id=a,ilmek.task.outcome=error} 1",
			},
		},
		{
			name: "refused resume",
			fn:   ok,
			run: func(ctx context.Context, g *runtime.Graph[runtime.Values, runtime.Values], obs runtime.RunOption) error {
				_, err := g.Thread(checkpoint.NewMemory(), "t").Resume(ctx, runtime.Answer(1), obs)
				return err
			},
			tree: `run one ilmek.graph.name=one ilmek.thread.id=t ilmek.run.resume=true ilmek.run.status=refused ilmek.run.supersteps=0 error.type=*runtime.ResumeError ERROR "cannot resume thread \"t\" — it is not interrupted: no run has started it (it has no checkpoints); start one with Invoke"
  · ilmek.lease.taken
  · ilmek.resume ilmek.resume.accepted=false ilmek.resume.reason="cannot resume thread \"t\" — it is not interrupted: no run has started it (it has no checkpoints); start one with Invoke"
  · exception exception.type=*runtime.ResumeError exception.message="cannot resume thread \"t\" — it is not interrupted: no run has started it (it has no checkpoints); start one with Invoke"
`,
			metrics: []string{
				"ilmek.run.duration{ilmek.graph.name=one,ilmek.run.status=refused} count=1",
				"ilmek.runs{ilmek.graph.name=one,ilmek.run.status=refused} 1",
			},
		},
		{
			name: "cancelled",
			fn:   ok,
			run: func(ctx context.Context, g *runtime.Graph[runtime.Values, runtime.Values], obs runtime.RunOption) error {
				ctx, cancel := context.WithCancel(ctx)
				cancel()
				_, err := g.Invoke(ctx, runtime.Values{}, obs)
				return err
			},
			tree: `run one ilmek.graph.name=one ilmek.run.status=aborted ilmek.run.supersteps=0 error.type=canceled ERROR "run aborted: context canceled"
  · exception exception.type=*fmt.wrapErrors exception.message="run aborted: context canceled"
`,
			metrics: []string{
				"ilmek.run.duration{ilmek.graph.name=one,ilmek.run.status=aborted} count=1",
				"ilmek.runs{ilmek.graph.name=one,ilmek.run.status=aborted} 1",
			},
		},
		{
			name: "checkpoint write failed",
			fn:   ok,
			run: func(ctx context.Context, g *runtime.Graph[runtime.Values, runtime.Values], obs runtime.RunOption) error {
				_, err := g.Thread(failingPut{checkpoint.NewMemory()}, "t").Invoke(ctx, runtime.Values{}, obs)
				return err
			},
			tree: `run one ilmek.graph.name=one ilmek.thread.id=t ilmek.run.status=refused ilmek.run.supersteps=0 error.type=*runtime.CheckpointError ERROR "checkpointer put: disk full"
  · ilmek.lease.taken
  · exception exception.type=*runtime.CheckpointError exception.message="checkpointer put: disk full"
  checkpoint ilmek.superstep=0 ilmek.checkpoint.pause=false error.type=*errors.errorString ERROR "disk full"
    · exception exception.type=*errors.errorString exception.message="disk full"
`,
			metrics: []string{
				"ilmek.checkpoint.duration{error.type=*errors.errorString,ilmek.checkpoint.pause=false,ilmek.graph.name=one} count=1",
				"ilmek.run.duration{ilmek.graph.name=one,ilmek.run.status=refused} count=1",
				"ilmek.runs{ilmek.graph.name=one,ilmek.run.status=refused} 1",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t)
			g := oneNodeGraph(t, tc.fn)
			run := tc.run
			if run == nil {
				run = func(ctx context.Context, g *runtime.Graph[runtime.Values, runtime.Values], obs runtime.RunOption) error {
					_, err := g.Invoke(ctx, runtime.Values{}, obs)
					return err
				}
			}
			if err := run(context.Background(), g, runtime.WithObserver(s.obs)); err == nil {
				t.Fatal("the run did not fail")
			}
			if testing.Verbose() {
				t.Logf("tree:\n%s\nmetrics:\n%q", s.tree(), s.metrics(t))
			}
			if d := cmp.Diff(tc.tree, s.tree()); d != "" {
				t.Errorf("span tree (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.metrics, s.metrics(t)); d != "" {
				t.Errorf("metrics (-want +got):\n%s", d)
			}
		})
	}
}

// TestLeaseLost checks that a lost lease is an event on the run's span and
// counted.
func TestLeaseLost(t *testing.T) {
	s := newSetup(t)
	cp := checkpoint.NewMemory()
	g := oneNodeGraph(t, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
		if err := cp.DeleteThread(ctx, "t"); err != nil {
			return nil, err
		}
		<-ctx.Done()
		return nil, context.Cause(ctx)
	})
	if _, err := g.Thread(cp, "t").Invoke(context.Background(), runtime.Values{}, runtime.WithObserver(s.obs)); !errors.Is(err, checkpoint.ErrThreadDeleted) {
		t.Fatalf("err = %v, want one matching ErrThreadDeleted", err)
	}
	want := `run one ilmek.graph.name=one ilmek.thread.id=t ilmek.run.status=error ilmek.run.supersteps=1 error.type=*runtime.CheckpointError ERROR "checkpointer lease: the thread was deleted while the run held it"
  · ilmek.lease.taken
  · ilmek.lease.lost error.type=*errors.errorString exception.message="the thread was deleted while the run held it"
  · exception exception.type=*runtime.CheckpointError exception.message="checkpointer lease: the thread was deleted while the run held it"
  checkpoint ilmek.superstep=0 ilmek.checkpoint.pause=false
  superstep ilmek.superstep=1 ilmek.superstep.tasks=1 error.type=*runtime.leaseLostError ERROR "node \"a\" (task \"a\"): lease lost: the thread was deleted while the run held it"
    task a ilmek.node.id=a ilmek.task.key=a ilmek.superstep=1 ilmek.task.attempt=1 ilmek.task.outcome=error error.type=*runtime.leaseLostError ERROR "node \"a\" (task \"a\"): lease lost: the thread was deleted while the run held it"
      · exception exception.type=*runtime.NodeError exception.message="node \"a\" (task \"a\"): lease lost: the thread was deleted while the run held it"
`
	if d := cmp.Diff(want, s.tree()); d != "" {
		t.Errorf("span tree (-want +got):\n%s", d)
	}
	if got := s.metrics(t); !slices.Contains(got, "ilmek.lease.losses{ilmek.graph.name=one} 1") {
		t.Errorf("metrics %q lack one lease loss", got)
	}
}
