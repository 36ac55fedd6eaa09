package otel

import (
	"context"
	"errors"
	"fmt"
	"time"

	gotel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/ilmek-go/ilmek/runtime"
)

// ScopeName is the instrumentation scope of the Observer's tracer and
// meter.
const ScopeName = "github.com/ilmek-go/ilmek/otel"

// The keys under which AnnotatePause keeps the pausing run's W3C trace
// context in the Meta of a pause's interrupts.
const (
	MetaTraceparent = "ilmek.otel.traceparent"
	MetaTracestate  = "ilmek.otel.tracestate"
)

// Observer is a runtime.Observer that turns the lifecycle of runs into
// OpenTelemetry spans and metrics, and a runtime.PauseAnnotator that keeps
// the pausing run's span context with a pause so the run that resumes it
// links to it. Make one with New and add it to a graph
// (runtime.GraphObserver) or a run (runtime.WithObserver). It is safe for
// concurrent use by any number of runs.
type Observer struct {
	tracer trace.Tracer
	inst   instruments
	attrs  attrCache
}

var (
	_ runtime.Observer       = (*Observer)(nil)
	_ runtime.PauseAnnotator = (*Observer)(nil)
)

// Option configures an Observer.
type Option func(*config)

type config struct {
	tp trace.TracerProvider
	mp metric.MeterProvider
}

// WithTracerProvider sets where the spans go (default: the global
// provider, otel.GetTracerProvider, as it is when New is called).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider sets where the metrics go (default: the global
// provider, otel.GetMeterProvider, as it is when New is called).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// New returns an Observer that writes spans to the tracer provider and
// metrics to the meter provider of its options. It fails only when the
// meter provider refuses to create an instrument.
func New(opts ...Option) (*Observer, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.tp == nil {
		c.tp = gotel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = gotel.GetMeterProvider()
	}
	o := &Observer{tracer: c.tp.Tracer(ScopeName)}
	if err := o.inst.init(c.mp.Meter(ScopeName)); err != nil {
		return nil, fmt.Errorf("otel.New: creating the metric instruments: %w", err)
	}
	return o, nil
}

// The Observer keeps its own state for each level in the context its Start
// calls return, under keys of its own, so that another observer's spans in
// the same context do not confuse it.
type (
	runKey  struct{}
	stepKey struct{}
	taskKey struct{}
)

// runState is what the Observer keeps for a run.
type runState struct {
	span  trace.Span
	graph string
	gset  *attrEntry // metric attributes: the graph
}

// taskState is what the Observer keeps for a task.
type taskState struct {
	span trace.Span
	node attrKey // metric attributes: graph, node, node type
}

func runOf(ctx context.Context) *runState {
	rs, _ := ctx.Value(runKey{}).(*runState)
	return rs
}

func spanOf(ctx context.Context, key any) trace.Span {
	s, _ := ctx.Value(key).(trace.Span)
	if s == nil {
		return noSpan
	}
	return s
}

// noSpan stands in for a span the Observer did not start (a call whose
// context lacks it): calls on it do nothing.
var noSpan = trace.SpanFromContext(context.Background())

// RunStart starts the run's span, a child of the span in ctx (the
// caller's), named "run <graph>".
func (o *Observer) RunStart(ctx context.Context, r runtime.RunRecord) context.Context {
	rs := &runState{graph: r.Graph, gset: o.attrs.get(attrKey{graph: r.Graph})}
	attrs := make([]attribute.KeyValue, 0, 4)
	attrs = append(attrs, KeyGraph.String(r.Graph), KeyRunID.String(r.RunID))
	if r.ThreadID != "" {
		attrs = append(attrs, KeyThreadID.String(r.ThreadID))
	}
	if r.Resume {
		attrs = append(attrs, KeyResume.Bool(true))
	}
	ctx, rs.span = o.tracer.Start(ctx, SpanRun+" "+r.Graph, trace.WithTimestamp(r.Start), trace.WithAttributes(attrs...))
	return context.WithValue(ctx, runKey{}, rs)
}

