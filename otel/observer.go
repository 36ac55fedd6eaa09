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
	"go.opentelemetry.io/otel/trace/noop"

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
// (runtime.WithObserver) or a run (runtime.WithObserver). It is safe for
// concurrent use by any number of runs.
type Observer struct {
	tracer trace.Tracer // nil: the tracer provider is a no-op; no spans
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
// provider, otel.GetTracerProvider, as it is when New is called). With a
// no-op provider (trace/noop) the Observer starts no spans at all and
// keeps only its metrics.
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
	o := &Observer{}
	if _, off := c.tp.(noop.TracerProvider); !off {
		o.tracer = c.tp.Tracer(ScopeName)
	}
	if err := o.inst.init(c.mp.Meter(ScopeName)); err != nil {
		return nil, fmt.Errorf("otel.New: creating the metric instruments: %w", err)
	}
	return o, nil
}

// The Observer keeps its own state for each level in the context its Start
// calls return, under keys of its own, so that another observer's spans in
// the same context do not confuse it. Each level's context is one
// allocation: the state embeds its parent context.
type (
	runKey  struct{}
	stepKey struct{}
	taskKey struct{}
)

// runCtx is a run's context and what the Observer keeps for the run.
type runCtx struct {
	context.Context
	span  trace.Span // nil without tracing
	graph *graphEntry
}

func (c *runCtx) Value(k any) any {
	if k == (runKey{}) {
		return c
	}
	return c.Context.Value(k)
}

// stepCtx is a superstep's context, with its span.
type stepCtx struct {
	context.Context
	span trace.Span
}

func (c *stepCtx) Value(k any) any {
	if k == (stepKey{}) {
		return c
	}
	return c.Context.Value(k)
}

// taskCtx is a task's context, with its span and metric attributes.
type taskCtx struct {
	context.Context
	span trace.Span
	node *nodeEntry
}

func (c *taskCtx) Value(k any) any {
	if k == (taskKey{}) {
		return c
	}
	return c.Context.Value(k)
}

func runOf(ctx context.Context) *runCtx {
	rc, _ := ctx.Value(runKey{}).(*runCtx)
	return rc
}

// recording returns the span if it records, else nil.
func recording(span trace.Span) trace.Span {
	if span != nil && span.IsRecording() {
		return span
	}
	return nil
}

// runSpan is the run's span if it records, else nil.
func runSpan(ctx context.Context) trace.Span {
	if rc := runOf(ctx); rc != nil {
		return recording(rc.span)
	}
	return nil
}

// graphOf is the graph entry of ctx's run, or of graph when ctx has none.
func (o *Observer) graphOf(ctx context.Context, graph string) *graphEntry {
	if rc := runOf(ctx); rc != nil {
		return rc.graph
	}
	return o.attrs.graph(graph)
}

// nodeOf is the node entry of ctx's task, or looked up for t.
func (o *Observer) nodeOf(ctx context.Context, t *runtime.TaskRecord) *nodeEntry {
	if tc, _ := ctx.Value(taskKey{}).(*taskCtx); tc != nil {
		return tc.node
	}
	return o.attrs.node(o.graphOf(ctx, "").name, t.Node, t.NodeType)
}

// taskSpan is the task's span if it records, else nil.
func taskSpan(ctx context.Context) trace.Span {
	if tc, _ := ctx.Value(taskKey{}).(*taskCtx); tc != nil {
		return recording(tc.span)
	}
	return nil
}

// RunStart starts the run's span, a child of the span in ctx (the
// caller's), named "run <graph>". Samplers see the span's name; its
// attributes are set once it is known to record.
func (o *Observer) RunStart(ctx context.Context, r runtime.RunRecord) context.Context {
	rc := &runCtx{graph: o.attrs.graph(r.Graph)}
	if o.tracer != nil {
		ctx, rc.span = o.tracer.Start(ctx, rc.graph.spanName)
		if rc.span.IsRecording() {
			rc.span.SetAttributes(KeyGraph.String(r.Graph), KeyRunID.String(r.RunID))
			if r.ThreadID != "" {
				rc.span.SetAttributes(KeyThreadID.String(r.ThreadID))
			}
			if r.Resume {
				rc.span.SetAttributes(KeyResume.Bool(true))
			}
		}
	}
	rc.Context = ctx
	return rc
}

// RunEnd ends the run's span with its status, and counts the run.
func (o *Observer) RunEnd(ctx context.Context, r runtime.RunRecord, e runtime.RunEnd) {
	status := string(e.Status)
	if status == "" {
		status = "refused"
	}
	set := o.attrs.get(attrKey{graph: r.Graph, outcome: status})
	o.inst.runs.Add(ctx, 1, set.add...)
	o.inst.runDuration.Record(ctx, e.Duration.Seconds(), set.rec...)
	span := runSpan(ctx)
	if span == nil {
		return
	}
	span.SetAttributes(KeyRunStatus.String(status), KeySupersteps.Int(e.Supersteps))
	switch {
	case e.Err != nil && e.Status != runtime.StatusInterrupted:
		// A task's error is recorded on its span; the run only fails by it.
		var ne *runtime.NodeError
		failed(span, e.Err, !errors.As(e.Err, &ne))
	case e.Status == runtime.StatusDone || e.Status == runtime.StatusInterrupted:
		span.SetStatus(codes.Ok, "")
	}
	span.End()
}

