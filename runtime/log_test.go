package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// attrHandler keeps every record it handles as a line "LEVEL msg
// k=v ...", with the attributes named in keep (others are checked for
// presence only), and counts Enabled calls and records per level.
type attrHandler struct {
	mu      sync.Mutex
	level   slog.Level
	lines   []string
	handled map[slog.Level]int
	attrs   map[string][]string // message -> attribute names, first record
}

func newRecordingHandler(level slog.Level) *attrHandler {
	return &attrHandler{level: level, handled: map[slog.Level]int{}, attrs: map[string][]string{}}
}

func (h *attrHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *attrHandler) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *attrHandler) WithGroup(string) slog.Handler                { return h }

// keep lists the attributes whose values are stable enough to compare.
var keep = map[string]bool{"superstep": true, "node": true, "task": true, "attempt": true, "backoff": true, "status": true, "interrupt": true, "thread": true, "error": true, "step_key": true, "replayed": true}

func (h *attrHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.handled[r.Level]++
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	var names []string
	r.Attrs(func(a slog.Attr) bool {
		names = append(names, a.Key)
		if keep[a.Key] {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		}
		return true
	})
	if _, ok := h.attrs[r.Message]; !ok {
		h.attrs[r.Message] = names
	}
	h.lines = append(h.lines, b.String())
	return nil
}

func TestRuntimeLogs(t *testing.T) {
	h := newRecordingHandler(slog.LevelInfo)
	g := observedGraph(t, runtime.WithLogger(slog.New(h)))
	cp := checkpoint.NewMemory()
	th := g.Thread(cp, "t")
	ctx := context.Background()
	if _, err := th.Invoke(ctx, runtime.Values{}); err != nil {
		t.Fatal(err)
	}
	if _, err := th.Resume(ctx, runtime.AnswersByID(map[string]any{"nope": 1})); err == nil {
		t.Fatal("resume with an unknown id was accepted")
	}
	if _, err := th.Resume(ctx, runtime.Answer(true)); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"WARN task attempt failed, retrying thread=t superstep=2 node=a task=a attempt=1 backoff=1ms error=node \"a\" (task \"a\"): flaky",
		"INFO interrupt opened thread=t interrupt=b:interrupt#0 node=b",
		"INFO run ended thread=t status=interrupted",
		"WARN resume refused thread=t",
		"INFO interrupt answered thread=t interrupt=b:interrupt#0 node=b",
		"INFO resume accepted thread=t",
		"INFO run ended thread=t status=done",
	}
	if d := cmp.Diff(want, h.lines); d != "" {
		t.Errorf("records (-want +got):\n%s", d)
	}
	wantAttrs := map[string][]string{
		"task attempt failed, retrying": {"run", "thread", "superstep", "node", "task", "attempt", "backoff", "error"},
		"resume refused":                {"run", "thread", "reason"},
		"run ended":                     {"run", "thread", "status", "supersteps", "duration"},
	}
	for msg, names := range wantAttrs {
		if d := cmp.Diff(names, h.attrs[msg]); d != "" {
			t.Errorf("attributes of %q (-want +got):\n%s", msg, d)
		}
	}
	if n := h.handled[slog.LevelDebug]; n != 0 {
		t.Errorf("%d debug records reached a handler that disabled debug", n)
	}
}

// TestRuntimeLogsDebug checks the debug records: steps executed and
// replayed, tasks, supersteps, checkpoints and the lease; and that a run's
// WithLogger replaces the graph's.
func TestRuntimeLogsDebug(t *testing.T) {
	graphH, runH := newRecordingHandler(slog.LevelDebug), newRecordingHandler(slog.LevelDebug)
	g := observedGraph(t, runtime.WithLogger(slog.New(graphH)))
	opts, th := []runtime.RunOption{runtime.WithLogger(slog.New(runH))}, g.Thread(checkpoint.NewMemory(), "t")
	if _, err := th.Invoke(context.Background(), runtime.Values{}, opts...); err != nil {
		t.Fatal(err)
	}
	if len(graphH.lines) != 0 {
		t.Errorf("the graph's logger got %d records of a run with its own logger", len(graphH.lines))
	}
	var got []string
	for _, l := range runH.lines {
		if strings.Contains(l, "node=a") || strings.HasPrefix(l, "DEBUG lease") || strings.HasPrefix(l, "DEBUG checkpoint") {
			got = append(got, l)
		}
	}
	want := []string{
		"DEBUG lease taken thread=t",
		"DEBUG checkpoint written thread=t superstep=0",
		"DEBUG checkpoint written thread=t superstep=1",
		"DEBUG task started thread=t superstep=2 node=a task=a",
		"DEBUG step executed thread=t superstep=2 node=a task=a step_key=fetch#0 replayed=false",
		"WARN task attempt failed, retrying thread=t superstep=2 node=a task=a attempt=1 backoff=1ms error=node \"a\" (task \"a\"): flaky",
		"DEBUG step replayed thread=t superstep=2 node=a task=a step_key=fetch#0 replayed=true",
		"DEBUG task ended thread=t superstep=2 node=a task=a status=done attempt=2",
		"DEBUG checkpoint written thread=t superstep=1",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("records (-want +got):\n%s", d)
	}
}

// TestRuntimeLogsPanic checks that a recovered panic is an error record
// and its stack a debug one.
func TestRuntimeLogsPanic(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		h := newRecordingHandler(level)
		g := mustCompile(t, runtime.NewBuilder("boom").Channel("x", "").
			Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { panic("boom") }).
			Edge(spec.Start, "a"), runtime.WithLogger(slog.New(h)))
		if _, err := g.Invoke(context.Background(), runtime.Values{}); err == nil {
			t.Fatal("a panicking node did not fail the run")
		}
		if h.handled[slog.LevelError] != 2 { // the panic and the run's end
			t.Errorf("level %s: %d error records, want 2: %q", level, h.handled[slog.LevelError], h.lines)
		}
		_, stack := h.attrs["task panic stack"]
		if stack != (level == slog.LevelDebug) {
			t.Errorf("level %s: stack record written = %v", level, stack)
		}
	}
}

