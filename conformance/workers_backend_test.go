package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/steponce/steponcegraph"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// TestWorkersStartInputDecodesLikeUpdateOf: a start request's input means
// through the queue's workers what it means given to Invoke through the
// generated package's UpdateOf. workers.Graph decodes it into the
// generated Update, whose UnmarshalJSON converts it as UpdateOf does; before
// it had one, encoding/json dropped a channel the graph does not declare,
// read an explicit null as "not written" and refused one value for an
// append channel (conformance cases with such inputs failed on
// generated/workers).
func TestWorkersStartInputDecodesLikeUpdateOf(t *testing.T) {
	if os.Getenv(EnvPostgresDSN) == "" {
		t.Skipf("%s is not set", EnvPostgresDSN)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	g, err := steponcegraph.New(stepOnceNodes{NewEffects()})
	if err != nil {
		t.Fatal(err)
	}
	input := json.RawMessage(`{"nope": 1}`)
	var vals runtime.Values
	if err := json.Unmarshal(input, &vals); err != nil {
		t.Fatal(err)
	}
	_, inProcess := g.Thread(checkpoint.NewMemory(), "t").Invoke(ctx, steponcegraph.UpdateOf(vals))
	var re *runtime.ReduceError
	if !errors.As(inProcess, &re) {
		t.Fatalf("in process, input %s: err = %v, want a *runtime.ReduceError naming the undeclared channel", input, inProcess)
	}

	b, err := OpenBackend("workers")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ws := b.New().(*workersStore)
	defer ws.Close()
	q := ws.q
	w := workers.NewWorker(q, map[string]workers.Runnable{"g": workers.Graph(g)}, workers.Poll(50*time.Millisecond))
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() { stop(); <-done }()
	id, err := q.Submit(ctx, workers.Request{Graph: "g", Thread: Thread, Input: input})
	if err != nil {
		t.Fatal(err)
	}
	out, err := q.Wait(ctx, id, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if out.State != "error" {
		t.Errorf("through a start request, input %s: the request ended %s (error %q), want error as in process (%v): "+
			"workers.Graph decodes the input with encoding/json into the generated Update, which drops the undeclared channel",
			input, out.State, out.Error, inProcess)
	}
}
