package graphs

import (
	"fmt"

	"github.com/ilmek-go/ilmek/bench/workload"
)

// generated maps a spec name (workload.SpecName) to the constructor of its
// generated program; the glue files register themselves.
var generated = map[string]func(workload.Workload) (workload.Program, error){}

func register(name string, f func(workload.Workload) (workload.Program, error)) {
	generated[name] = f
}

// Generated returns the ilmekgen-generated program of w. It wraps
// workload.ErrNotExpressible when no package was generated for w's size.
func Generated(w workload.Workload) (workload.Program, error) {
	if err := w.Valid(); err != nil {
		return nil, err
	}
	f := generated[w.SpecName()]
	if f == nil {
		return nil, fmt.Errorf("%s: no generated package for this size (sizes %v are generated): %w", w, workload.Sizes, workload.ErrNotExpressible)
	}
	return f(w)
}