// renewingCheckpointer reports one renewal of each lease it hands out.
type renewingCheckpointer struct{ runtime.Checkpointer }

func (c renewingCheckpointer) Lease(ctx context.Context, thread string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	l, err := c.Checkpointer.Lease(ctx, thread, opts)
	if err == nil && opts.Renewed != nil {
		opts.Renewed(time.Now().Add(time.Minute))
	}
	return l, err
}

// failingCheckpointer fails every checkpoint write.
type failingCheckpointer struct{ runtime.Checkpointer }

func (c failingCheckpointer) Lease(ctx context.Context, thread string, opts checkpoint.LeaseOptions) (checkpoint.Lease, error) {
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

// TestRuntimeLogsOperator checks the records an operator needs beyond a
// run's own course: the lease renewed and lost, a cancelled run, a failed
// checkpoint write, each at its level and with its attributes.
func TestRuntimeLogsOperator(t *testing.T) {
	ok := func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }
	for _, tc := range []struct {
		name  string
		node  func(cp runtime.Checkpointer) runtime.NodeFunc
		run   func(ctx context.Context, g *runtime.Graph[runtime.Values, runtime.Values], cp runtime.Checkpointer, l *slog.Logger) error
		msg   []string // the messages kept
		want  []string
		attrs map[string][]string
	}{
		{
			name: "lease renewed",
			node: func(runtime.Checkpointer) runtime.NodeFunc { return ok },
			run: func(ctx context.Context, g *runtime.Graph[runtime.Values, runtime.Values], cp runtime.Checkpointer, l *slog.Logger) error {
				_, err := g.Thread(renewingCheckpointer{cp}, "t").Invoke(ctx, runtime.Values{}, runtime.WithLogger(l))
				return err
			},
			msg:  []string{"lease taken", "lease renewed"},
			want: []string{"DEBUG lease renewed thread=t", "DEBUG lease taken thread=t"},
		},
		{
			name: "lease lost",
			node: func(cp runtime.Checkpointer) runtime.NodeFunc {
				return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					if err := cp.DeleteThread(ctx, "t"); err != nil {
						return nil, err
					}
					<-ctx.Done()
					return nil, context.Cause(ctx)
				}
			},
			run: func(ctx context.Context, g *runtime.Graph[runtime.Values, runtime.Values], cp runtime.Checkpointer, l *slog.Logger) error {
				_, err := g.Thread(cp, "t").Invoke(ctx, runtime.Values{}, runtime.WithLogger(l))
				if !errors.Is(err, checkpoint.ErrThreadDeleted) {
					return fmt.Errorf("err = %v, want one matching ErrThreadDeleted", err)
				}
				return nil
			},
			msg:   []string{"lease lost"},
			want:  []string{"ERROR lease lost thread=t error=the thread was deleted while the run held it"},
			attrs: map[string][]string{"lease lost": {"run", "thread", "error"}},
		},
		{
			name: "cancelled",
			node: func(runtime.Checkpointer) runtime.NodeFunc { return ok },
			run: func(ctx context.Context, g *runtime.Graph[runtime.Values, runtime.Values], _ runtime.Checkpointer, l *slog.Logger) error {
				ctx, cancel := context.WithCancel(ctx)
				cancel()
				res, _ := g.Invoke(ctx, runtime.Values{}, runtime.WithLogger(l))
				if res.Status != runtime.StatusAborted {
					return fmt.Errorf("status %q, want aborted", res.Status)
				}
				return nil
			},
			msg:   []string{"run aborted"},
			want:  []string{"WARN run aborted thread= status=aborted error=run aborted: context canceled"},
			attrs: map[string][]string{"run aborted": {"run", "thread", "status", "supersteps", "duration", "error"}},
		},
		{
			name: "checkpoint write failed",
			node: func(runtime.Checkpointer) runtime.NodeFunc { return ok },
			run: func(ctx context.Context, g *runtime.Graph[runtime.Values, runtime.Values], cp runtime.Checkpointer, l *slog.Logger) error {
				if _, err := g.Thread(failingCheckpointer{cp}, "t").Invoke(ctx, runtime.Values{}, runtime.WithLogger(l)); err == nil {
					return errors.New("a run whose checkpoint write failed succeeded")
				}
				return nil
			},
			msg:   []string{"checkpoint write failed"},
			want:  []string{"ERROR checkpoint write failed thread=t superstep=0 error=disk full"},
			attrs: map[string][]string{"checkpoint write failed": {"run", "thread", "checkpoint", "superstep", "error"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newRecordingHandler(slog.LevelDebug)
			cp := checkpoint.NewMemory()
			g := mustCompile(t, runtime.NewBuilder("ops").Channel("x", "").Node("a", tc.node(cp)).Edge(spec.Start, "a"))
			if err := tc.run(context.Background(), g, cp, slog.New(h)); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range h.lines {
				for _, m := range tc.msg {
					if strings.Contains(l, " "+m+" ") {
						got = append(got, l)
					}
				}
			}
			slices.Sort(got)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("records (-want +got):\n%s\nall records: %q", d, h.lines)
			}
			for msg, names := range tc.attrs {
				if d := cmp.Diff(names, h.attrs[msg]); d != "" {
					t.Errorf("attributes of %q (-want +got):\n%s", msg, d)
				}
			}
		})
	}
}
