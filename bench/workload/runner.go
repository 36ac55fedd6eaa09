package workload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

// Checkpointers are the checkpointer settings of the suite:
// "sqlite-nextwrite" is SQLite with runtime.DurableWithNextWrite.
var Checkpointers = []string{"none", "memory", "sqlite", "sqlite-nextwrite"}

// ErrNotExpressible is returned when a workload cannot be run by the asked
// engine or program kind (ilmek-bench exits 3 on it): a size without a
// generated package, or send in an engine without dynamic fan-out.
var ErrNotExpressible = errors.New("workload cannot be expressed")

// Program runs a workload's graph once, on thread th (nil: without a
// thread, keeping nothing), with the given run options.
type Program func(ctx context.Context, th *Thread, opts ...runtime.RunOption) (Outcome, error)

// Thread names the thread a durable run of a Program goes on.
type Thread struct {
	Store runtime.Checkpointer
	ID    string
}

// Invoke runs g with input in on th (nil: without a thread).
func Invoke[S, U any](ctx context.Context, g *runtime.Graph[S, U], th *Thread, in U, opts ...runtime.RunOption) (runtime.Result[S], error) {
	if th == nil {
		return g.Invoke(ctx, in, opts...)
	}
	return g.Thread(th.Store, th.ID).Invoke(ctx, in, opts...)
}

// SpecBuilt builds the workload's graph from its spec and Registry with
// runtime.FromSpec.
func SpecBuilt(w Workload) (Program, error) {
	doc, err := w.Spec()
	if err != nil {
		return nil, err
	}
	g, err := runtime.FromSpec(doc, Registry())
	if err != nil {
		return nil, err
	}
	var in runtime.Values
	if c, ok := w.Input(); ok {
		in = runtime.Values{"counter": c}
	}
	return func(ctx context.Context, th *Thread, opts ...runtime.RunOption) (Outcome, error) {
		res, err := Invoke(ctx, g, th, in, opts...)
		if err != nil {
			return Outcome{}, err
		}
		return ValuesOutcome(res.Supersteps, res.State)
	}, nil
}

// Runner runs one workload's program repeatedly with one checkpointer
// setting; each run is a new thread.
type Runner struct {
	w     Workload
	p     Program
	ckpt  string
	store *sqlite.Store
	dir   string
	runs  int
}

// NewRunner prepares runs of p with checkpointer ckpt (one of
// Checkpointers). "memory" gives every run a new checkpoint.NewMemory();
// "sqlite" opens one file in a new temporary directory (under dir, or the
// system's when dir is "") with the default, durable settings, and
// "sqlite-nextwrite" does too, its runs keeping each checkpoint for their
// next write (runtime.DurableWithNextWrite). Close removes the file.
func NewRunner(w Workload, p Program, ckpt, dir string) (*Runner, error) {
	r := &Runner{w: w, p: p, ckpt: ckpt}
	switch ckpt {
	case "none", "memory":
	case "sqlite", "sqlite-nextwrite":
		d, err := os.MkdirTemp(dir, "ilmek-bench-")
		if err != nil {
			return nil, err
		}
		st, err := sqlite.Open(filepath.Join(d, "bench.db"))
		if err != nil {
			os.RemoveAll(d)
			return nil, err
		}
		r.store, r.dir = st, d
	default:
		return nil, fmt.Errorf("checkpointer %q: want none, memory, sqlite or sqlite-nextwrite", ckpt)
	}
	return r, nil
}

// Run runs the workload once.
func (r *Runner) Run(ctx context.Context) (Outcome, error) {
	opts := []runtime.RunOption{runtime.WithRecursionLimit(r.w.RecursionLimit())}
	r.runs++
	var th *Thread
	switch r.ckpt {
	case "memory":
		th = &Thread{Store: checkpoint.NewMemory(), ID: "bench"}
	case "sqlite-nextwrite":
		opts = append(opts, runtime.WithDurability(runtime.DurableWithNextWrite))
		fallthrough
	case "sqlite":
		th = &Thread{Store: r.store, ID: "bench-" + strconv.Itoa(r.runs)}
	}
	return r.p(ctx, th, opts...)
}

// Close closes and removes the SQLite file, if any.
func (r *Runner) Close() error {
	if r.store == nil {
		return nil
	}
	err := r.store.Close()
	return errors.Join(err, os.RemoveAll(r.dir))
}
