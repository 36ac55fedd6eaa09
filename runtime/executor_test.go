package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

func write(u runtime.Values) runtime.NodeFunc {
	return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return u, nil }
}

func mustCompile(t *testing.T, b *runtime.Builder, opts ...runtime.Option) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := b.Compile(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// steps collects the task keys of each superstep of a streamed run.
func steps(t *testing.T, seq func(func(runtime.Event, error) bool)) ([][]string, runtime.Event) {
	t.Helper()
	var out [][]string
	var end runtime.Event
	var seqNo int64
	for ev, err := range seq {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		seqNo++
		if ev.Seq != seqNo {
			t.Fatalf("event %s has seq %d, want %d (gap-free)", ev.Type, ev.Seq, seqNo)
		}
		switch ev.Type {
		case runtime.EventStepStart:
			out = append(out, ev.Tasks)
		case runtime.EventRunEnd:
			end = ev
		}
	}
	return out, end
}

func TestTaskIsolation(t *testing.T) {
	// Both tasks read n from the same snapshot: one increment is lost.
	incr := func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
		n, _ := s["n"].(float64)
		return runtime.Values{"n": n + 1}, nil
	}
	sawSibling := atomic.Bool{}
	watch := func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
		time.Sleep(5 * time.Millisecond)
		if _, ok := s["mark"]; ok {
			sawSibling.Store(true)
		}
		return nil, nil
	}
	g := mustCompile(t, runtime.NewBuilder("iso").
		Channel("n", "").Channel("mark", "").
		Node("a", incr).Node("b", incr).Node("c", write(runtime.Values{"mark": true})).Node("d", watch).
		Edge(spec.Start, "a").Edge(spec.Start, "b").Edge(spec.Start, "c").Edge(spec.Start, "d"))
	res, err := g.Invoke(context.Background(), runtime.Values{"n": 0})
	if err != nil {
		t.Fatal(err)
	}
	if res.State["n"] != 1.0 {
		t.Errorf("n = %v, want 1 (both tasks read the same snapshot)", res.State["n"])
	}
	if sawSibling.Load() {
		t.Error("a task saw a sibling's update")
	}
}

func TestReduceOrderIsTaskOrderNotCompletionOrder(t *testing.T) {
	b := runtime.NewBuilder("order").Channel("last", "").Channel("trail", spec.Append)
	names := []string{"zeta", "alpha", "mid", "omega", "beta"}
	for _, n := range names {
		b.Node(n, func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			return runtime.Values{"last": n, "trail": n}, nil
		})
	}
	for i := len(names) - 1; i >= 0; i-- {
		b.Edge(spec.Start, names[i])
	}
	g := mustCompile(t, b)
	for i := range 50 {
		res, err := g.Invoke(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		want := []any{"zeta", "alpha", "mid", "omega", "beta"}
		if d := cmp.Diff(want, res.State["trail"]); d != "" || res.State["last"] != "beta" {
			t.Fatalf("run %d: fold not in declaration order (-want +got):\n%s last=%v", i, d, res.State["last"])
		}
	}
}

func TestRecursionLimit(t *testing.T) {
	loop := runtime.NewBuilder("loop").Channel("n", "").
		Node("inc", func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			n, _ := s["n"].(float64)
			return runtime.Values{"n": n + 1}, nil
		}).
		Edge(spec.Start, "inc").
		EdgeWhen("inc", "inc", spec.Predicate{Channel: "n", Op: spec.OpLt, Value: spec.Literal{Kind: spec.LitNumber, Num: "100"}})
	g := mustCompile(t, loop)
	tests := []struct {
		limit     int
		wantSteps int
		wantErr   bool
	}{
		{limit: 0, wantSteps: 0, wantErr: true},
		{limit: 4, wantSteps: 4, wantErr: true},
		{limit: 100, wantSteps: 100, wantErr: false},
	}
	for _, tc := range tests {
		res, err := g.Invoke(context.Background(), nil, runtime.WithRecursionLimit(tc.limit))
		var rl *runtime.RecursionLimitError
		if got := errors.As(err, &rl); got != tc.wantErr {
			t.Errorf("limit %d: err = %v, want recursion error %v", tc.limit, err, tc.wantErr)
		}
		if res.Supersteps != tc.wantSteps {
			t.Errorf("limit %d: ran %d supersteps, want %d", tc.limit, res.Supersteps, tc.wantSteps)
		}
		if tc.wantErr && rl.Limit != tc.limit {
			t.Errorf("limit %d: RecursionLimitError.Limit = %d", tc.limit, rl.Limit)
		}
	}
}

