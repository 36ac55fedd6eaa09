package bench

import (
	"context"
	"io"
	"log/slog"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/ilmek-go/ilmek/bench/graphs"
	"github.com/ilmek-go/ilmek/bench/workload"
	ilmekotel "github.com/ilmek-go/ilmek/otel"
	"github.com/ilmek-go/ilmek/runtime"
)

// observedVariant is one way of observing the runs of BenchmarkObserved.
type observedVariant struct {
	name  string
	ckpts []string
	// setup returns the run options that observe a run, and a function
	// run after each run (the exporter's reset).
	setup func(tb testing.TB) ([]runtime.RunOption, func())
}

// otelObserver is an Observer whose metrics go to a manual reader and
// whose spans go to a tracer provider with sampler and an in-memory
// exporter (reset after each run); with a nil sampler, to a no-op tracer
// provider (metrics only).
func otelObserver(b testing.TB, sampler sdktrace.Sampler) ([]runtime.RunOption, func()) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	opts := []ilmekotel.Option{ilmekotel.WithMeterProvider(mp), ilmekotel.WithTracerProvider(noop.NewTracerProvider())}
	reset := func() {}
	if sampler != nil {
		spans := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithSyncer(spans))
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		opts[1], reset = ilmekotel.WithTracerProvider(tp), spans.Reset
	}
	obs, err := ilmekotel.New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	return []runtime.RunOption{runtime.WithObserver(obs)}, reset
}

var observedVariants = []observedVariant{
	{"none", []string{"none", "memory"}, func(testing.TB) ([]runtime.RunOption, func()) { return nil, func() {} }},
	// The hook alone: an observer that does nothing.
	{"nop-observer", []string{"none"}, func(testing.TB) ([]runtime.RunOption, func()) {
		return []runtime.RunOption{runtime.WithObserver(runtime.NopObserver{})}, func() {}
	}},
	// The runtime's slog records at Info (one record a run) to a text
	// handler writing nowhere.
	{"slog-info", []string{"none"}, func(testing.TB) ([]runtime.RunOption, func()) {
		return []runtime.RunOption{runtime.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, func() {}
	}},
	{"otel-metrics", []string{"none"}, func(b testing.TB) ([]runtime.RunOption, func()) { return otelObserver(b, nil) }},
	{"otel-unsampled", []string{"none"}, func(b testing.TB) ([]runtime.RunOption, func()) {
		return otelObserver(b, sdktrace.NeverSample())
	}},
	{"otel", []string{"none", "memory"}, func(b testing.TB) ([]runtime.RunOption, func()) {
		return otelObserver(b, sdktrace.AlwaysSample())
	}},
}

// BenchmarkObserved runs the generated chain-100 and fanout-1000 with
// each way of observing them (sub-benchmarks WORKLOAD/VARIANT/CKPT):
// nothing, an observer that does nothing, the runtime's slog records at
// Info, and the OpenTelemetry Observer with metrics only, with traces not
// sampled, and with every trace sampled into an in-memory exporter (reset
// after each run). The per-unit figures are those of BenchmarkWorkloads.
func BenchmarkObserved(b *testing.B) {
	for _, name := range []string{"chain-100", "fanout-1000"} {
		w, err := workload.Parse(name)
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range observedVariants {
			for _, ck := range v.ckpts {
				b.Run(name+"/"+v.name+"/"+ck, func(b *testing.B) { benchRun(b, observedEngine(b, v, ck), w, ck) })
			}
		}
	}
}

// observedEngine is the generated program observed as v sets up.
func observedEngine(tb testing.TB, v observedVariant, ck string) engine {
	opts, after := v.setup(tb)
	return engine{name: "generated", ckpts: []string{ck}, ordered: always,
		program: func(w workload.Workload) (workload.Program, error) {
			p, err := graphs.Generated(w)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, th *workload.Thread, more ...runtime.RunOption) (workload.Outcome, error) {
				o, err := p(ctx, th, append(more, opts...)...)
				after()
				return o, err
			}, nil
		}}
}

// TestObserved runs the workloads of BenchmarkObserved (at size 100) with
// each variant and checks what they produced.
func TestObserved(t *testing.T) {
	for _, name := range []string{"chain-100", "fanout-100"} {
		w, err := workload.Parse(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range observedVariants {
			for _, ck := range v.ckpts {
				t.Run(name+"/"+v.name+"/"+ck, func(t *testing.T) { runOnce(t, observedEngine(t, v, ck), w, ck) })
			}
		}
	}
}
