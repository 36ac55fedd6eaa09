package bench

import (
	"context"
	"testing"

	"github.com/ilmek-go/ilmek/bench/einobench"
	"github.com/ilmek-go/ilmek/bench/graphs"
	"github.com/ilmek-go/ilmek/bench/workload"
)

// engine is one way of running a workload.
type engine struct {
	name    string
	program func(workload.Workload) (workload.Program, error)
	ckpts   []string // checkpointer settings it supports
	ordered func(workload.Workload) bool
}

func always(workload.Workload) bool { return true }

var engines = []engine{
	{"generated", graphs.Generated, workload.Checkpointers, always},
	{"spec", workload.SpecBuilt, workload.Checkpointers, always},
	{"eino", func(w workload.Workload) (workload.Program, error) { return einobench.Program(context.Background(), w) }, []string{"none"}, einobench.Ordered},
}

// runOnce runs w once on e with ckpt and checks the outcome.
func runOnce(t testing.TB, e engine, w workload.Workload, ckpt string) {
	t.Helper()
	p, err := e.program(w)
	if err != nil {
		t.Fatal(err)
	}
	r, err := workload.NewRunner(w, p, ckpt, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for range 2 { // twice: the second run must not see the first
		o, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Check(o, e.ordered(w)); err != nil {
			t.Fatal(err)
		}
	}
}
