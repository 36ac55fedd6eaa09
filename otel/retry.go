package otel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Retry counts a database statement retried after an error safe to retry
// (MetricDBRetries) and adds an EventDBRetry event to the span of the
// statement's context: the task's or the run's for a store's write within
// a run, else the caller's. It is a checkpoint.RetryFunc: pass
// o.Retry to runtime/postgres.OnRetry or runtime/postgres/workers.OnRetry.
func (o *Observer) Retry(ctx context.Context, r checkpoint.Retry) {
	errType := errorType(r.Err)
	attrs := make([]attribute.KeyValue, 0, 3)
	if rc := runOf(ctx); rc != nil {
		attrs = append(attrs, KeyGraph.String(rc.graph.name))
	}
	attrs = append(attrs, KeyRetryOp.String(r.Op), KeyErrorType.String(errType))
	o.inst.dbRetries.Add(ctx, 1, metric.WithAttributes(attrs...))
	span := taskSpan(ctx)
	if span == nil {
		span = runSpan(ctx)
	}
	if span == nil {
		span = recording(trace.SpanFromContext(ctx))
	}
	if span == nil {
		return
	}
	ev := []attribute.KeyValue{KeyRetryOp.String(r.Op), KeyErrorType.String(errType),
		KeyRetryAttempt.Int(r.Attempt), KeyRetryWait.Float64(r.Wait.Seconds())}
	if r.Thread != "" {
		ev = append(ev, KeyThreadID.String(r.Thread))
	}
	if r.Request != 0 {
		ev = append(ev, KeyRequestID.Int64(r.Request))
	}
	if r.Err != nil {
		ev = append(ev, attribute.String("exception.message", r.Err.Error()))
	}
	span.AddEvent(EventDBRetry, trace.WithAttributes(ev...))
}
