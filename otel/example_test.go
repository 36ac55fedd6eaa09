package otel_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ilmek-go/ilmek/otel"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// A run traced with OpenTelemetry: a span for the run, one per superstep
// and one per node, each with the graph's attributes. Here a recorder
// stands in for an exporter.
func ExampleNew() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	obs, err := otel.New(otel.WithTracerProvider(tp))
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := runtime.NewBuilder("greet").Channel("greeting", "").
		Node("greet", func(c *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			return runtime.Values{"greeting": "hello"}, nil
		}).
		Edge(spec.Start, "greet").Edge("greet", spec.End).Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := g.Invoke(context.Background(), nil, runtime.WithObserver(obs)); err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range spans.Ended() {
		attrs := ""
		for _, a := range s.Attributes() {
			if a.Key == otel.KeyGraph || a.Key == otel.KeyNode || a.Key == otel.KeySuperstep {
				attrs += fmt.Sprintf(" %s=%s", a.Key, a.Value.String())
			}
		}
		fmt.Printf("%s%s\n", s.Name(), attrs)
	}
	// Output:
	// task greet ilmek.node.id=greet ilmek.superstep=1
	// superstep ilmek.superstep=1
	// run greet ilmek.graph.name=greet
}
