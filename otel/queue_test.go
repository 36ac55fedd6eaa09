package otel_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	ilmekotel "github.com/ilmek-go/ilmek/otel"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// TestQueueObserver feeds a QueueObserver the events a worker reports and
// checks the spans (name, request, status, how long a rate-limit wait
// lasts) and the metrics they turn into.
func TestQueueObserver(t *testing.T) {
	spans, reader := tracetest.NewSpanRecorder(), sdkmetric.NewManualReader()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	qo, err := ilmekotel.NewQueueObserver(ilmekotel.WithTracerProvider(tp), ilmekotel.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, e := range []workers.Event{
		{Kind: workers.EventClaim, Worker: "w1", At: at, Request: 7, Thread: "t", Graph: "g", Partition: "acme", Claim: 1},
		{Kind: workers.EventClaim, Worker: "w1", At: at, Request: 8, Thread: "u", Graph: "g", Claim: 1},
		{Kind: workers.EventDead, Worker: "w2", At: at, Request: 9, Thread: "v", Graph: "h", Claim: 21, Error: "claimed 21 times"},
		{Kind: workers.EventRateWait, Worker: "w1", At: at, Wait: 50 * time.Millisecond},
		{Kind: workers.EventPrune, Worker: "w1", At: at, Pruned: 12},
		{Kind: workers.EventTimerDropped, Worker: "w1", At: at, Request: 10, Thread: "x", Graph: "g", Claim: 1, Error: "nothing was due"},
	} {
		qo.Event(ctx, e)
	}
	ended := spans.Ended()
	type span struct {
		name    string
		request int64
		err     bool
		length  time.Duration
	}
	var got []span
	for _, s := range ended {
		sp := span{name: s.Name(), err: s.Status().Code == codes.Error, length: s.EndTime().Sub(s.StartTime())}
		for _, a := range s.Attributes() {
			if a.Key == ilmekotel.KeyRequestID {
				sp.request = a.Value.AsInt64()
			}
		}
		got = append(got, sp)
	}
	want := []span{
		{name: ilmekotel.SpanQueueClaim, request: 7},
		{name: ilmekotel.SpanQueueClaim, request: 8},
		{name: ilmekotel.SpanQueueDead, request: 9, err: true},
		{name: ilmekotel.SpanQueueRateWait, length: 50 * time.Millisecond},
	}
	if len(got) != len(want) {
		t.Fatalf("spans %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("span %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					sums[m.Name] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					sums[m.Name] += int64(p.Count)
				}
			}
		}
	}
	for name, n := range map[string]int64{
		ilmekotel.MetricQueueClaims: 2, ilmekotel.MetricQueueDead: 1, ilmekotel.MetricQueueRateWaits: 1,
		ilmekotel.MetricQueueRateWaitTime: 1, ilmekotel.MetricQueuePruned: 12, ilmekotel.MetricQueueTimersDropped: 1,
	} {
		if sums[name] != n {
			t.Errorf("metric %s = %d, want %d", name, sums[name], n)
		}
	}
}