func TestStartToEndOnlyRunsNothingEvenAtLimitZero(t *testing.T) {
	g := mustCompile(t, runtime.NewBuilder("empty").Edge(spec.Start, spec.End))
	res, err := g.Invoke(context.Background(), nil, runtime.WithRecursionLimit(0))
	if err != nil || res.Status != runtime.StatusDone || res.Supersteps != 0 {
		t.Fatalf("got %+v, %v; want done after 0 supersteps", res, err)
	}
}

func TestCancellationAbortsAtBoundary(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	g := mustCompile(t, runtime.NewBuilder("c").Channel("n", "").
		Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			cancel()
			return runtime.Values{"n": 1}, nil
		}).
		Node("b", write(runtime.Values{"n": 2})).
		Edge(spec.Start, "a").Edge("a", "b"))
	cp := checkpoint.NewMemory()
	res, err := g.Thread(cp, "t").Invoke(ctx, nil)
	if res.Status != runtime.StatusAborted || !errors.Is(err, runtime.ErrAborted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("status %s err %v, want aborted", res.Status, err)
	}
	if res.State["n"] != 1.0 {
		t.Errorf("state n = %v, want 1 (the superstep that finished stands)", res.State["n"])
	}
	// The thread resumes cleanly later: the pending plan (b) runs.
	res, err = g.Thread(cp, "t").Invoke(context.Background(), nil)
	if err != nil || res.State["n"] != 2.0 || res.Supersteps != 1 {
		t.Fatalf("after abort: %+v %v", res, err)
	}
}

func TestNodeErrorsAndPanics(t *testing.T) {
	tests := []struct {
		name string
		fn   runtime.NodeFunc
		// reduce: the error is a ReduceError of node bad wrapping a
		// ChannelError, else a NodeError of node bad.
		reduce bool
		msg    string
	}{
		{"error", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, errors.New("boom") }, false, "boom"},
		{"panic", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { panic("kaboom") }, false, "panicked: panic: kaboom"},
		{"undeclared", write(runtime.Values{"statsu": 1}), true, `write to undeclared channel "statsu"`},
		{"merge-non-object", write(runtime.Values{"m": "str"}), true, "a merge channel takes a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := mustCompile(t, runtime.NewBuilder("e").Channel("ok", "").Channel("m", spec.Merge).
				Node("bad", tc.fn).Node("good", write(runtime.Values{"ok": true})).
				Edge(spec.Start, "bad").Edge(spec.Start, "good"))
			res, err := g.Invoke(context.Background(), nil)
			if res.Status != runtime.StatusError || err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("status %s, err %v; want an error containing %q", res.Status, err, tc.msg)
			}
			var ne *runtime.NodeError
			var re *runtime.ReduceError
			var ce *runtime.ChannelError
			if tc.reduce {
				if !errors.As(err, &re) || re.Node != "bad" || !errors.As(err, &ce) || errors.As(err, &ne) {
					t.Fatalf("err %#v; want a ReduceError of node bad wrapping a ChannelError", err)
				}
			} else if !errors.As(err, &ne) || ne.Node != "bad" || errors.As(err, &re) {
				t.Fatalf("err %#v; want a NodeError of node bad", err)
			}
			if _, ok := res.State["ok"]; ok {
				t.Error("a sibling's update was applied in a failed superstep")
			}
			if tc.name == "panic" && (!errors.As(err, &ne) || !strings.Contains(ne.Stack, "goroutine")) {
				t.Errorf("panic error has no stack: %#v", err)
			}
		})
	}
}

