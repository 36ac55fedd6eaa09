package otel_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	ilmekotel "github.com/ilmek-go/ilmek/otel"
	"github.com/ilmek-go/ilmek/otel/internal/spantree"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// setup is an Observer writing to a span recorder and a manual metric
// reader, and the tracer of the "caller".
type setup struct {
	obs    *ilmekotel.Observer
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	caller trace.Tracer
}

func newSetup(t *testing.T) *setup {
	t.Helper()
	s := &setup{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(s.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	obs, err := ilmekotel.New(ilmekotel.WithTracerProvider(tp), ilmekotel.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	s.obs, s.caller = obs, tp.Tracer("caller")
	return s
}

// stable leaves out what changes from run to run: ids and timings.
func stable(k attribute.Key) bool {
	switch k {
	case ilmekotel.KeyRunID, ilmekotel.KeyTaskID, ilmekotel.KeyCheckpointID, ilmekotel.KeyCheckpointBytes,
		ilmekotel.KeyStepDuration, ilmekotel.KeyBackoff, "exception.stacktrace":
		return true
	}
	return false
}

func (s *setup) tree() string {
	return spantree.String(s.spans.Ended(), spantree.Options{Skip: stable})
}

// orderGraph fans out from plan to fetch and ship. fetch journals a step
// and fails its first attempt ever, which its retry policy re-runs; ship
// journals a step and asks a person.
func orderGraph(t *testing.T, opts ...runtime.Option) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	var calls atomic.Int32
	opts = append(opts, runtime.WithNodeRetry("fetch", runtime.RetryPolicy{MaxAttempts: 3, Backoff: time.Millisecond}))
	g, err := runtime.NewBuilder("order").Channel("out", spec.Append).
		Node("plan", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return runtime.Values{"out": "plan"}, nil }).
		TypedNode("fetch", "http.get", nil, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Step(ctx, "get", func() (int, error) { return 1, nil }); err != nil {
				return nil, err
			}
			if calls.Add(1) == 1 {
				return nil, errors.New("flaky")
			}
			return runtime.Values{"out": "fetch"}, nil
		}).
		TypedNode("ship", "approval", nil, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if _, err := runtime.Step(ctx, "charge", func() (int, error) { return 2, nil }); err != nil {
				return nil, err
			}
			ok, err := runtime.Interrupt[bool](ctx, "ship?")
			if err != nil {
				return nil, err
			}
			return runtime.Values{"out": fmt.Sprint("ship ", ok)}, nil
		}).
		Edge(spec.Start, "plan").Edge("plan", "fetch").Edge("plan", "ship").
		Compile(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// runPauseResume runs orderGraph until it pauses and resumes it, each
// under a span of the caller's, and returns the results.
func runPauseResume(t *testing.T, s *setup, g *runtime.Graph[runtime.Values, runtime.Values], opts ...runtime.RunOption) (first, second runtime.Result[runtime.Values]) {
	t.Helper()
	th := g.Thread(checkpoint.NewMemory(), "order-1")
	ctx, req := s.caller.Start(context.Background(), "request 1")
	first, err := th.Invoke(ctx, runtime.Values{}, opts...)
	req.End()
	if err != nil || first.Status != runtime.StatusInterrupted {
		t.Fatalf("first run: %s %v", first.Status, err)
	}
	ctx, req = s.caller.Start(context.Background(), "request 2")
	second, err = th.Resume(ctx, runtime.Answer(true), opts...)
	req.End()
	if err != nil || second.Status != runtime.StatusDone {
		t.Fatalf("resume: %s %v", second.Status, err)
	}
	return first, second
}

// TestSpanTree checks the exact span tree of a run with a fan-out, a
// retry, a journaled step and an interrupt, and of the run that resumes
// it: its tasks replay their steps, and it links to the run that paused.
func TestSpanTree(t *testing.T) {
	s := newSetup(t)
	g := orderGraph(t, runtime.WithObserver(s.obs))
	runPauseResume(t, s, g)
	want := `request 1
  run order ilmek.graph.name=order ilmek.thread.id=order-1 ilmek.run.status=interrupted ilmek.run.supersteps=2
    · ilmek.lease.taken
    checkpoint ilmek.superstep=0 ilmek.checkpoint.pause=false
    superstep ilmek.superstep=1 ilmek.superstep.tasks=1
      task plan ilmek.node.id=plan ilmek.task.key=plan ilmek.superstep=1 ilmek.task.attempt=1 ilmek.task.outcome=done
      checkpoint ilmek.superstep=1 ilmek.checkpoint.pause=false
    superstep ilmek.superstep=2 ilmek.superstep.tasks=2
      · ilmek.interrupt.opened ilmek.interrupt.id=ship:interrupt#0 ilmek.node.id=ship
      task fetch ilmek.node.id=fetch ilmek.node.type=http.get ilmek.task.key=fetch ilmek.superstep=2 ilmek.task.attempt=2 ilmek.task.outcome=done
        · ilmek.step.executed ilmek.step.key=get#0
        · ilmek.task.retry ilmek.task.attempt=1 error.type=*errors.errorString exception.message="node \"fetch\" (task \"fetch\"): flaky"
        · ilmek.step.replayed ilmek.step.key=get#0
      task ship ilmek.node.id=ship ilmek.node.type=approval ilmek.task.key=ship ilmek.superstep=2 ilmek.task.attempt=1 ilmek.task.outcome=interrupted
        · ilmek.step.executed ilmek.step.key=charge#0
      checkpoint ilmek.superstep=1 ilmek.checkpoint.pause=true
request 2
  run order ilmek.graph.name=order ilmek.thread.id=order-1 ilmek.run.resume=true ilmek.run.status=done ilmek.run.supersteps=1
    · ilmek.lease.taken
    · ilmek.interrupt.answered ilmek.interrupt.id=ship:interrupt#0 ilmek.node.id=ship
    · ilmek.resume ilmek.resume.accepted=true
    → link to run order ilmek.link.kind="paused run"
    superstep ilmek.superstep=2 ilmek.superstep.tasks=2
      task fetch ilmek.node.id=fetch ilmek.node.type=http.get ilmek.task.key=fetch ilmek.superstep=2 ilmek.task.attempt=1 ilmek.task.outcome=done
        · ilmek.step.replayed ilmek.step.key=get#0
      task ship ilmek.node.id=ship ilmek.node.type=approval ilmek.task.key=ship ilmek.superstep=2 ilmek.task.attempt=1 ilmek.task.outcome=done
        · ilmek.step.replayed ilmek.step.key=charge#0
      checkpoint ilmek.superstep=2 ilmek.checkpoint.pause=false
`
	if d := cmp.Diff(want, s.tree()); d != "" {
		t.Errorf("span tree (-want +got):\n%s", d)
	}
}

// TestResumeLink checks that the resumed run's span links to the span of
// the run that paused, which is in another trace, and that each run's span
// is a child of its caller's span.
func TestResumeLink(t *testing.T) {
	s := newSetup(t)
	g := orderGraph(t)
	// With a logger too, the run's observer is a combination of two, which
	// passes the pause's annotation on.
	first, _ := runPauseResume(t, s, g, runtime.WithObserver(s.obs), runtime.WithLogger(slog.New(slog.DiscardHandler)))
	if got := first.Pending[0].Meta[ilmekotel.MetaTraceparent]; got == "" {
		t.Fatalf("the pause kept no trace context: Meta = %v", first.Pending[0].Meta)
	}
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, sp := range s.spans.Ended() {
		byName[sp.Name()] = append(byName[sp.Name()], sp)
	}
	runs, req1, req2 := byName["run order"], byName["request 1"][0], byName["request 2"][0]
	if len(runs) != 2 {
		t.Fatalf("%d run spans, want 2", len(runs))
	}
	paused, resumed := runs[0], runs[1]
	if paused.StartTime().After(resumed.StartTime()) {
		paused, resumed = resumed, paused
	}
	if paused.Parent().SpanID() != req1.SpanContext().SpanID() || resumed.Parent().SpanID() != req2.SpanContext().SpanID() {
		t.Errorf("run spans are not children of their callers' spans")
	}
	if paused.SpanContext().TraceID() == resumed.SpanContext().TraceID() {
		t.Errorf("both runs are in one trace; the resume's caller started another")
	}
	if len(paused.Links()) != 0 {
		t.Errorf("the pausing run has links: %v", paused.Links())
	}
	links := resumed.Links()
	if len(links) != 1 || !links[0].SpanContext.Equal(paused.SpanContext().WithRemote(true)) {
		t.Fatalf("resumed run's links = %+v, want one to %v", links, paused.SpanContext())
	}
	if want := []attribute.KeyValue{ilmekotel.KeyLinkKind.String("paused run")}; !slices.Equal(links[0].Attributes, want) {
		t.Errorf("link attributes = %v, want %v", links[0].Attributes, want)
	}
}

// metrics collects s's metrics as sorted lines: "name{attrs} value" for
// counters, "name{attrs} count=n" for histograms (whose sums are timings
// or sizes).
func (s *setup) metrics(t *testing.T) []string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := s.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var out []string
	enc := attribute.DefaultEncoder()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out = append(out, fmt.Sprintf("%s{%s} %d", m.Name, p.Attributes.Encoded(enc), p.Value))
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out = append(out, fmt.Sprintf("%s{%s} count=%d", m.Name, p.Attributes.Encoded(enc), p.Count))
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					if p.Sum <= 0 {
						t.Errorf("%s{%s}: sum %d, want the bytes written", m.Name, p.Attributes.Encoded(enc), p.Sum)
					}
					out = append(out, fmt.Sprintf("%s{%s} count=%d", m.Name, p.Attributes.Encoded(enc), p.Count))
				}
			default:
				t.Errorf("metric %s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestMetrics checks the metrics of the runs of TestSpanTree.
func TestMetrics(t *testing.T) {
	s := newSetup(t)
	g := orderGraph(t, runtime.WithObserver(s.obs))
	runPauseResume(t, s, g)
	want := []string{
		"ilmek.checkpoint.duration{ilmek.checkpoint.pause=false,ilmek.graph.name=order} count=3",
		"ilmek.checkpoint.duration{ilmek.checkpoint.pause=true,ilmek.graph.name=order} count=1",
		"ilmek.checkpoint.size{ilmek.checkpoint.pause=false,ilmek.graph.name=order} count=3",
		"ilmek.checkpoint.size{ilmek.checkpoint.pause=true,ilmek.graph.name=order} count=1",
		"ilmek.interrupts.answered{ilmek.graph.name=order,ilmek.node.id=ship} 1",
		"ilmek.interrupts.opened{ilmek.graph.name=order,ilmek.node.id=ship} 1",
		"ilmek.run.duration{ilmek.graph.name=order,ilmek.run.status=done} count=1",
		"ilmek.run.duration{ilmek.graph.name=order,ilmek.run.status=interrupted} count=1",
		"ilmek.runs{ilmek.graph.name=order,ilmek.run.status=done} 1",
		"ilmek.runs{ilmek.graph.name=order,ilmek.run.status=interrupted} 1",
		"ilmek.steps{ilmek.graph.name=order,ilmek.node.id=fetch,ilmek.step.replayed=false} 1",
		"ilmek.steps{ilmek.graph.name=order,ilmek.node.id=fetch,ilmek.step.replayed=true} 2",
		"ilmek.steps{ilmek.graph.name=order,ilmek.node.id=ship,ilmek.step.replayed=false} 1",
		"ilmek.steps{ilmek.graph.name=order,ilmek.node.id=ship,ilmek.step.replayed=true} 1",
		"ilmek.supersteps{ilmek.graph.name=order} 3",
		"ilmek.task.duration{ilmek.graph.name=order,ilmek.node.id=fetch,ilmek.node.type=http.get,ilmek.task.outcome=done} count=2",
		"ilmek.task.duration{ilmek.graph.name=order,ilmek.node.id=plan,ilmek.task.outcome=done} count=1",
		"ilmek.task.duration{ilmek.graph.name=order,ilmek.node.id=ship,ilmek.node.type=approval,ilmek.task.outcome=done} count=1",
		"ilmek.task.duration{ilmek.graph.name=order,ilmek.node.id=ship,ilmek.node.type=approval,ilmek.task.outcome=interrupted} count=1",
		"ilmek.task.retries{ilmek.graph.name=order,ilmek.node.id=fetch,ilmek.node.type=http.get} 1",
		"ilmek.tasks{ilmek.graph.name=order,ilmek.node.id=fetch,ilmek.node.type=http.get,ilmek.task.outcome=done} 2",
		"ilmek.tasks{ilmek.graph.name=order,ilmek.node.id=plan,ilmek.task.outcome=done} 1",
		"ilmek.tasks{ilmek.graph.name=order,ilmek.node.id=ship,ilmek.node.type=approval,ilmek.task.outcome=done} 1",
		"ilmek.tasks{ilmek.graph.name=order,ilmek.node.id=ship,ilmek.node.type=approval,ilmek.task.outcome=interrupted} 1",
	}
	if d := cmp.Diff(want, s.metrics(t)); d != "" {
		t.Errorf("metrics (-want +got):\n%s", d)
	}
}

// TestNodeSpansNest checks that a span a node starts from its Ctx is a
// child of its task's span.
func TestNodeSpansNest(t *testing.T) {
	s := newSetup(t)
	g := oneNodeGraph(t, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
		_, span := s.caller.Start(ctx, "call model")
		span.End()
		return nil, nil
	})
	if _, err := g.Invoke(context.Background(), runtime.Values{}, runtime.WithObserver(s.obs)); err != nil {
		t.Fatal(err)
	}
	want := `run one ilmek.graph.name=one ilmek.run.status=done ilmek.run.supersteps=1
  superstep ilmek.superstep=1 ilmek.superstep.tasks=1
    task a ilmek.node.id=a ilmek.task.key=a ilmek.superstep=1 ilmek.task.attempt=1 ilmek.task.outcome=done
      call model
`
	if d := cmp.Diff(want, s.tree()); d != "" {
		t.Errorf("span tree (-want +got):\n%s", d)
	}
}

