// Package workload defines the benchmark workloads of ilmek's performance
// suite — chain-N, fanout-N, loop-N and fanoutsend-N — as spec documents,
// with the node bodies of the spec-built program, the checkpointers they run
// with, and the check of a run's outcome. Every engine and program kind of
// the suite runs these same workloads.
package workload

import (
	"fmt"
	"strconv"
	"strings"
)

// Kinds are the workload kinds, in the order tables list them.
var Kinds = []string{"chain", "fanout", "loop", "fanoutsend"}

// Sizes are the sizes of chain, fanout and loop that have a generated
// package: 100 is committed, the others are generated when the benchmarks
// run (graphs/_big, built with -tags bigbench).
var Sizes = []int{100, 200, 1000, 2000}

// Workload is one benchmark graph: a kind and its size N.
//
//   - chain-N: n0 → … → n{N-1}; node i appends i to items. N supersteps.
//   - fanout-N: fan → w0…w{N-1} (static edges) → join; wi appends i. Three
//     supersteps, N+2 tasks.
//   - loop-N: node inc sets counter to counter+1; an edge back to inc while
//     counter < N (an lt guard). N supersteps.
//   - fanoutsend-N: fan (reading N from the input's counter) sends N tasks
//     to worker with a command goto, the i-th with counter = i; worker
//     appends its counter; worker → join. Three supersteps, N+2 tasks.
type Workload struct {
	Kind string
	N    int
}

// Parse reads a workload name such as "chain-100".
func Parse(name string) (Workload, error) {
	kind, n, ok := strings.Cut(name, "-")
	if !ok {
		return Workload{}, fmt.Errorf("workload %q: want KIND-N, e.g. chain-100", name)
	}
	size, err := strconv.Atoi(n)
	if err != nil || size < 1 {
		return Workload{}, fmt.Errorf("workload %q: N must be a positive integer", name)
	}
	w := Workload{Kind: kind, N: size}
	return w, w.Valid()
}

// Valid reports an unknown kind or a size below 1.
func (w Workload) Valid() error {
	switch {
	case w.N < 1:
		return fmt.Errorf("workload %s: N must be at least 1", w)
	case !known(w.Kind):
		return fmt.Errorf("workload %q: unknown kind; want one of %s", w.Kind, strings.Join(Kinds, ", "))
	}
	return nil
}

func known(kind string) bool {
	for _, k := range Kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// String is the workload's name, e.g. "chain-100".
func (w Workload) String() string { return w.Kind + "-" + strconv.Itoa(w.N) }

// Supersteps is the number of supersteps one run takes.
func (w Workload) Supersteps() int {
	switch w.Kind {
	case "chain", "loop":
		return w.N
	}
	return 3
}

// Tasks is the number of tasks one run executes.
func (w Workload) Tasks() int {
	switch w.Kind {
	case "chain", "loop":
		return w.N
	}
	return w.N + 2
}

// Unit is what the per-unit figure divides by: "superstep" for the
// sequential workloads, "task" for the fan-outs.
func (w Workload) Unit() string {
	switch w.Kind {
	case "chain", "loop":
		return "superstep"
	}
	return "task"
}

// Units is the number of units of one run.
func (w Workload) Units() int {
	if w.Unit() == "superstep" {
		return w.Supersteps()
	}
	return w.Tasks()
}

// RecursionLimit is the recursion limit the runs use: enough for the
// workload's supersteps.
func (w Workload) RecursionLimit() int { return w.Supersteps() + 1 }

// Input is the run's input: fanoutsend reads N from counter.
func (w Workload) Input() (counter int, set bool) {
	if w.Kind == "fanoutsend" {
		return w.N, true
	}
	return 0, false
}

// Outcome is what a run produced, in the terms every engine can report.
type Outcome struct {
	Supersteps int // -1 when the engine does not count them
	Items      []int
	Counter    int
}

// Check compares the outcome of a run with what the workload must produce:
// the number of supersteps, the items in fold order (or, for an engine
// that does not fix the fan-in order, as a set), and the counter.
func (w Workload) Check(o Outcome, ordered bool) error {
	if o.Supersteps >= 0 && o.Supersteps != w.Supersteps() {
		return fmt.Errorf("%s: %d supersteps, want %d", w, o.Supersteps, w.Supersteps())
	}
	want := w.items()
	if len(o.Items) != len(want) {
		return fmt.Errorf("%s: %d items, want %d", w, len(o.Items), len(want))
	}
	if ordered {
		for i := range want {
			if o.Items[i] != want[i] {
				return fmt.Errorf("%s: items[%d] = %d, want %d", w, i, o.Items[i], want[i])
			}
		}
	} else {
		seen := make([]bool, len(want))
		for _, v := range o.Items {
			if v < 0 || v >= len(seen) || seen[v] {
				return fmt.Errorf("%s: unexpected or repeated item %d", w, v)
			}
			seen[v] = true
		}
	}
	if wantC := w.counter(); o.Counter != wantC {
		return fmt.Errorf("%s: counter = %d, want %d", w, o.Counter, wantC)
	}
	return nil
}

// items is the items channel after a run: 0…N-1, except for loop.
func (w Workload) items() []int {
	if w.Kind == "loop" {
		return nil
	}
	out := make([]int, w.N)
	for i := range out {
		out[i] = i
	}
	return out
}

// counter is the counter channel after a run (0 when never written).
func (w Workload) counter() int {
	switch w.Kind {
	case "loop", "fanoutsend":
		return w.N
	}
	return 0
}