func TestUndeclaredInputFailsBeforeRun(t *testing.T) {
	g := mustCompile(t, runtime.NewBuilder("i").Channel("a", "").Node("n", write(nil)).Edge(spec.Start, "n"))
	res, err := g.Invoke(context.Background(), runtime.Values{"nope": 1})
	var re *runtime.ReduceError
	var ce *runtime.ChannelError
	if res.Supersteps != 0 || !errors.As(err, &re) || re.Node != "" || !errors.As(err, &ce) || ce.Channel != "nope" {
		t.Fatalf("got %+v %v; want a ReduceError of the input (Node \"\") on channel nope before any superstep", res, err)
	}
}

func TestCustomEventsAreLive(t *testing.T) {
	release := make(chan struct{})
	g := mustCompile(t, runtime.NewBuilder("live").
		Node("talker", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			ctx.EmitToken("hello", nil)
			<-release // the consumer must see the token before the sibling finishes
			return nil, nil
		}).
		Node("slow", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			<-release
			return nil, nil
		}).
		Edge(spec.Start, "talker").Edge(spec.Start, "slow"))
	var types []runtime.EventType
	for ev, err := range g.Stream(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
		if ev.Type == runtime.EventCustom {
			tok, ok := ev.Payload.(runtime.Token)
			if !ok || tok.Text != "hello" || ev.Node != "talker" {
				t.Errorf("custom event %+v", ev)
			}
			close(release)
		}
	}
	want := []runtime.EventType{"run_start", "step_start", "node_start", "node_start", "custom", "node_end", "node_end", "state", "run_end"}
	if d := cmp.Diff(want, types); d != "" {
		t.Errorf("event order (-want +got):\n%s", d)
	}
}

func TestEventsCarryEnvelopeAndCheckpoints(t *testing.T) {
	g := mustCompile(t, runtime.NewBuilder("env").Channel("x", "").
		Node("a", write(runtime.Values{"x": 1})).Edge(spec.Start, "a").Edge("a", spec.End))
	var got []string
	for ev, err := range g.Thread(checkpoint.NewMemory(), "t1").Stream(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.ThreadID != "t1" || ev.RunID == "" || ev.NS == nil || len(ev.NS) != 0 {
			t.Errorf("bad envelope %+v", ev)
		}
		got = append(got, string(ev.Type))
	}
	want := "run_start step_start node_start node_end state checkpoint run_end"
	if strings.Join(got, " ") != want {
		t.Errorf("events %q, want %q", strings.Join(got, " "), want)
	}
}

func TestConsumerStopAborts(t *testing.T) {
	ran := atomic.Int32{}
	g := mustCompile(t, runtime.NewBuilder("stop").
		Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { ran.Add(1); return nil, nil }).
		Node("b", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { ran.Add(1); return nil, nil }).
		Edge(spec.Start, "a").Edge("a", "b"))
	for ev := range g.Stream(context.Background(), nil) {
		if ev.Type == runtime.EventNodeEnd {
			break
		}
	}
	if ran.Load() != 1 {
		t.Errorf("%d nodes ran after the consumer stopped at the first node_end, want 1", ran.Load())
	}
}