// TestNotSampled checks that a run whose trace is not sampled records no
// span and still counts its metrics, and that an Observer on the global
// providers (no-ops until set) runs.
func TestNotSampled(t *testing.T) {
	spans, reader := tracetest.NewSpanRecorder(), sdkmetric.NewManualReader()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSpanProcessor(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	obs, err := ilmekotel.New(ilmekotel.WithTracerProvider(tp), ilmekotel.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	s := &setup{obs: obs, spans: spans, reader: reader, caller: tp.Tracer("caller")}
	runPauseResume(t, s, orderGraph(t, runtime.WithObserver(obs)))
	if n := len(spans.Ended()); n != 0 {
		t.Errorf("%d spans recorded, want none", n)
	}
	if got := s.metrics(t); !slices.Contains(got, "ilmek.supersteps{ilmek.graph.name=order} 3") {
		t.Errorf("metrics of unsampled runs: %q", got)
	}

	global, err := ilmekotel.New()
	if err != nil {
		t.Fatal(err)
	}
	runPauseResume(t, s, orderGraph(t, runtime.WithObserver(global)))
}

func oneNodeGraph(t *testing.T, fn runtime.NodeFunc) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.NewBuilder("one").Channel("x", "").Node("a", fn).Edge(spec.Start, "a").Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}