// SuperstepStart starts the superstep's span, a child of the run's.
func (o *Observer) SuperstepStart(ctx context.Context, _ runtime.RunRecord, s runtime.SuperstepRecord) context.Context {
	if o.tracer == nil {
		return ctx
	}
	sc := &stepCtx{}
	sc.Context, sc.span = o.tracer.Start(ctx, SpanSuperstep)
	if sc.span.IsRecording() {
		sc.span.SetAttributes(KeySuperstep.Int(s.Step), KeySuperstepTasks.Int(s.Tasks))
	}
	return sc
}

// SuperstepEnd ends the superstep's span and counts the superstep.
func (o *Observer) SuperstepEnd(ctx context.Context, r runtime.RunRecord, _ runtime.SuperstepRecord, e runtime.SuperstepEnd) {
	o.inst.supersteps.Add(ctx, 1, o.graphOf(ctx, r.Graph).add...)
	sc, _ := ctx.Value(stepKey{}).(*stepCtx)
	if sc == nil || !sc.span.IsRecording() {
		return
	}
	if e.Err != nil && e.Status != runtime.StatusInterrupted {
		failed(sc.span, e.Err, false)
	}
	sc.span.End()
}

// TaskStart starts the task's span, a child of its superstep's, named
// "task <node id>". The context it returns is the node's (Ctx), so spans
// the node starts nest under it.
//
// TaskStart, TaskRetry, TaskEnd and Step run on the task's goroutine: the
// work they do only when a span records is in functions of their own, so
// that their frames stay small and a goroutine that only counts metrics
// does not grow its stack.
func (o *Observer) TaskStart(ctx context.Context, t runtime.TaskRecord) context.Context {
	if o.tracer == nil {
		return ctx
	}
	return o.startTask(ctx, &t)
}

//go:noinline
func (o *Observer) startTask(ctx context.Context, t *runtime.TaskRecord) context.Context {
	tc := &taskCtx{node: o.attrs.node(o.graphOf(ctx, "").name, t.Node, t.NodeType)}
	tc.Context, tc.span = o.tracer.Start(ctx, tc.node.spanName)
	if tc.span.IsRecording() {
		if t.NodeType != "" {
			tc.span.SetAttributes(KeyNode.String(t.Node), KeyNodeType.String(t.NodeType), KeyTaskKey.String(t.TaskKey), KeyTaskID.String(t.TaskID), KeySuperstep.Int(t.Step))
		} else {
			tc.span.SetAttributes(KeyNode.String(t.Node), KeyTaskKey.String(t.TaskKey), KeyTaskID.String(t.TaskID), KeySuperstep.Int(t.Step))
		}
	}
	return tc
}

// TaskRetry adds a retry event to the task's span and counts the retry.
func (o *Observer) TaskRetry(ctx context.Context, t runtime.TaskRecord, r runtime.TaskRetry) {
	o.inst.retries.Add(ctx, 1, o.nodeOf(ctx, &t).add...)
	if span := taskSpan(ctx); span != nil {
		retryEvent(span, &r)
	}
}

//go:noinline
func retryEvent(span trace.Span, r *runtime.TaskRetry) {
	span.AddEvent(EventRetry, trace.WithAttributes(KeyAttempt.Int(r.Attempt), KeyBackoff.Float64(r.Backoff.Seconds()),
		KeyErrorType.String(errorType(r.Err)), attribute.String("exception.message", r.Err.Error())))
}

// TaskEnd ends the task's span with its attempts and outcome, and counts
// the task and its duration.
func (o *Observer) TaskEnd(ctx context.Context, t runtime.TaskRecord, e runtime.TaskEnd) {
	outcome := outcomeDone
	switch {
	case e.Err != nil:
		outcome = outcomeError
	case e.Halted:
		outcome = outcomeInterrupted
	}
	set := &o.nodeOf(ctx, &t).outcomes[outcome]
	o.inst.tasks.Add(ctx, 1, set.add...)
	o.inst.taskDuration.Record(ctx, e.Duration.Seconds(), set.rec...)
	if span := taskSpan(ctx); span != nil {
		endTask(span, &e, outcome)
	}
}

//go:noinline
func endTask(span trace.Span, e *runtime.TaskEnd, outcome int) {
	span.SetAttributes(KeyAttempt.Int(e.Attempts), KeyTaskOutcome.String(outcomeNames[outcome]))
	if e.Err != nil {
		failed(span, e.Err, true)
	}
	span.End()
}

