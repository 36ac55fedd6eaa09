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
