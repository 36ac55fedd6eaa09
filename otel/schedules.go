package otel

import (
	"context"
	"fmt"
	"time"

	gotel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// The span, metrics and attributes of schedule firings (ScheduleFirings).
const (
	// SpanScheduleFiring spans a stored schedule's tick from the tick's
	// time to when its firing was recorded (its lateness).
	SpanScheduleFiring = "ilmek.schedule.firing"
	// MetricScheduleFirings counts the ticks fired or skipped, by
	// schedule and KeyScheduleOutcome.
	MetricScheduleFirings = "ilmek.schedule.firings" // counter {firing}
	// MetricScheduleLateness is how long after its tick a firing was
	// recorded, by schedule.
	MetricScheduleLateness = "ilmek.schedule.lateness" // histogram s

	// KeySchedule is the schedule's name.
	KeySchedule = attribute.Key("ilmek.schedule")
	// KeyScheduleTick is the tick, RFC 3339 in UTC.
	KeyScheduleTick = attribute.Key("ilmek.schedule.tick")
	// KeyScheduleOutcome is "fired" or "skipped".
	KeyScheduleOutcome = attribute.Key("ilmek.schedule.outcome")
	// KeyScheduleSkipped says why a tick was skipped (overlap).
	KeyScheduleSkipped = attribute.Key("ilmek.schedule.skipped")
)

// ScheduleFirings records the firings of stored schedules as spans and
// metrics. Its Record method is the hook of
// runtime/postgres/workers.OnFiring and runtime/waker.WithOnFiring:
//
//	sf, err := otel.NewScheduleFirings()
//	w := workers.NewWorker(q, graphs, workers.OnFiring(sf.Record))
type ScheduleFirings struct {
	tracer   trace.Tracer // nil: no spans
	firings  metric.Int64Counter
	lateness metric.Float64Histogram
}

// NewScheduleFirings returns a ScheduleFirings writing to the tracer and
// meter providers of its options (the global ones by default). It fails
// only when the meter provider refuses to create an instrument.
func NewScheduleFirings(opts ...Option) (*ScheduleFirings, error) {
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
	f := &ScheduleFirings{}
	if _, off := c.tp.(noop.TracerProvider); !off {
		f.tracer = c.tp.Tracer(ScopeName)
	}
	m := c.mp.Meter(ScopeName)
	var err1, err2 error
	f.firings, err1 = m.Int64Counter(MetricScheduleFirings, metric.WithUnit("{firing}"), metric.WithDescription("Schedule ticks fired or skipped, by schedule and outcome."))
	f.lateness, err2 = m.Float64Histogram(MetricScheduleLateness, metric.WithUnit("s"), metric.WithDescription("How long after its tick a schedule's firing was recorded, by schedule."),
		metric.WithExplicitBucketBoundaries(durationBounds...))
	for _, err := range []error{err1, err2} {
		if err != nil {
			return nil, fmt.Errorf("otel.NewScheduleFirings: creating the metric instruments: %w", err)
		}
	}
	return f, nil
}

// Record records one firing: a count, its lateness, and a span from the
// tick to the firing's record with the firing's thread and request.
func (f *ScheduleFirings) Record(ctx context.Context, fi checkpoint.Firing) {
	outcome := "fired"
	if fi.Skipped != "" {
		outcome = "skipped"
	}
	at := fi.At
	if at.IsZero() {
		at = time.Now()
	}
	f.firings.Add(ctx, 1, metric.WithAttributes(KeySchedule.String(fi.Schedule), KeyScheduleOutcome.String(outcome)))
	f.lateness.Record(ctx, max(at.Sub(fi.Tick), 0).Seconds(), metric.WithAttributes(KeySchedule.String(fi.Schedule)))
	if f.tracer == nil {
		return
	}
	attrs := []attribute.KeyValue{KeySchedule.String(fi.Schedule), KeyScheduleTick.String(fi.Tick.UTC().Format(time.RFC3339)),
		KeyScheduleOutcome.String(outcome), KeyThreadID.String(fi.Thread)}
	if fi.Skipped != "" {
		attrs = append(attrs, KeyScheduleSkipped.String(fi.Skipped))
	}
	if fi.Request != 0 {
		attrs = append(attrs, KeyRequestID.Int64(fi.Request))
	}
	_, span := f.tracer.Start(ctx, SpanScheduleFiring, trace.WithTimestamp(fi.Tick), trace.WithAttributes(attrs...), trace.WithSpanKind(trace.SpanKindInternal))
	span.End(trace.WithTimestamp(at))
}
