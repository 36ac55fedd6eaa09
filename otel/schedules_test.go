package otel_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	ilmekotel "github.com/ilmek-go/ilmek/otel"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestScheduleFirings: a fired and a skipped tick make one span each,
// from the tick to the record, with the schedule, thread and request, and
// count under their outcome.
func TestScheduleFirings(t *testing.T) {
	spans, reader := tracetest.NewSpanRecorder(), sdkmetric.NewManualReader()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	sf, err := ilmekotel.NewScheduleFirings(ilmekotel.WithTracerProvider(tp), ilmekotel.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	tick := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
	sf.Record(context.Background(), checkpoint.Firing{Schedule: "nightly", Tick: tick, Thread: "nightly@x", Request: 42, At: tick.Add(250 * time.Millisecond)})
	sf.Record(context.Background(), checkpoint.Firing{Schedule: "nightly", Tick: tick.Add(time.Hour), Thread: "nightly@y", Skipped: "overlap", At: tick.Add(time.Hour)})
	ended := spans.Ended()
	if len(ended) != 2 {
		t.Fatalf("%d spans, want 2", len(ended))
	}
	s := ended[0]
	attrs := attribute.NewSet(s.Attributes()...)
	if v, _ := attrs.Value(ilmekotel.KeyRequestID); s.Name() != ilmekotel.SpanScheduleFiring || !s.StartTime().Equal(tick) || s.EndTime().Sub(s.StartTime()) != 250*time.Millisecond || v.AsInt64() != 42 {
		t.Errorf("span %s from %v to %v, request %v; want the firing span over its 250 ms lateness with request 42", s.Name(), s.StartTime(), s.EndTime(), v)
	}
	skippedAttrs := attribute.NewSet(ended[1].Attributes()...)
	if v, _ := skippedAttrs.Value(ilmekotel.KeyScheduleSkipped); v.AsString() != "overlap" {
		t.Errorf("the skipped tick's span has skipped %q, want overlap", v.AsString())
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != ilmekotel.MetricScheduleFirings {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				o, _ := dp.Attributes.Value(ilmekotel.KeyScheduleOutcome)
				counts[o.AsString()] += dp.Value
			}
		}
	}
	if counts["fired"] != 1 || counts["skipped"] != 1 {
		t.Errorf("firings counted %v, want one fired and one skipped", counts)
	}
}
