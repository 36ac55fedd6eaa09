// Command example runs a small refund graph with the OpenTelemetry
// Observer and prints the trace it made as a tree: a fan-out, a journaled
// step whose first attempt fails and is retried, a pause for a person's
// approval, and the resume, whose run links to the run that paused.
//
//	cd otel && go run ./example
//
// The spans go to an in-memory exporter; a real program would give the
// Observer its OTLP exporter's tracer provider instead.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	ilmekotel "github.com/ilmek-go/ilmek/otel"
	"github.com/ilmek-go/ilmek/otel/internal/spantree"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

func main() {
	durations := flag.Bool("durations", true, "show each span's duration")
	ids := flag.Bool("ids", false, "show run, task and checkpoint ids")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *durations, *ids); err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

// refundGraph looks the order up and checks the policy side by side, then
// pays the refund (a journaled payment whose first attempt fails) once a
// person approves it.
func refundGraph(obs runtime.Observer) (*runtime.Graph[runtime.Values, runtime.Values], error) {
	var payments atomic.Int32
	return runtime.NewBuilder("refund").
		Channel("order", "").Channel("policy", "").Channel("paid", "").
		Node("triage", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }).
		TypedNode("lookup", "shop.order", nil, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			order, err := runtime.Step(ctx, "get-order", func() (string, error) { return "A-1001, 42.00 EUR", nil })
			return runtime.Values{"order": order}, err
		}).
		TypedNode("policy", "rules", nil, func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			return runtime.Values{"policy": "refundable within 30 days"}, nil
		}).
		TypedNode("pay", "shop.refund", nil, func(ctx *runtime.Ctx, in runtime.Values) (runtime.Values, error) {
			ok, err := runtime.Interrupt[bool](ctx, fmt.Sprintf("refund %v?", in["order"]))
			if err != nil || !ok {
				return nil, err
			}
			id, err := runtime.Step(ctx, "refund", func() (string, error) {
				if payments.Add(1) == 1 {
					return "", errors.New("payment gateway timed out")
				}
				return "R-77", nil
			})
			return runtime.Values{"paid": id}, err
		}).
		Edge(spec.Start, "triage").Edge("triage", "lookup").Edge("triage", "policy").
		Edge("lookup", "pay").Edge("policy", "pay").
		Compile(runtime.WithObserver(obs), runtime.WithNodeRetry("pay", runtime.RetryPolicy{MaxAttempts: 3, Backoff: 10 * time.Millisecond}))
}

// run runs the graph until it pauses, resumes it with an approval, and
// writes the trace to w.
func run(ctx context.Context, w io.Writer, durations, ids bool) error {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(ctx)
	obs, err := ilmekotel.New(ilmekotel.WithTracerProvider(tp))
	if err != nil {
		return err
	}
	g, err := refundGraph(obs)
	if err != nil {
		return err
	}
	th := g.Thread(checkpoint.NewMemory(), "refund-A-1001")
	// Each request to the service is a span of its own; the runs nest
	// under them.
	tracer := tp.Tracer("service")
	rctx, req := tracer.Start(ctx, "POST /refunds")
	res, err := th.Invoke(rctx, runtime.Values{})
	req.End()
	if err != nil {
		return err
	}
	if res.Status != runtime.StatusInterrupted {
		return fmt.Errorf("the run ended %s, want interrupted", res.Status)
	}
	rctx, req = tracer.Start(ctx, "POST /refunds/A-1001/approve")
	res, err = th.Resume(rctx, runtime.Answer(true))
	req.End()
	if err != nil {
		return err
	}
	if res.Status != runtime.StatusDone {
		return fmt.Errorf("the resumed run ended %s, want done", res.Status)
	}
	skip := func(k attribute.Key) bool {
		switch k {
		case ilmekotel.KeyRunID, ilmekotel.KeyTaskID, ilmekotel.KeyCheckpointID:
			return !ids
		case ilmekotel.KeyCheckpointBytes, ilmekotel.KeyStepDuration, ilmekotel.KeyBackoff:
			return !durations
		}
		return false
	}
	return spantree.Write(w, spans.GetSpans().Snapshots(), spantree.Options{Skip: skip, Durations: durations})
}
