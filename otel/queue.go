package otel

import (
	"context"
	"fmt"

	gotel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// The metrics and spans of a QueueObserver.
const (
	MetricQueueClaims       = "ilmek.queue.claims"                   // counter {claim}: graph
	MetricQueueDead         = "ilmek.queue.dead"                     // counter {request}: graph
	MetricQueueRateWaits    = "ilmek.queue.rate_limit.waits"         // counter {wait}
	MetricQueueRateWaitTime = "ilmek.queue.rate_limit.wait_duration" // histogram s
	MetricQueuePruned       = "ilmek.queue.pruned"                   // counter {request}
	// MetricQueueTimersDropped counts wake requests dropped because their
	// thread had nothing due any more (deleted, cancelled, answered or
	// woken already): workers.EventTimerDropped.
	MetricQueueTimersDropped = "ilmek.queue.timers.dropped" // counter {request}: graph

	SpanQueueClaim    = "ilmek.queue.claim"           // a claim: request, thread, graph, partition, claim number
	SpanQueueDead     = "ilmek.queue.dead"            // a request ended dead (status error)
	SpanQueueRateWait = "ilmek.queue.rate_limit.wait" // a worker waiting for a token, as long as it waits
)

// Attributes of the queue's spans (with KeyRequestID, KeyThreadID and
// KeyGraph).
const (
	// KeyPartition is the request's partition key (workers.Request.Partition).
	KeyPartition = attribute.Key("ilmek.queue.partition")
	// KeyClaim is the claim's number: 1 at a request's first claim.
	KeyClaim = attribute.Key("ilmek.queue.claim")
	// KeyWorker is the worker's name (workers.Name).
	KeyWorker = attribute.Key("ilmek.queue.worker")
)

// QueueObserver turns the events of the PostgreSQL queue's workers
// (runtime/postgres/workers.OnEvent: claims, dead requests, rate-limit
// waits, prunes, dropped wakes) into OpenTelemetry spans and metrics:
//
//	qo, err := otel.NewQueueObserver()
//	w := workers.NewWorker(q, graphs, workers.OnEvent(qo.Event))
//
// It is safe for concurrent use.
type QueueObserver struct {
	tracer                          trace.Tracer // nil: no spans
	claims, dead, rateWaits, pruned metric.Int64Counter
	timersDropped                   metric.Int64Counter
	rateWaitTime                    metric.Float64Histogram
}

// NewQueueObserver returns a QueueObserver writing to the providers of
// its options (default: the global ones). It fails only when the meter
// provider refuses an instrument.
func NewQueueObserver(opts ...Option) (*QueueObserver, error) {
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
	o := &QueueObserver{}
	if _, off := c.tp.(noop.TracerProvider); !off {
		o.tracer = c.tp.Tracer(ScopeName)
	}
	m := c.mp.Meter(ScopeName)
	var errs [6]error
	o.claims, errs[0] = m.Int64Counter(MetricQueueClaims, metric.WithUnit("{claim}"), metric.WithDescription("Run requests claimed by workers, by graph."))
	o.dead, errs[1] = m.Int64Counter(MetricQueueDead, metric.WithUnit("{request}"), metric.WithDescription("Run requests ended dead after their claims kept expiring, by graph."))
	o.rateWaits, errs[2] = m.Int64Counter(MetricQueueRateWaits, metric.WithUnit("{wait}"), metric.WithDescription("Times a worker waited for a rate limit's token."))
	o.rateWaitTime, errs[3] = m.Float64Histogram(MetricQueueRateWaitTime, metric.WithUnit("s"), metric.WithDescription("How long workers waited for a rate limit's token."))
	o.pruned, errs[4] = m.Int64Counter(MetricQueuePruned, metric.WithUnit("{request}"), metric.WithDescription("Ended run requests deleted by the workers' pruner."))
	o.timersDropped, errs[5] = m.Int64Counter(MetricQueueTimersDropped, metric.WithUnit("{request}"),
		metric.WithDescription("Wake requests dropped because their thread had nothing due any more, by graph."))
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("otel.NewQueueObserver: creating the metric instruments: %w", err)
		}
	}
	return o, nil
}

// Event records e: pass o.Event to workers.OnEvent.
func (o *QueueObserver) Event(ctx context.Context, e workers.Event) {
	var name string
	var attrs []attribute.KeyValue
	switch e.Kind {
	case workers.EventClaim:
		o.claims.Add(ctx, 1, metric.WithAttributes(KeyGraph.String(e.Graph)))
		name = SpanQueueClaim
	case workers.EventDead:
		o.dead.Add(ctx, 1, metric.WithAttributes(KeyGraph.String(e.Graph)))
		name = SpanQueueDead
	case workers.EventRateWait:
		o.rateWaits.Add(ctx, 1)
		o.rateWaitTime.Record(ctx, e.Wait.Seconds())
		name = SpanQueueRateWait
	case workers.EventPrune:
		o.pruned.Add(ctx, e.Pruned)
		return
	case workers.EventTimerDropped:
		o.timersDropped.Add(ctx, 1, metric.WithAttributes(KeyGraph.String(e.Graph)))
		return
	default:
		return
	}
	if o.tracer == nil {
		return
	}
	attrs = append(attrs, KeyWorker.String(e.Worker))
	if e.Request != 0 {
		attrs = append(attrs, KeyRequestID.Int64(e.Request), KeyThreadID.String(e.Thread), KeyGraph.String(e.Graph),
			KeyPartition.String(e.Partition), KeyClaim.Int64(e.Claim))
	}
	_, span := o.tracer.Start(ctx, name, trace.WithTimestamp(e.At), trace.WithAttributes(attrs...), trace.WithSpanKind(trace.SpanKindInternal))
	if e.Kind == workers.EventDead {
		span.SetStatus(codes.Error, e.Error)
	}
	span.End(trace.WithTimestamp(e.At.Add(e.Wait)))
}