// RunEnd ends the run's span with its status, and counts the run.
func (o *Observer) RunEnd(ctx context.Context, r runtime.RunRecord, e runtime.RunEnd) {
	status := string(e.Status)
	if status == "" {
		status = "refused"
	}
	statusSet := o.attrs.get(attrKey{graph: r.Graph, outcome: status})
	o.inst.runs.Add(ctx, 1, statusSet.opt)
	o.inst.runDuration.Record(ctx, e.Duration.Seconds(), statusSet.opt)
	rs := runOf(ctx)
	if rs == nil {
		return
	}
	rs.span.SetAttributes(KeyRunStatus.String(status), KeySupersteps.Int(e.Supersteps))
	switch {
	case e.Err != nil && e.Status != runtime.StatusInterrupted:
		// A task's error is recorded on its span; the run only fails by it.
		var ne *runtime.NodeError
		failed(rs.span, e.Err, !errors.As(e.Err, &ne))
	case e.Status == runtime.StatusDone || e.Status == runtime.StatusInterrupted:
		rs.span.SetStatus(codes.Ok, "")
	}
	rs.span.End(trace.WithTimestamp(r.Start.Add(e.Duration)))
}

// SuperstepStart starts the superstep's span, a child of the run's.
func (o *Observer) SuperstepStart(ctx context.Context, _ runtime.RunRecord, s runtime.SuperstepRecord) context.Context {
	ctx, span := o.tracer.Start(ctx, SpanSuperstep, trace.WithTimestamp(s.Start),
		trace.WithAttributes(KeySuperstep.Int(s.Step), KeySuperstepTasks.Int(s.Tasks)))
	return context.WithValue(ctx, stepKey{}, span)
}

// SuperstepEnd ends the superstep's span and counts the superstep.
func (o *Observer) SuperstepEnd(ctx context.Context, r runtime.RunRecord, s runtime.SuperstepRecord, e runtime.SuperstepEnd) {
	if rs := runOf(ctx); rs != nil {
		o.inst.supersteps.Add(ctx, 1, rs.gset.opt)
	}
	span := spanOf(ctx, stepKey{})
	if e.Err != nil && e.Status != runtime.StatusInterrupted {
		failed(span, e.Err, false)
	}
	span.End(trace.WithTimestamp(s.Start.Add(e.Duration)))
}

// TaskStart starts the task's span, a child of its superstep's, named
// "task <node id>". The context it returns is the node's (Ctx), so spans
// the node starts nest under it.
func (o *Observer) TaskStart(ctx context.Context, t runtime.TaskRecord) context.Context {
	ts := &taskState{node: attrKey{node: t.Node, nodeType: t.NodeType}}
	if rs := runOf(ctx); rs != nil {
		ts.node.graph = rs.graph
	}
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, KeyNode.String(t.Node))
	if t.NodeType != "" {
		attrs = append(attrs, KeyNodeType.String(t.NodeType))
	}
	attrs = append(attrs, KeyTaskKey.String(t.TaskKey), KeyTaskID.String(t.TaskID), KeySuperstep.Int(t.Step))
	ctx, ts.span = o.tracer.Start(ctx, SpanTask+" "+t.Node, trace.WithTimestamp(t.Start), trace.WithAttributes(attrs...))
	return context.WithValue(ctx, taskKey{}, ts)
}

func taskOf(ctx context.Context) *taskState {
	ts, _ := ctx.Value(taskKey{}).(*taskState)
	return ts
}

// TaskRetry adds a retry event to the task's span and counts the retry.
func (o *Observer) TaskRetry(ctx context.Context, _ runtime.TaskRecord, r runtime.TaskRetry) {
	ts := taskOf(ctx)
	if ts == nil {
		return
	}
	o.inst.retries.Add(ctx, 1, o.attrs.get(ts.node).opt)
	if ts.span.IsRecording() {
		ts.span.AddEvent(EventRetry, trace.WithAttributes(KeyAttempt.Int(r.Attempt), KeyBackoff.Float64(r.Backoff.Seconds()),
			KeyErrorType.String(errorType(r.Err)), attribute.String("exception.message", r.Err.Error())))
	}
}

