// Package queuehook holds what package runtime lends the queue's worker
// (runtime/postgres/workers) and no one else: run options whose meaning
// holds only for a run whose input is durable elsewhere. It is internal
// to the runtime's tree; package runtime sets its values when it is
// initialized.
package queuehook

// KeepFirst is a runtime.RunOption (held as any: this package cannot
// import runtime) that keeps the run's first checkpoint until the run's
// next write and writes the two in one commit, as DurableWithNextWrite
// does for every checkpoint, on a store that writes batches. The worker
// gives it to a queued start request's run: its first checkpoint holds
// the request's input, which the request's row keeps durable meanwhile,
// so a crash before the next write loses nothing the request cannot
// redo (its next claim starts it again, the thread having no checkpoint
// since it was first claimed), and a Step of the first superstep still
// writes its journal with that checkpoint.
var KeepFirst any

// NewRunID returns a new run id, as the runtime makes them for its runs
// (unique, sorting after the ids this process made before it).
var NewRunID func() string

// RunID returns a runtime.RunOption (held as any) that gives the run the
// id id, which NewRunID made, instead of one of its own. The worker makes
// a request's run id before it claims the request and records it in the
// claim's statement, so that the request names the run before any of the
// run's events or checkpoints is stored, without a statement of its own.
var RunID func(id string) any
