// Package crashtest proves durability with real OS processes: a test binary
// re-executes itself as a child (see Main) that runs a graph on a durable
// checkpointer, the parent kills it with SIGKILL in the middle of a
// superstep, and a restarted child finishes the thread without calling a
// completed step again. It also lets a child hold a thread's lease, for
// two-process lease tests.
//
// The graph is pluggable by program kind (Kind): code-built and spec-built
// kinds are here; a generated program plugs in the same way (see Kind).
package crashtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// Phase says what the child's tasks do.
type Phase string

const (
	// PhaseCrash: task A runs its step, reports ready and blocks; task B
	// blocks. The parent kills the process before the superstep commits.
	PhaseCrash Phase = "crash"
	// PhaseRecover: both tasks return at once.
	PhaseRecover Phase = "recover"
)

// ReadyLine is what the child prints once task A's step has returned, so
// its journal entry is persisted and a kill cannot undo it.
const ReadyLine = "READY a: step journaled"

// Effects is what the nodes of a crash-test graph call. Task A is
// Effects.A, task B is Effects.B; both are planned from __start__, so they
// run in the same (first) superstep.
type Effects struct {
	// Dir holds effects.log, the side-effect file of A's step.
	Dir   string
	Phase Phase
	// Block is how long a blocked task waits before giving up (a child
	// whose parent died must not live forever).
	Block time.Duration
}

// EffectsFile is the name of the file A's step appends one line to per
// call.
const EffectsFile = "effects.log"

// A is task A: a journaled step "charge" whose function appends a line to
// effects.log and returns a receipt, then, in PhaseCrash, a line to stdout
// (ReadyLine) and a block until the process is killed. It returns the
// receipt.
func (fx *Effects) A(ctx *runtime.Ctx) (string, error) {
	receipt, err := runtime.Step(ctx, "charge", func() (string, error) {
		f, err := os.OpenFile(filepath.Join(fx.Dir, EffectsFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if _, err := fmt.Fprintf(f, "charged by pid %d\n", os.Getpid()); err != nil {
			return "", err
		}
		return fmt.Sprintf("receipt-%d", os.Getpid()), f.Sync()
	})
	if err != nil {
		return "", err
	}
	if fx.Phase == PhaseCrash {
		fmt.Println(ReadyLine)
		fx.block(ctx)
	}
	return receipt, nil
}

// B is task B: it blocks in PhaseCrash and returns at once otherwise.
func (fx *Effects) B(ctx *runtime.Ctx) error {
	if fx.Phase == PhaseCrash {
		fx.block(ctx)
	}
	return nil
}

func (fx *Effects) block(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(fx.Block):
	}
	fmt.Fprintln(os.Stderr, "crashtest: a blocked task was not killed in time")
	os.Exit(3)
}

// Runner runs the thread once on cp: with no input, as a plain run (which
// starts a new thread or retries its pending superstep). It returns the
// run's status and error as Invoke does.
type Runner func(ctx context.Context, cp runtime.Checkpointer, thread string) (runtime.Status, error)

// Kind is one program kind under the crash test. Build returns a Runner of
// a graph in which __start__ plans two nodes in one superstep: "a", whose
// body calls fx.A and writes the receipt to channel "receipt", and "b",
// whose body calls fx.B and writes true to channel "shipped"; both lead to
// __end__.
//
// A generated program plugs in as a Kind whose Build constructs the
// generated graph with node implementations that call fx.A and fx.B and
// whose Runner calls its Invoke with a zero input; add it to the kinds the
// crash test runs (runtime/sqlite/crash_test.go, crashKinds).
type Kind struct {
	Name  string
	Build func(fx *Effects) (Runner, error)
}

// CodeBuilt is the graph built in Go with runtime.NewBuilder.
var CodeBuilt = Kind{Name: "code", Build: func(fx *Effects) (Runner, error) {
	g, err := runtime.NewBuilder("crash").Channel("receipt", "").Channel("shipped", "").
		Node("a", nodeA(fx)).Node("b", nodeB(fx)).
		Edge(spec.Start, "a").Edge(spec.Start, "b").Edge("a", spec.End).Edge("b", spec.End).
		Compile()
	if err != nil {
		return nil, err
	}
	return untypedRunner(g), nil
}}

// crashSpec is the document of the spec-built kind.
const crashSpec = `{
  "name": "crash",
  "channels": { "receipt": {}, "shipped": {} },
  "nodes": [
    { "id": "a", "type": "charge" },
    { "id": "b", "type": "ship" }
  ],
  "edges": [
    { "from": "__start__", "to": "a" },
    { "from": "__start__", "to": "b" },
    { "from": "a", "to": "__end__" },
    { "from": "b", "to": "__end__" }
  ]
}`

// SpecBuilt is the graph loaded from a JSON document and a registry.
var SpecBuilt = Kind{Name: "spec", Build: func(fx *Effects) (Runner, error) {
	reg := runtime.Registry{
		"charge": func(spec.Node) (runtime.NodeFunc, error) { return nodeA(fx), nil },
		"ship":   func(spec.Node) (runtime.NodeFunc, error) { return nodeB(fx), nil },
	}
	g, err := runtime.Load("crash.json", []byte(crashSpec), reg)
	if err != nil {
		return nil, err
	}
	return untypedRunner(g), nil
}}

func nodeA(fx *Effects) runtime.NodeFunc {
	return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
		r, err := fx.A(ctx)
		if err != nil {
			return nil, err
		}
		return runtime.Values{"receipt": r}, nil
	}
}

func nodeB(fx *Effects) runtime.NodeFunc {
	return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
		if err := fx.B(ctx); err != nil {
			return nil, err
		}
		return runtime.Values{"shipped": true}, nil
	}
}

func untypedRunner(g *runtime.Graph[runtime.Values, runtime.Values]) Runner {
	return func(ctx context.Context, cp runtime.Checkpointer, thread string) (runtime.Status, error) {
		res, err := g.Thread(cp, thread).Invoke(ctx, nil)
		return res.Status, err
	}
}
