package graphs

import (
	"fmt"
	"slices"

	"github.com/ilmek-go/ilmek/bench/workload"
)

// generated maps a spec name (workload.SpecName) to the constructor of its
// generated program; the glue files register themselves (the gitignored
// big_<pkg>.go ones, of the graphs generated into _big/, with registerBig).
var generated = map[string]func(workload.Workload) (workload.Program, error){}

// committed counts the committed glue files that registered.
var committed int

func register(name string, f func(workload.Workload) (workload.Program, error)) {
	generated[name] = f
	committed++
}

// Generated returns the ilmekgen-generated program of w. It wraps
// workload.ErrNotExpressible when no package was generated for w's size,
// or when the size is one of the generated, not committed ones (200,
// 1,000, 2,000) and the build lacks -tags bigbench.
func Generated(w workload.Workload) (workload.Program, error) {
	if err := w.Valid(); err != nil {
		return nil, err
	}
	f := generated[w.SpecName()]
	if f == nil && bigBuild && slices.Contains(workload.Sizes, w.N) {
		// A bigbench build that lacks a size: fail loudly rather than let
		// the benchmarks skip it.
		return nil, fmt.Errorf("%s: no generated package in this bigbench build; run `go run ./internal/mkgraphs -big -dir graphs` in the bench module first", w)
	}
	if f == nil {
		return nil, fmt.Errorf("%s: no generated package in this build (sizes %v; all but 100 need `go run ./internal/mkgraphs -big -dir graphs` and -tags bigbench): %w", w, workload.Sizes, workload.ErrNotExpressible)
	}
	return f(w)
}