// TaskEnd ends the task's span with its attempts and outcome, and counts
// the task and its duration.
func (o *Observer) TaskEnd(ctx context.Context, t runtime.TaskRecord, e runtime.TaskEnd) {
	ts := taskOf(ctx)
	if ts == nil {
		return
	}
	outcome := "done"
	switch {
	case e.Err != nil:
		outcome = "error"
	case e.Halted:
		outcome = "interrupted"
	}
	k := ts.node
	k.outcome = outcome
	set := o.attrs.get(k)
	o.inst.tasks.Add(ctx, 1, set.opt)
	o.inst.taskDuration.Record(ctx, e.Duration.Seconds(), set.opt)
	ts.span.SetAttributes(KeyAttempt.Int(e.Attempts), KeyTaskOutcome.String(outcome))
	if e.Err != nil {
		failed(ts.span, e.Err, true)
	}
	ts.span.End(trace.WithTimestamp(t.Start.Add(e.Duration)))
}

// Step adds a step event to the task's span (EventStepExecuted or
// EventStepReplayed) and counts the step.
func (o *Observer) Step(ctx context.Context, _ runtime.TaskRecord, s runtime.StepRecord) {
	ts := taskOf(ctx)
	if ts == nil {
		return
	}
	k := ts.node
	k.nodeType, k.step = "", 1
	if s.Replayed {
		k.step = 2
	}
	o.inst.steps.Add(ctx, 1, o.attrs.get(k).opt)
	if !ts.span.IsRecording() {
		return
	}
	name := EventStepExecuted
	attrs := make([]attribute.KeyValue, 0, 4)
	attrs = append(attrs, KeyStepKey.String(s.Key))
	if s.Replayed {
		name = EventStepReplayed
	} else {
		attrs = append(attrs, KeyStepDuration.Float64(s.Duration.Seconds()))
	}
	if s.Err != nil {
		attrs = append(attrs, KeyErrorType.String(errorType(s.Err)), attribute.String("exception.message", s.Err.Error()))
	}
	ts.span.AddEvent(name, trace.WithAttributes(attrs...))
}

// InterruptOpened adds an event to the pausing superstep's span and counts
// the interrupt.
func (o *Observer) InterruptOpened(ctx context.Context, r runtime.RunRecord, p runtime.PendingInterrupt) {
	o.inst.interruptsOpened.Add(ctx, 1, o.attrs.get(attrKey{graph: r.Graph, node: p.Node}).opt)
	span := spanOf(ctx, stepKey{})
	if span.IsRecording() {
		span.AddEvent(EventInterruptOpened, trace.WithAttributes(KeyInterruptID.String(p.ID), KeyNode.String(p.Node)))
	}
}

// InterruptAnswered adds an event to the resuming run's span and counts
// the answer.
func (o *Observer) InterruptAnswered(ctx context.Context, r runtime.RunRecord, p runtime.PendingInterrupt) {
	o.inst.interruptsAnswered.Add(ctx, 1, o.attrs.get(attrKey{graph: r.Graph, node: p.Node}).opt)
	if rs := runOf(ctx); rs != nil && rs.span.IsRecording() {
		rs.span.AddEvent(EventInterruptAnswered, trace.WithAttributes(KeyInterruptID.String(p.ID), KeyNode.String(p.Node)))
	}
}

// Resume adds a resume event to the run's span and, when the resume was
// accepted, a link to the span of the run that paused (kept by
// AnnotatePause).
func (o *Observer) Resume(ctx context.Context, _ runtime.RunRecord, r runtime.ResumeRecord) {
	rs := runOf(ctx)
	if rs == nil {
		return
	}
	attrs := []attribute.KeyValue{KeyResumeAccepted.Bool(r.Accepted)}
	if !r.Accepted {
		attrs = append(attrs, KeyResumeReason.String(r.Reason))
	}
	rs.span.AddEvent(EventResume, trace.WithAttributes(attrs...))
	if sc := pausedSpan(r.Paused); sc.IsValid() {
		rs.span.AddLink(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{KeyLinkKind.String("paused run")}})
	}
}

// pausedSpan is the span context AnnotatePause kept with the first of the
// interrupts that carries one.
func pausedSpan(paused []runtime.PendingInterrupt) trace.SpanContext {
	for _, p := range paused {
		if p.Meta[MetaTraceparent] == "" {
			continue
		}
		ctx := propagation.TraceContext{}.Extract(context.Background(), metaCarrier(p.Meta))
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			return sc
		}
	}
	return trace.SpanContext{}
}

