// Package runtime runs ilmek/1 graphs: the engine behind every kind of
// graph the project makes. A graph is built from a stored JSON document at
// run time, defined in Go code, or generated into a typed package by
// ilmekgen; all three are a [Graph] and run on one executor with the same
// semantics: supersteps, durable steps that never repeat a side effect,
// interrupts for a person and resume, checkpoints, events.
//
// This page is the manual, in the order a program meets the pieces:
// building a graph, running it, the state its nodes read and write, durable
// steps, interrupts, checkpoints and threads, events, and versions of a
// document. The package's examples (Load, Builder, Graph.Stream, Interrupt,
// ThreadQuery) run each piece in a few lines.
//
// # Building a graph
//
// A document names its nodes' types; a [Registry] maps each type to a
// [Factory], which builds the [NodeFunc] of one node from its id and stored
// config ([DecodeConfig] reads the config into a Go type as strictly as
// ilmekgen does, reporting a *[ConfigError]). [Load] decodes a document and
// builds it; [FromSpec] builds one already decoded (a [spec.Graph]). Every
// node is built when the graph is, reachable or not, so a missing type
// fails at once with a *[SpecError]. A document's warnings (an unreachable
// node, guards that may all fail) stay on the graph ([Graph.Warnings]), are
// logged through [WithLogger], and refuse the build with
// [WithWarningsAsErrors].
//
// [NewBuilder] defines a graph in Go: channels with a built-in reducer
// ([Builder.Channel]) or a Go one ([Builder.ChannelFunc]), nodes with or
// without a registry type ([Builder.Node], [Builder.TypedNode]), edges that
// are static ([Builder.Edge]), guarded by a declarative predicate
// ([Builder.EdgeWhen] with [spec.Eq] and its siblings) or by a Go function
// ([Builder.EdgeIf]), and routers that pick targets from the state
// ([Builder.Router], [Builder.RouterTo]). [Builder.Compile] reports every
// problem at once. A Go guard that should read the state as a document's
// guard does evaluates the predicate with [spec.Predicate.Holds].
//
// A package that ilmekgen generated has its own New over its typed State
// and Update, and implements the graph-specific half of a run in plain Go.
// What only generated code uses — the program contract, its planner and
// targets, the generator version that makes a generated package and a
// runtime that do not match fail to compile — is in package
// runtime/genimpl, as protobuf's is in protoimpl, not here.
//
// Whatever the kind, [ToSpec] returns the document a graph can be stored as
// (value-equal to the one it was built from, or an error naming what a
// document cannot hold: a Go guard, a router, a custom reducer), and
// [Mermaid] draws it.
//
// # Running a graph
//
// [Graph.Invoke] runs a graph with an input and returns a [Result]: how the
// run ended ([Status]: [StatusDone], [StatusInterrupted], [StatusError] or
// [StatusAborted]), the state, and the interrupts it paused on.
// [Graph.Stream] runs it and yields its events as they happen.
//
// A run on a new thread (or on none) folds its input into the channels,
// plans the nodes that the edges leaving spec.Start reach, and then repeats
// a superstep until nothing is planned: it runs the planned tasks
// concurrently, each on the state of the last checkpoint and never a
// sibling's update; it folds their updates in node declaration order,
// whatever order they finished in; it writes a checkpoint; and it plans the
// next superstep from the edges whose guards hold on the new state. A node
// reached by several edges in one superstep runs once. A failing task voids
// its whole superstep: none of the superstep's updates is applied.
//
// A run goes on a thread when it must outlive its process or pause for a
// person: [Graph.Thread] returns the handle ([Thread]) whose runs keep
// their state between runs (see Checkpoints and threads); [Graph.Invoke]
// and [Graph.Stream] run without one and keep nothing. Options are named
// With<Noun>: an [Option] builds a graph, a [RunOption] sets one run, and a
// [SharedOption] ([WithLogger], [WithObserver]) is taken by both.
// [WithRecursionLimit] bounds the supersteps of
// one run ([DefaultRecursionLimit] without it) and a run that would exceed
// it ends with a *[RecursionLimitError]; [WithRunMeta] hands the nodes data of
// the request. Cancelling the run's context stops its tasks and voids the
// superstep in flight; [WithStopSignal] stops the run between supersteps
// instead, after the superstep in flight commits. Either way the run ends
// [StatusAborted] with an error matching [ErrAborted], the last commit
// stands, and a later run continues from it.
//
// Every error is matched with errors.Is and errors.As, never by its text: a
// task's failure is a *[NodeError] (with the panic's stack when it
// panicked), an update a channel refuses a *[ReduceError] wrapping a
// *[ChannelError], a goto or send to a node the graph lacks an
// *[UnknownTargetError] (an error of the node that named it), options that
// do not fit together an *[OptionError], a failing backend a
// *[CheckpointError], a thread held by another run [ErrThreadBusy].
//
// # State and updates
//
// The state is a set of named channels. A node returns a partial update,
// and each channel it writes folds the value in with its reducer: last
// write wins (the default), append to a list, merge into an object, or a
// [ReducerFunc] of a graph built in Go. A write a channel cannot take (to a
// channel the graph does not declare, or a non-object to a merge channel)
// voids the superstep with a *[ReduceError]. A generated package has a
// typed State and Update; graphs built from a document or in Go use
// [Values], a map of channel name to value. A node may write any value
// encoding/json can encode; the state keeps each in its JSON form (nil,
// bool, float64, string, []any, map[string]any), converted when the write
// is folded, so a node sees a channel the same way whether it was written
// in this run or restored from a checkpoint, and a value with no JSON form
// (not a number, an infinity, a Go channel) voids the superstep that wrote
// it. [Get] reads a channel as a Go type, strictly.
//
// Each node is called with a *[Ctx]: a context.Context cancelled with the
// run, and the run as the node sees it. [Ctx.State] is the state the node
// received (for a send, the send's input); [Ctx.StepIndex] numbers the
// running superstep within its thread, and a superstep that runs again
// after a resume or a failure keeps its number; [Ctx.RemainingSteps] is how
// many more supersteps the recursion limit lets this run start; [Ctx.Graph]
// is the graph's [Shape] (its nodes, in order, and channels); [Ctx.Meta] is
// the caller's [WithRunMeta]. [Ctx.ThreadID], [Ctx.RunID], [Ctx.Node],
// [Ctx.TaskKey] and [Ctx.TaskID] say where the task runs, and [Ctx.Logger]
// is a log/slog logger scoped to them ([WithLogger]). [Ctx.Emit] and
// [Ctx.EmitToken] send custom events to the run's stream while the task
// runs.
//
// A node may also decide where the run goes next. [Ctx.Command] with [To]
// replaces the node's static edges for this superstep, and [SendTo] fans
// out: each send is a task of its own whose state is the send's input,
// keyed id#0, id#1… in task order (generated packages put the goto in their
// Update). A document may declare the targets a node's goto and sends may
// name ([Builder.Goto] in Go); a run refuses any other with an
// *[UndeclaredGotoError]. [WithNodeRetry]
// and [WithTypeRetry] give nodes a [RetryPolicy]: a failing body runs again,
// but its completed steps do not.
//
// # Durable steps
//
// A node may run again: after a crash, a resume, a retry. [Step] runs a
// function once per task and journals its result before returning it, so an
// effect (a charge, an email) never happens twice: a replay of the task
// gets the journaled result without calling the function. A function that
// fails is not journaled, so a later pass calls it again. Steps are keyed
// by name and occurrence. In strict mode (the default, [WithStrictReplay]) a replay
// that does not ask for a journaled step fails with a
// *[NondeterminismError]: a node's body must be deterministic apart from
// its steps. A journal lives until its task's superstep commits; a pause
// keeps its tasks' journals with the checkpoint, so a fork from it
// ([Thread.Fork] at a pause that is no longer the latest) replays the
// steps that had run before the question, while a fork from a checkpoint
// taken before a step ran runs the step again in the new branch
// (runtime/checkpointtest: ForkFromPauseReplaysStep, ForkBeforeStepRunsIt).
// A failed superstep writes no checkpoint and keeps its finished steps'
// journals for the retry; the retry's first checkpoint records them, so
// a fork from the checkpoint the failed superstep ran on, or from the
// retry's, replays those steps too (ForkFromFailedStepReplaysStep).
//
// # Interrupts and resume
//
// [Interrupt] pauses the run for a person: on its first pass it records the
// question and returns an error ([IsInterrupt]) that the node returns; the
// superstep then reduces nothing, and the run ends [StatusInterrupted] with
// the open questions in [Result.Pending]. Each [PendingInterrupt] has an id
// (the task key and the interrupt's key, [WithKey]) and records the Go type
// of the expected answer with its JSON Schema (the pending interrupt's Expects),
// so a form can be built from it. Answers are checked strictly, as
// documents are ([Expects] says how): null, a misspelt or missing member
// never becomes a zero value (TestInterruptAnswersStrict,
// TestCheckAnswerAgreesWithValidator). [CheckAnswer] checks one answer the
// same way without a run, for a program that queues answers for a worker
// and refuses a wrong one before anything is queued.
//
// [Thread.Resume] (or [Thread.StreamResume]) answers: with [Answer] when one
// interrupt is open, with [AnswersByID] otherwise. It checks every answer
// against what its interrupt expects before it writes anything, then
// replays the paused superstep, in which Interrupt returns the answer and
// finished tasks fast-forward through their journals. A resume that does
// not fit (a bare answer to several interrupts, an unknown id, a missing
// answer, a thread that waits on nothing) is refused whole with a
// *[ResumeError] whose reason matches [ErrAmbiguousAnswer] and its
// siblings, and writes nothing; so is a plain run on a thread that waits on
// a person ([ErrWaitingOnPerson]). [Thread.State] and
// [Thread.Pending] show where a thread stands, [Thread.History] lists its
// checkpoints, and [ThreadMermaid] draws it.
//
// # Timers
//
// [Sleep] and [Until] wait inside a node. The wake time is journaled the
// first time the task asks, so a resume or a crash never moves it. A wait
// of at most [WithParkAfter] (default [DefaultParkAfter]) happens in
// process; a longer one parks the thread: the run ends [StatusParked]
// with no error, the lease and the goroutine are released, and the wake
// time is in [Result.WakeAt], [ThreadState.WakeAt] and the thread's
// listing (its pending timer, a [PendingInterrupt] with Timer set). An
// interrupt with a deadline ([WithTimeout]) is woken the same way, and
// its node then gets the default answer ([WithDefaultAnswer]) or an
// *[InterruptTimeoutError], once. [Thread.Wake] continues a thread whose
// time has come, from any process, and refuses one with nothing due
// ([ErrNotDue]); package runtime/waker calls it for the threads of a
// memory or SQLite store, and fires scheduled runs.
//
// Scheduled runs are kept by the store ([checkpoint.ScheduleStore]: the
// memory store, runtime/sqlite, runtime/postgres): a
// [checkpoint.Schedule] names a graph, its input, a cron expression with
// its time zone or an interval, a thread template ({schedule}@{tick} by
// default), an overlap policy (a [DoubleTexting]: reject skips a tick
// while the previous firing runs, enqueue fires anyway, cancel-and-replace
// stops the previous firing) and a catch-up policy for ticks missed while
// nothing ran (none, one, all up to a bound). Each tick is recorded once
// ([checkpoint.Firing], keyed by schedule and tick): on PostgreSQL the
// workers of runtime/postgres/workers insert the tick's request in the
// same transaction; on the memory and SQLite stores runtime/waker
// records it and runs it, given the store as its schedule store.
//
// # Checkpoints and threads
//
// A run on a thread continues from the thread's latest [Checkpoint]: new
// input folds into its channels, and if it still plans tasks they run next,
// else planning starts again at spec.Start (a chat thread accumulates its
// messages turn after turn). [Thread.Fork] continues from an older one
// instead, which forks the thread; [Thread.Delete] removes it. Checkpoints and journals live in a
// [Checkpointer]: [checkpoint.NewMemory] keeps threads in the process; runtime/sqlite
// keeps them in one file; runtime/postgres in a database that any number of
// processes share. runtime/checkpointtest is the contract they all pass.
//
// A thread id is at most [MaxThreadIDBytes] (200) bytes of valid UTF-8,
// every character printable: no control character (NUL, ESC, DEL, CR, LF,
// C1), no bidirectional override or isolate, none of / ? # %.
// [CheckThreadID] says why an id is refused (an error matching
// [ErrThreadID]); every entry point that takes a thread id checks it before
// it touches the store, so an id is safe in a URL, a header, a log line or
// a terminal (TestCheckThreadID).
//
// Nothing is lost and nothing runs twice: a superstep is committed whole or
// not at all, a step is journaled before its result is used, and a run
// holds its thread's lease, so no two runs of a thread go on at once
// ([ErrThreadBusy]). A backend fences every write with the lease, so a run
// that lost its thread writes nothing; the run is told at once, and it
// stops before starting another effect. One gap cannot be closed (SECURITY.md
// names it): a process that dies after an effect and before its journal
// write reached storage runs the effect again when the thread is taken up.
// A dropped database connection in a live process is not such a gap:
// runtime/postgres retries journal writes, commits and lease renewals after
// errors safe to retry (TestRetryAfterTerminatedConnection,
// TestRetryAcrossRestart).
//
// A superstep's checkpoint is durable before the next superstep starts
// ([DurableEachSuperstep], the default). [WithDurability] with
// [DurableWithNextWrite] keeps it until the run's next write and writes
// both in one commit, on stores that write batches
// ([checkpoint.BatchLease]: runtime/sqlite, runtime/postgres): a crash
// may then lose two supersteps' plain work instead of one, never a Step's
// journal, which is written with the checkpoint its task was planned at.
//
// A checkpoint records what its superstep changed, not the whole state,
// when the backend stores deltas (Memory, runtime/sqlite, runtime/postgres
// do). Generated packages and graphs built from a document or in Go encode
// only what the superstep's updates wrote, so the cost of a checkpoint
// follows the update, not the state. A store can prune old checkpoints of
// a thread, never those the thread still needs.
//
// A store also keeps each thread's metadata, string pairs a run merges in
// with [WithThreadMeta], and the outcome of its last run: its status, run
// id, end time, a short error text, and the interrupts a paused run waits
// on. A store lists threads by status, metadata and update time
// ([ThreadQuery]), newest first, a page at a time ([ThreadPage]) with
// a cursor that never repeats a thread while others are updated; an inbox
// of approvals is one call, answered with Resume and AnswersByID. Where a
// thread stands (new, running, interrupted, parked, done, error, aborted)
// is one rule, [checkpoint.ThreadStatus], that every tool applies.
//
// Package runtime/checkpoint is the backend port: the interfaces a store
// implements, the helpers a backend author builds on, the store errors and
// the in-memory store. Its documentation is the backend's manual.
//
// # Events
//
// A run's [Event] stream follows it: run_start; per superstep step_start,
// then for each task node_start, its custom events and node_retry, and
// node_end or node_error; then state and checkpoint, or for a pause
// checkpoint and interrupt; run_end last ([EventType] lists them). Every
// event carries the run and thread ids, a Seq that counts from 1 without
// gaps within the run, its time, and the durations of what ended. Package
// runtime/stream projects the stream into the values, updates, custom,
// messages and debug views of popular streaming APIs.
//
// With [WithEventLog] a run also stores its events in its Checkpointer's
// event log, whether or not anyone streams it, fenced by its lease: a
// client that lost its stream, in this process or another, reads the events
// after the last Seq it saw and goes on live. Each run keeps its last
// 10,000 events.
//
// An [Observer] receives the lifecycle calls of runs (runs, supersteps,
// tasks, retries, steps executed or replayed, interrupts, resumes, commits,
// leases), set per graph ([WithObserver]) or per run ([WithObserver]) and
// combined with [Observers]; the runtime's own records go to a log/slog
// logger ([WithLogger], [WithLogger]). Without them a run pays nothing for
// either. The module github.com/ilmek-go/ilmek/otel turns the calls into
// OpenTelemetry traces and metrics.
//
// # Subgraphs
//
// A graph runs another compiled graph, of any state type, as one of its
// nodes: [Builder.Subgraph] in Go, a node of type "subgraph" in a document
// ([spec.SubgraphConfig]; FromSpec and Load take the children with
// [WithSubgraphs] and place every refusal in the document, as
// [CheckSubgraphs] does for tools; [spec.CheckSubgraphCycles] finds a set of
// documents that contain themselves). Explicit maps say which parent
// channels feed which child channels and which child channels write back;
// nothing else crosses, and a channel either side does not declare, or a
// mapping whose reducers would change its meaning, is refused when the
// graph is built.
//
// The child runs inside the parent task with its own channels, supersteps
// and recursion limit, and everything it stores lives in the parent task's
// journal, in the parent's thread: its latest checkpoint and its tasks'
// journals, each child commit one fenced write under the parent's lease.
// The task id (planID:key) survives resumes, retries and crashes, so a
// replayed parent task continues the child from its latest checkpoint, no
// step the child journaled runs again, and a child that reached its end
// is not run again. The parent's channels change only in the superstep
// commit after the child reached its end, which also drops everything the
// child stored. A pause keeps the task's journal with the checkpoint, so a
// fork of the parent from a pause forks the child from that point.
//
// An interrupt inside a child, at any depth, pauses the parent task and
// is listed on the parent with the id "<task key>/<child interrupt id>"
// ("refund/approve:interrupt#0"; one more segment per level). Resume
// answers it like any other: every open interrupt of the whole tree is
// answered or nothing is written, each answer reaches its own child, and
// paused siblings keep theirs. A child's step, node and state events reach
// the parent's stream with [Event].NS set to the path of task keys;
// stream.Root leaves them out. [Thread.Subgraphs] reads where each child of a
// paused thread stands (its channels, next tasks and pauses). A child's
// failure fails the parent task with a [SubgraphError] naming the path.
//
// A child run has its own recursion limit: the config's "limit",
// [WithRecursionLimit] given to Builder.Subgraph or [RunSubgraph], else
// [DefaultRecursionLimit]; the parent's limit counts the parent's
// supersteps only. Cancelling the parent run's context cancels the child's
// tasks. A stop ([WithStopSignal]) reaches every child: it stops at its
// own next superstep boundary, its checkpoint committed; the parent run
// ends as a stop does (ErrStopRequested), its superstep unwritten, and the
// next run continues the child from that checkpoint.
//
// Versions. A parent's version covers the children it runs: its
// fingerprint and stored form are its document's with every subgraph
// node pinned to its child's fingerprint ([spec.PinSubgraphs]; a document
// that pins every child keeps its own fingerprint), so a new version of a
// child, at any depth, is a new version of the parent and a changed
// config of the subgraph node that runs it. The compatibility rule below
// therefore refuses a thread paused inside a changed child, naming the
// child's versions and the path-qualified interrupts it waits on, and
// [AffectedThreads] reports it (AffectedThread.Pending gives those ids);
// a thread paused elsewhere continues, and runs the new child from its
// start. `ilmekgen diff` of two documents that pin their children shows a
// new child version as the node's config change (and `--subgraph` pins
// unpinned documents as the runtime does). A generated package's New
// hands the runtime the children it wires in ([WithSubgraphs]), so every
// program kind records the same version. A stored form that pins no child
// (written before pins) says nothing of its version; the child's own rule
// then applies when the task continues it.
//
// Generated packages wire their children in (ilmekgen --subgraph; see the
// gen package's manual). examples/refund in the repository runs a generated
// support graph whose refund node is a generated refund graph, on SQLite:
// one process pauses inside the child, another answers by the
// path-qualified id, and the child's journaled lookup runs once.
//
// # Document versions
//
// A document changes while threads are paused on it. Every checkpoint
// records the fingerprint of the graph version that wrote it
// ([Graph.Fingerprint]) and the checkpoint format, and the store keeps
// each version's document by fingerprint. A run or
// resume on a graph whose fingerprint differs from the thread's latest
// checkpoint applies this rule before it writes anything:
//
//  1. every node the checkpoint has a task planned for (Next) or an
//     interrupt pending on (Pending) exists in the graph with the same type
//     and the same config, compared as JSON values;
//  2. every channel the checkpoint holds (a member of Channels, or of a
//     planned send's input) exists in the graph with the same reducer.
//
// When both hold the run continues and its checkpoints record the new
// fingerprint; otherwise it returns an *[IncompatibleError] (matching
// [ErrIncompatible]) listing each failed condition with its fix. Nothing
// else counts: added nodes and channels, edges, guards and the node order
// act only after the work the checkpoint holds. When the backend does not
// know the old document, only the existence of the nodes and channels is
// checked; a checkpoint without a fingerprint runs unchecked. [Compatible]
// applies the rule alone, [AffectedThreads] lists the threads a change
// would touch, [NewVersions] keeps several versions and picks the one that
// wrote a thread, and [Migrate] moves a thread across a change the rule
// refuses, with a dry run.
//
// Where this package deliberately differs from the reference implementation
// (the recursion limit counts per run, resumes are checked whole before
// anything is written, sends are numbered in task order), README.md and
// conformance/README.md say why.
package runtime