func TestToSpecRefusals(t *testing.T) {
	noop := write(nil)
	tests := []struct {
		name string
		b    *runtime.Builder
		want string
	}{
		{"router", runtime.NewBuilder("r").TypedNode("a", "t", nil, noop).Edge(spec.Start, "a").
			Router("a", func(runtime.Values) ([]runtime.Goto, error) { return nil, nil }), `node "a" has a router`},
		{"anonymous node", runtime.NewBuilder("r").Node("a", noop).Edge(spec.Start, "a"), `node "a" has no registry type`},
		{"go guard", runtime.NewBuilder("r").TypedNode("a", "t", nil, noop).EdgeIf(spec.Start, "a", func(runtime.Values) bool { return true }), `edge "__start__" -> "a" has a Go guard`},
		{"custom reducer", runtime.NewBuilder("r").ChannelFunc("sum", func(c, i any) (any, error) { return i, nil }).TypedNode("a", "t", nil, noop).Edge(spec.Start, "a"), `channel "sum" has a custom reducer`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := mustCompile(t, tc.b)
			_, err := runtime.ToSpec(g)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ToSpec error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	g := mustCompile(t, runtime.NewBuilder("ok").Channel("n", spec.Append).TypedNode("a", "t", map[string]any{"k": 1}, noop).Edge(spec.Start, "a"))
	doc, err := runtime.ToSpec(g)
	if err != nil || len(doc.Nodes) != 1 || string(doc.Nodes[0].Config) != `{"k":1}` {
		t.Fatalf("storable graph: %+v %v", doc, err)
	}
}

func TestCompileErrors(t *testing.T) {
	_, err := runtime.NewBuilder("bad").Node("a", write(nil)).Node("a", write(nil)).Node(spec.End, write(nil)).
		Edge("a", "ghost").EdgeWhen("a", spec.End, spec.Predicate{Channel: "nope", Op: spec.OpTruthy, Value: spec.Literal{Kind: spec.LitBool, Bool: true}}).Compile()
	for _, want := range []string{`duplicate node "a"`, `node id "__end__" is reserved`, `unknown node "ghost"`, `channel "nope"`, "no entry edge"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("compile error %v does not mention %q", err, want)
		}
	}
}

func TestRetryReRunsBodyNotSteps(t *testing.T) {
	var charges, attempts atomic.Int32
	var retries []int
	g := mustCompile(t, runtime.NewBuilder("retry").Channel("out", "").
		Node("pay", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Step(ctx, "charge", func() (int, error) { return int(charges.Add(1)), nil }); err != nil {
				return nil, err
			}
			if attempts.Add(1) < 3 {
				return nil, errors.New("flaky")
			}
			return runtime.Values{"out": "paid"}, nil
		}).Edge(spec.Start, "pay"),
		runtime.WithNodeRetry("pay", runtime.RetryPolicy{MaxAttempts: 3, Backoff: time.Millisecond, Factor: 2}))
	start := time.Now()
	for ev, err := range g.Stream(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == runtime.EventNodeRetry {
			retries = append(retries, ev.Attempt)
		}
		if ev.Type == runtime.EventRunEnd && ev.Status != runtime.StatusDone {
			t.Fatalf("run ended %s: %v", ev.Status, ev.Err)
		}
	}
	if charges.Load() != 1 || attempts.Load() != 3 {
		t.Errorf("charges %d attempts %d; want 1 and 3", charges.Load(), attempts.Load())
	}
	if fmt.Sprint(retries) != "[1 2]" {
		t.Errorf("node_retry attempts %v", retries)
	}
	if el := time.Since(start); el < 3*time.Millisecond || el > 2*time.Second {
		t.Errorf("backoff 1ms+2ms took %v", el)
	}
}

func TestLeaseRefusesConcurrentRunOfThread(t *testing.T) {
	inside := make(chan struct{})
	release := make(chan struct{})
	g := mustCompile(t, runtime.NewBuilder("lease").
		Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			close(inside)
			<-release
			return nil, nil
		}).Edge(spec.Start, "a"))
	cp := checkpoint.NewMemory()
	done := make(chan error)
	go func() {
		_, err := g.Thread(cp, "t").Invoke(context.Background(), nil)
		done <- err
	}()
	<-inside
	_, err := g.Thread(cp, "t").Invoke(context.Background(), nil)
	if !errors.Is(err, runtime.ErrThreadBusy) {
		t.Errorf("second run: %v, want ErrThreadBusy", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