// AnnotatePause keeps the pausing run's span context (W3C trace context,
// under MetaTraceparent and MetaTracestate) with the pause.
func (o *Observer) AnnotatePause(ctx context.Context, _ runtime.RunRecord) map[string]string {
	rs := runOf(ctx)
	if rs == nil || !rs.span.SpanContext().IsValid() {
		return nil
	}
	m := map[string]string{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpan(context.Background(), rs.span), metaCarrier(m))
	return m
}

// metaCarrier is a propagation.TextMapCarrier over a pause's Meta, with
// the trace context's keys prefixed.
type metaCarrier map[string]string

func (c metaCarrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c[MetaTraceparent]
	case "tracestate":
		return c[MetaTracestate]
	}
	return ""
}

func (c metaCarrier) Set(key, value string) {
	switch key {
	case "traceparent":
		c[MetaTraceparent] = value
	case "tracestate":
		if value != "" {
			c[MetaTracestate] = value
		}
	}
}

func (c metaCarrier) Keys() []string { return []string{"traceparent", "tracestate"} }

// CheckpointCommit records the checkpoint write as a span (a child of the
// superstep's, or of the run's for a run's first checkpoint) ending now,
// and its duration and size.
func (o *Observer) CheckpointCommit(ctx context.Context, r runtime.RunRecord, c runtime.CheckpointRecord) {
	set := o.attrs.get(attrKey{graph: r.Graph, checkpoint: true, pause: c.Pause, errType: errorType(c.Err)})
	o.inst.checkpointDuration.Record(ctx, c.Duration.Seconds(), set.opt)
	if c.Err == nil {
		o.inst.checkpointSize.Record(ctx, int64(c.Bytes), set.opt)
	}
	if !trace.SpanFromContext(ctx).IsRecording() {
		return
	}
	end := time.Now()
	_, span := o.tracer.Start(ctx, SpanCheckpoint, trace.WithTimestamp(end.Add(-c.Duration)), trace.WithAttributes(
		KeyCheckpointID.String(c.ID), KeySuperstep.Int(c.Step), KeyCheckpointPause.Bool(c.Pause), KeyCheckpointBytes.Int(c.Bytes)))
	if c.Err != nil {
		failed(span, c.Err, true)
	}
	span.End(trace.WithTimestamp(end))
}

// Lease adds the lease event to the run's span; a lost lease is also
// counted.
func (o *Observer) Lease(ctx context.Context, r runtime.RunRecord, l runtime.LeaseRecord) {
	rs := runOf(ctx)
	var name string
	switch l.Event {
	case runtime.LeaseTaken:
		name = EventLeaseTaken
	case runtime.LeaseRenewed:
		name = EventLeaseRenewed
	case runtime.LeaseLost:
		name = EventLeaseLost
		gset := o.attrs.get(attrKey{graph: r.Graph})
		o.inst.leaseLosses.Add(ctx, 1, gset.opt)
	default:
		name = "ilmek.lease." + string(l.Event)
	}
	if rs == nil || !rs.span.IsRecording() {
		return
	}
	if l.Err != nil {
		rs.span.AddEvent(name, trace.WithAttributes(KeyErrorType.String(errorType(l.Err)), attribute.String("exception.message", l.Err.Error())))
		return
	}
	rs.span.AddEvent(name)
}

// failed marks span as failed by err: error.type and an Error status, and
// with record an exception event (the span where err arose has it; the
// spans that failed by it only their status).
func failed(span trace.Span, err error, record bool) {
	if !span.IsRecording() {
		return
	}
	if record {
		span.RecordError(err)
	}
	span.SetAttributes(KeyErrorType.String(errorType(err)))
	span.SetStatus(codes.Error, err.Error())
}

// errorType is the error.type of err: the Go type of the error a node
// returned (inside its *runtime.NodeError), "panic" for a recovered panic,
// "canceled" and "timeout" for a context's end, else the Go type of err.
func errorType(err error) string {
	var ne *runtime.NodeError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ne) && ne.Stack != "":
		return "panic"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case ne != nil && ne.Err != nil:
		return fmt.Sprintf("%T", ne.Err)
	}
	return fmt.Sprintf("%T", err)
}