// Step adds a step event to the task's span (EventStepExecuted or
// EventStepReplayed) and counts the step.
func (o *Observer) Step(ctx context.Context, t runtime.TaskRecord, s runtime.StepRecord) {
	n := o.nodeOf(ctx, &t)
	if s.Replayed {
		o.inst.steps.Add(ctx, 1, n.replayed.add...)
	} else {
		o.inst.steps.Add(ctx, 1, n.executed.add...)
	}
	if span := taskSpan(ctx); span != nil {
		stepEvent(span, &s)
	}
}

//go:noinline
func stepEvent(span trace.Span, s *runtime.StepRecord) {
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
	span.AddEvent(name, trace.WithAttributes(attrs...))
}

// InterruptOpened adds an event to the pausing superstep's span and counts
// the interrupt; a parked timer (p.Timer) is EventTimerSet and counts in
// MetricTimersSet instead.
func (o *Observer) InterruptOpened(ctx context.Context, r runtime.RunRecord, p runtime.PendingInterrupt) {
	name, counter := EventInterruptOpened, o.inst.interruptsOpened
	if p.Timer {
		name, counter = EventTimerSet, o.inst.timersSet
	}
	counter.Add(ctx, 1, o.attrs.get(attrKey{graph: r.Graph, node: p.Node}).add...)
	if sc, _ := ctx.Value(stepKey{}).(*stepCtx); sc != nil && sc.span.IsRecording() {
		attrs := []attribute.KeyValue{KeyInterruptID.String(p.ID), KeyNode.String(p.Node)}
		if p.Timer {
			attrs = append(attrs, KeyTimerWakeAt.String(p.WakeAt.UTC().Format(time.RFC3339Nano)))
		}
		sc.span.AddEvent(name, trace.WithAttributes(attrs...))
	}
}

// InterruptAnswered adds an event to the resuming run's span and counts
// the answer; a timer firing (p.Timer: a wake run took it) is
// EventTimerFired, counts in MetricTimersFired and records its lateness
// past its wake time in MetricTimerLateness.
func (o *Observer) InterruptAnswered(ctx context.Context, r runtime.RunRecord, p runtime.PendingInterrupt) {
	set := o.attrs.get(attrKey{graph: r.Graph, node: p.Node})
	if !p.Timer {
		o.inst.interruptsAnswered.Add(ctx, 1, set.add...)
		if span := runSpan(ctx); span != nil {
			span.AddEvent(EventInterruptAnswered, trace.WithAttributes(KeyInterruptID.String(p.ID), KeyNode.String(p.Node)))
		}
		return
	}
	late := max(time.Since(p.WakeAt), 0).Seconds()
	o.inst.timersFired.Add(ctx, 1, set.add...)
	o.inst.timerLateness.Record(ctx, late, set.rec...)
	if span := runSpan(ctx); span != nil {
		span.AddEvent(EventTimerFired, trace.WithAttributes(KeyInterruptID.String(p.ID), KeyNode.String(p.Node),
			KeyTimerWakeAt.String(p.WakeAt.UTC().Format(time.RFC3339Nano)), KeyTimerLateness.Float64(late)))
	}
}

// Resume adds a resume event to the run's span and, when the resume was
// accepted, a link to the span of the run that paused (kept by
// AnnotatePause).
func (o *Observer) Resume(ctx context.Context, _ runtime.RunRecord, r runtime.ResumeRecord) {
	span := runSpan(ctx)
	if span == nil {
		return
	}
	attrs := []attribute.KeyValue{KeyResumeAccepted.Bool(r.Accepted)}
	if !r.Accepted {
		attrs = append(attrs, KeyResumeReason.String(r.Reason))
	}
	span.AddEvent(EventResume, trace.WithAttributes(attrs...))
	if sc := pausedSpan(r.Paused); sc.IsValid() {
		span.AddLink(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{KeyLinkKind.String("paused run")}})
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
	rc := runOf(ctx)
	if rc == nil || rc.span == nil || !rc.span.SpanContext().IsValid() {
		return nil
	}
	m := map[string]string{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpan(context.Background(), rc.span), metaCarrier(m))
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
	o.inst.checkpointDuration.Record(ctx, c.Duration.Seconds(), set.rec...)
	if c.Err == nil {
		o.inst.checkpointSize.Record(ctx, int64(c.Bytes), set.rec...)
	}
	if o.tracer == nil || !trace.SpanFromContext(ctx).IsRecording() {
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
	var name string
	switch l.Event {
	case runtime.LeaseTaken:
		name = EventLeaseTaken
	case runtime.LeaseRenewed:
		name = EventLeaseRenewed
	case runtime.LeaseLost:
		name = EventLeaseLost
		o.inst.leaseLosses.Add(ctx, 1, o.graphOf(ctx, r.Graph).add...)
	default:
		name = "ilmek.lease." + string(l.Event)
	}
	span := runSpan(ctx)
	if span == nil {
		return
	}
	if l.Err != nil {
		span.AddEvent(name, trace.WithAttributes(KeyErrorType.String(errorType(l.Err)), attribute.String("exception.message", l.Err.Error())))
		return
	}
	span.AddEvent(name)
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
