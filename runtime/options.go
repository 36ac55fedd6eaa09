package runtime

import (
	"log/slog"
	"maps"
)

// Option configures a Graph when it is built (FromSpec, Load,
// Builder.Compile, a generated package's New). Every option is named
// With<Noun>; the ones a run takes too are SharedOptions.
type Option interface{ applyGraph(*graphConfig) }

// RunOption configures one run: an Invoke or Stream of a Graph, or any run
// of a Thread.
type RunOption interface{ applyRun(*runConfig) }

// SharedOption is an option both a graph and a run take, under one name:
// given to the graph it applies to every run, given to a run it applies to
// that run only.
type SharedOption interface {
	Option
	RunOption
}

type graphOption func(*graphConfig)

func (f graphOption) applyGraph(c *graphConfig) { f(c) }

type runOption func(*runConfig)

func (f runOption) applyRun(c *runConfig) { f(c) }

type sharedOption struct {
	graph graphOption
	run   runOption
}

func (o sharedOption) applyGraph(c *graphConfig) { o.graph(c) }
func (o sharedOption) applyRun(c *runConfig)     { o.run(c) }

// WithLogger sets the logger for what the runtime itself reports (log.go
// lists the records, their levels and attribute names): given to a graph,
// also the document's warnings at Warn when it is built, for every run; given
// to a run, for that run instead of the graph's, and the logger behind
// Ctx.Logger, which nodes write to (default slog.Default()). Without one, the
// runtime's own records go nowhere.
func WithLogger(l *slog.Logger) SharedOption {
	return sharedOption{
		graph: func(c *graphConfig) { c.logger = l },
		run:   func(c *runConfig) { c.logger = l },
	}
}

// WithObserver adds an observer: given to a graph, to every run of it (after
// the graph's logger); given to a run, to that run after the graph's. A nil
// observer is ignored.
func WithObserver(o Observer) SharedOption {
	return sharedOption{
		graph: func(c *graphConfig) {
			if o != nil {
				c.observers = append(c.observers, o)
			}
		},
		run: func(c *runConfig) {
			if o != nil {
				c.observers = append(c.observers, o)
			}
		},
	}
}

// WithWarningsAsErrors makes FromSpec and Load refuse a document that has
// warnings (an unreachable node, a repeated edge, a node whose guarded edges
// may all fail), as CI should: the build fails with a *SpecError that lists
// them.
func WithWarningsAsErrors() Option { return graphOption(func(c *graphConfig) { c.strict = true }) }

// WithNodeRetry sets the retry policy of the node with the given id; it wins
// over its type's (WithTypeRetry).
func WithNodeRetry(id string, p RetryPolicy) Option {
	return graphOption(func(c *graphConfig) {
		if c.byID == nil {
			c.byID = map[string]*RetryPolicy{}
		}
		c.byID[id] = &p
	})
}

// WithTypeRetry sets the retry policy of every node of a registry type.
func WithTypeRetry(typ string, p RetryPolicy) Option {
	return graphOption(func(c *graphConfig) {
		if c.byType == nil {
			c.byType = map[string]*RetryPolicy{}
		}
		c.byType[typ] = &p
	})
}

// WithRecursionLimit bounds the supersteps of this run (default
// DefaultRecursionLimit). A limit of n allows n supersteps; 0 fails before
// the first unless nothing is planned. Given to Builder.Subgraph or
// RunSubgraph, it is the child run's own limit instead (the one run option
// they take); the parent's limit counts the parent's supersteps only.
func WithRecursionLimit(n int) RunOption { return limitOption(n) }

// limitOption is WithRecursionLimit: a type of its own, so that the
// subgraph calls can tell it from the other run options.
type limitOption int

func (n limitOption) applyRun(c *runConfig) { c.limit = int(n) }

// WithStrictReplay turns strict replay checking on or off (default on): a
// replayed task that does not ask for a journaled key fails with a
// NondeterminismError.
func WithStrictReplay(on bool) RunOption { return runOption(func(c *runConfig) { c.strict = on }) }

// WithStopSignal asks the run to stop between supersteps once stop is
// closed: the superstep in flight runs to its end and commits, no other
// starts, and the run ends StatusAborted with an error matching ErrAborted
// and ErrStopRequested. The signal reaches subgraphs, at every depth: a
// child run stops at its own next superstep boundary, its checkpoint
// committed, and the parent's superstep, which cannot commit without the
// child's end, ends unwritten (its tasks' journals kept); the next run
// continues the child from its checkpoint. Cancelling the run's context,
// by contrast, stops the tasks in flight and voids their superstep. A later run of the thread
// continues from the last commit. Queues use it to cancel a running request
// in favour of a newer one (DoubleTextCancelReplace).
func WithStopSignal(stop <-chan struct{}) RunOption {
	return runOption(func(c *runConfig) { c.stop = stop })
}

// WithRunMeta hands every node of this run the map m through Ctx.Meta:
// data of the request that the state does not hold, such as a tenant or a
// caller's identity. It is not stored (WithThreadMeta is), so each run
// passes its own; the runtime never reads it.
func WithRunMeta(m map[string]any) RunOption { return runOption(func(c *runConfig) { c.meta = m }) }

// WithThreadMeta gives the run's thread metadata: string pairs stored with
// the thread (unlike WithRunMeta, which only this run's nodes see), which
// ListThreads filters on. The pairs are merged into what the thread holds:
// each key is set to its value, a key given "" is removed, other keys stay.
// They are recorded with the run's first checkpoint write, so a refused run
// changes nothing. It needs a thread whose checkpointer keeps thread records
// (a checkpoint.ThreadRecorder).
func WithThreadMeta(meta map[string]string) RunOption {
	meta = maps.Clone(meta)
	return runOption(func(c *runConfig) { c.threadMeta = meta })
}

// WithEventLog stores the run's events in its thread's event log (the
// checkpointer must be a checkpoint.EventStore), whether or not the run is
// streamed. Events are encoded as they happen and stored with the next
// checkpoint the run commits, in the same atomic write. A run that ends
// done stores its last events (state, checkpoint, run_end) with the
// checkpoint that ends it, which is then its last write: one commit, its
// thread record and the lease's release with it. The consumer gets those
// three once that write returned; the checkpoint event has no Duration
// (the write that stores it cannot time itself; an Observer's
// CheckpointCommit times it) and run_end's Duration stops before it. The
// events after the last checkpoint of a run that ends otherwise (paused,
// failed, aborted) are stored by the run's final write, with its thread
// record. Every write goes through the run's lease. Events whose
// checkpoint commit fails are kept for the next write (when the one that
// would end the run fails, the run ends with that error, and the events
// it carried are neither handed over nor stored); a final write that
// fails is logged (level Error, to the run's logger) and a reader sees
// the run end without run_end.
func WithEventLog() RunOption { return runOption(func(c *runConfig) { c.events = true }) }

// WithExpectedLatest makes a run or a resume start only when the thread's
// latest checkpoint is id ("": the thread has none yet). The check is made
// under the thread's lease, before anything is written, so a caller that
// looked at the thread before starting the run knows that no other run moved
// it in between: a job queue whose request may have run already under an
// expired claim, or a client retrying a resume whose reply it lost (the
// first attempt answered the questions and the thread went on; answers
// checked only by interrupt id would answer its next question, when it has
// the same id, as in a loop). Otherwise the run writes nothing and ends
// with an error matching ErrThreadMoved. A fork (Thread.Fork) starts from
// the checkpoint it names, not the latest, and refuses this option.
func WithExpectedLatest(id string) RunOption {
	return runOption(func(c *runConfig) { c.ifLatest = &id })
}
