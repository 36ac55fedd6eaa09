// Package checkpoint is the backend port of the runtime, as
// database/sql/driver is database/sql's: what a store of threads
// implements, the types it keeps, the helpers a backend author builds on,
// the store errors, and the in-memory store ([NewMemory]). An application
// picks a store and hands it to a run; it reads little of this package
// beyond that (package runtime re-exports the names it reads: Checkpoint,
// PendingInterrupt, Checkpointer, Status, ThreadQuery, ThreadPage,
// ThreadInfo).
//
// # The contract
//
// A store is a [Checkpointer]: it keeps each thread's checkpoints (a
// [Checkpoint] after every superstep, naming its parent, so a thread is a
// tree that running from an older checkpoint forks) and the journal of
// each task in flight (a [JournalEntry] per step or interrupt), and it
// gives a run the thread's exclusive [Lease]. Memory (this package),
// runtime/sqlite and runtime/postgres are the stores the project ships;
// runtime/checkpointtest is the contract they all pass, and a backend of
// its own passes it too.
//
// Nothing is lost and nothing runs twice: a superstep is committed whole or
// not at all, a step is journaled before its result is used, and a run
// holds its thread's lease, so no two runs of a thread go on at once
// ([ErrThreadBusy]). A backend fences every write with the lease, so a run
// that lost its thread writes nothing; [LeaseOptions].Lost tells the run at
// once, and it stops before starting another effect (a [*LeaseLostError]
// matching [ErrLeaseLost] that says why: taken over, deadline passed, or
// thread deleted, which also matches [ErrThreadDeleted]).
//
// # Optional interfaces
//
// A store that is a [DeltaCheckpointer] (Memory, runtime/sqlite,
// runtime/postgres) records what a superstep changed, not the whole state:
// a [Delta] of the previous checkpoint, one [ChannelWrite] per changed
// channel, with only the new elements of an append channel and the merged
// keys of a merge channel ([Differ] finds them). Reads get the full
// channels back, byte for byte ([ApplyDeltas]); a full snapshot every so
// often ([Compaction]) keeps a read to one snapshot and a bounded chain,
// however long the thread. A [Pruner] drops old checkpoints of a thread,
// never those the thread still needs.
//
// A [ThreadRecorder] keeps each thread's metadata and the [ThreadOutcome]
// of its last run: its status, run id, end time, a short error text
// ([MaxOutcomeError]), and the interrupts a paused run waits on. A
// [ThreadLister] finds threads by status, metadata and update time, newest
// first, a page at a time ([DefaultThreadLimit], at most
// [MaxThreadLimit]) with a cursor that never repeats a thread while others
// are updated. Where a thread stands is [ThreadStatus]'s one rule, from its
// latest checkpoint, the interrupts open there, that outcome and a run
// going on; a listing by that status preselects by outcome only what
// [OutcomeFilter] allows. An [EventStore] keeps each run's last [MaxStoredEvents]
// events, so a client reconnects to a run's stream from another process. A
// [DocumentStore] keeps each graph version's document by fingerprint, for
// the runtime's compatibility rule. A [LatestReader] reads a thread's
// latest checkpoint without the channels a run already holds. A lease
// that is a [BatchLease] (runtime/sqlite's, runtime/postgres's) writes
// several commits, and a journal, in one atomic commit: runs with the
// runtime's DurableWithNextWrite keep a superstep's checkpoint for their
// next write through it.
//
// # Building a backend
//
// A backend implements [Checkpointer] and the optional interfaces above,
// passes runtime/checkpointtest, and builds on what the stores here share:
// a run's writes go through its [Lease], one [Commit] per superstep (the
// checkpoint, its delta, the finished journals, the [ThreadWrite] and the
// events, in one atomic write); [RebuildChain] reads a
// chain of deltas; [PruneKeep] says which checkpoints a prune keeps;
// [CheckThreadQuery], [MatchThread], [MergeMeta] and [EncodeThreadCursor]
// list threads as Memory does. Every checkpoint records the checkpoint
// format it was written in ([Format]).
package checkpoint
