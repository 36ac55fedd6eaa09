package runtime

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/ilmek-go/ilmek/spec"
)

// Graph is a runnable graph: a Program (spec-built, code-built or generated)
// plus the executor and the graph's retry policies. It is safe for
// concurrent use; each Invoke or Stream is one run.
type Graph[S, U any] struct {
	p     program[S, U]
	shape *Shape
	ids   []string
	retry []*RetryPolicy // by node index; nil entries do not retry
	index map[string]int

	runners sync.Pool // idle *runner[S, U], whose buffers runs reuse

	routes   routes           // guarded nodes, to report one whose edges all failed
	warnings spec.Diagnostics // the document's warnings (FromSpec, Load)
	logger   *slog.Logger     // GraphLogger; nil: the runtime logs nothing

	version version    // Fingerprint and the stored form of the graph's document
	gobs    []Observer // GraphObserver
	obs     Observer   // what observes a run without observers or logger of its own
}

// RetryPolicy re-runs a failing node body within its superstep. Completed
// steps are not re-run: they replay from the task's journal.
type RetryPolicy struct {
	// MaxAttempts is the total number of attempts, at least 1.
	MaxAttempts int
	// Backoff is the wait before the second attempt; each later wait is
	// multiplied by Factor (1 when Factor is 0), capped at MaxBackoff if set.
	Backoff    time.Duration
	Factor     float64
	MaxBackoff time.Duration
	// RetryOn decides which errors are retried; nil retries every error.
	// Interrupts are never retried.
	RetryOn func(error) bool
}

func (p *RetryPolicy) wait(attempt int) time.Duration {
	d := float64(p.Backoff)
	f := p.Factor
	if f == 0 {
		f = 1
	}
	for i := 1; i < attempt; i++ {
		d *= f
	}
	if p.MaxBackoff > 0 && d > float64(p.MaxBackoff) {
		d = float64(p.MaxBackoff)
	}
	return time.Duration(d)
}

// Option configures a Graph when it is built.
type Option func(*graphConfig)

type graphConfig struct {
	byID      map[string]*RetryPolicy
	byType    map[string]*RetryPolicy
	logger    *slog.Logger
	strict    bool             // WarningsAsErrors
	warnings  spec.Diagnostics // set by FromSpec
	observers []Observer       // GraphObserver
	subgraphs map[string]Child // WithSubgraphs (subgraph.go)
}

// GraphLogger gives the graph a logger for what the runtime itself reports:
// for a graph built from a document, the document's warnings at Warn when
// the graph is built; for every run, what an operator needs (log.go lists
// the records, their levels and attribute names). A run's WithLogger
// replaces it for that run. Without either, the runtime's own records go
// nowhere. Ctx.Logger, the logger nodes write to, is set per run with
// WithLogger.
func GraphLogger(l *slog.Logger) Option { return func(c *graphConfig) { c.logger = l } }

// WarningsAsErrors makes FromSpec and Load refuse a document that has
// warnings (an unreachable node, a repeated edge, a node whose guarded edges
// may all fail), as CI should: the build fails with a *SpecError that lists
// them.
func WarningsAsErrors() Option { return func(c *graphConfig) { c.strict = true } }

// Warnings returns the warnings of the document the graph was built from by
// FromSpec or Load, with their positions; nil for other graphs (a generated
// package's document was checked when it was generated).
func (g *Graph[S, U]) Warnings() spec.Diagnostics { return g.warnings }

// RetryNode sets the retry policy of the node with the given id.
func RetryNode(id string, p RetryPolicy) Option {
	return func(c *graphConfig) {
		if c.byID == nil {
			c.byID = map[string]*RetryPolicy{}
		}
		c.byID[id] = &p
	}
}

// RetryType sets the retry policy of every node of a registry type. A policy
// set with RetryNode for a node wins over its type's.
func RetryType(typ string, p RetryPolicy) Option {
	return func(c *graphConfig) {
		if c.byType == nil {
			c.byType = map[string]*RetryPolicy{}
		}
		c.byType[typ] = &p
	}
}

// newGraph wraps a program in the executor: what FromSpec, Compile and,
// through runtime/genimpl, every generated package's New do.
func newGraph[S, U any](p program[S, U], opts ...Option) (*Graph[S, U], error) {
	g := new(Graph[S, U])
	if err := g.init(p, opts); err != nil {
		return nil, err
	}
	return g, nil
}

// init makes g, a zero Graph, the graph of p.
func (g *Graph[S, U]) init(p program[S, U], opts []Option) error {
	var cfg graphConfig
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.strict && len(cfg.warnings) > 0 {
		err := &spec.Error{Diagnostics: cfg.warnings}
		return &SpecError{Msg: "runtime: the document has warnings, and WarningsAsErrors refuses them:\n" + err.Error(), Err: err}
	}
	shape := p.Describe()
	*g = Graph[S, U]{p: p, shape: shape, ids: make([]string, len(shape.Nodes)), retry: make([]*RetryPolicy, len(shape.Nodes)), index: make(map[string]int, len(shape.Nodes)),
		warnings: cfg.warnings, logger: cfg.logger, gobs: cfg.observers}
	g.obs = g.runObserver(nil, nil)
	for i, n := range shape.Nodes {
		g.ids[i] = n.ID
		g.index[n.ID] = i
		if rp := cfg.byType[n.Type]; rp != nil && n.Type != "" {
			g.retry[i] = rp
		}
		if rp := cfg.byID[n.ID]; rp != nil {
			g.retry[i] = rp
		}
	}
	g.routes = newRoutes(p, g.ids)
	if err := sendKeyClash(g.ids, g.index); err != nil {
		return err
	}
	for id, rp := range cfg.byID {
		if _, ok := g.index[id]; !ok {
			return &SpecError{Msg: fmt.Sprintf("RetryNode(%q): the graph has no such node", id)}
		}
		if rp.MaxAttempts < 1 {
			return &SpecError{Msg: fmt.Sprintf("RetryNode(%q): MaxAttempts must be at least 1", id)}
		}
	}
	for typ, rp := range cfg.byType {
		if rp.MaxAttempts < 1 {
			return &SpecError{Msg: fmt.Sprintf("RetryType(%q): MaxAttempts must be at least 1", typ)}
		}
	}
	if g.logger != nil {
		for _, d := range g.warnings {
			g.logger.Warn("document warning", slog.String("graph", shape.Name), slog.String("position", d.Pos.String()),
				slog.String("path", d.Path), slog.String("message", d.Message), slog.String("hint", d.Hint))
		}
	}
	return nil
}

// build makes g, a new Graph, the graph of p, a program of its S and U
// that runtime/genimpl hands over as any (see link.go).
func (g *Graph[S, U]) build(p any, opts []Option) error {
	prog, ok := p.(program[S, U])
	if !ok {
		return &SpecError{Msg: fmt.Sprintf("runtime: a %T is not a program of %T's state and update; regenerate the package with go generate", p, g)}
	}
	return g.init(prog, opts)
}

// program returns the program the graph runs.
func (g *Graph[S, U]) program() any { return g.p }

// Shape returns the graph's static shape.
func (g *Graph[S, U]) Shape() *Shape { return g.shape }

// ToSpec returns the document the graph can be stored as, value-equal to the
// spec it was built from, or an error naming what a document cannot hold.
func ToSpec[S, U any](g *Graph[S, U]) (*spec.Graph, error) { return g.p.Spec() }

// RunOption configures one run.
type RunOption func(*runConfig)

type runConfig struct {
	thread string
	cp     Checkpointer
	fromID string
	limit  int
	strict bool
	meta   map[string]any
	logger *slog.Logger

	observers []Observer      // WithObserver
	stop      <-chan struct{} // StopAtBoundary

	threadMeta map[string]string // WithThreadMeta
	events     bool              // WithEventStore
	ifLatest   *string           // IfLatest
}

// DefaultRecursionLimit is the number of supersteps a run may take unless
// RecursionLimit says otherwise.
const DefaultRecursionLimit = 25

// Thread runs on the named thread (needs WithCheckpointer). The id must
// pass CheckThreadID, or the run is refused before the store is touched.
func Thread(id string) RunOption { return func(c *runConfig) { c.thread = id } }

// WithCheckpointer keeps the thread's checkpoints and journals in cp.
func WithCheckpointer(cp Checkpointer) RunOption { return func(c *runConfig) { c.cp = cp } }

// FromCheckpoint runs from the given checkpoint of the thread instead of its
// latest one; the new checkpoints fork a branch of the thread's tree.
func FromCheckpoint(id string) RunOption { return func(c *runConfig) { c.fromID = id } }

// IfLatest makes a run (not a resume) start only when the thread's latest
// checkpoint is id ("": the thread has none yet). The check is made under
// the thread's lease, before anything is written, so a caller that looked
// at the thread before starting the run knows that no other run moved it
// in between (a job queue whose request may have run already under an
// expired claim). Otherwise the run writes nothing and ends with an error
// matching ErrThreadMoved.
func IfLatest(id string) RunOption { return func(c *runConfig) { c.ifLatest = &id } }

// ErrThreadMoved is matched (errors.Is) by the error of a run started with
// IfLatest when the thread's latest checkpoint was another one.
var ErrThreadMoved = errors.New("the thread's latest checkpoint is not the one the run was started against (IfLatest); look at the thread again before running")

// RecursionLimit bounds the supersteps of this run (default 25). A limit of
// n allows n supersteps; 0 fails before the first unless nothing is planned.
func RecursionLimit(n int) RunOption { return func(c *runConfig) { c.limit = n } }

// Strict turns strict replay checking on or off (default on): a replayed task
// that does not ask for a journaled key fails with a NondeterminismError.
func Strict(on bool) RunOption { return func(c *runConfig) { c.strict = on } }

// StopAtBoundary asks the run to stop between supersteps once stop is
// closed: the superstep in flight runs to its end and commits, no other
// starts, and the run ends StatusAborted with an error matching ErrAborted
// and ErrStopRequested. Cancelling the run's context, by contrast, stops
// the tasks in flight and voids their superstep. A later run of the thread
// continues from the last commit. Queues use it to cancel a running
// request in favour of a newer one (runtime.DoubleTextCancelReplace).
func StopAtBoundary(stop <-chan struct{}) RunOption {
	return func(c *runConfig) { c.stop = stop }
}

// WithMeta hands every node of this run the map m through Ctx.Meta: data
// of the request that the state does not hold, such as a tenant or a
// caller's identity. It is not stored with the thread, so each run passes
// its own; the runtime never reads it.
func WithMeta(m map[string]any) RunOption { return func(c *runConfig) { c.meta = m } }

// WithLogger sets the logger behind Ctx.Logger (default slog.Default()) and
// the one the runtime writes this run's own records to, instead of the
// graph's (GraphLogger).
func WithLogger(l *slog.Logger) RunOption { return func(c *runConfig) { c.logger = l } }

func newRunConfig(opts []RunOption) (runConfig, error) {
	c := runConfig{limit: DefaultRecursionLimit, strict: true}
	for _, o := range opts {
		o(&c)
	}
	switch {
	case c.thread != "" && c.cp == nil:
		return c, &OptionError{Msg: fmt.Sprintf("runtime: Thread(%q) needs WithCheckpointer: a thread's state lives in a checkpointer (runtime.NewMemory() for one process)", c.thread)}
	case c.thread == "" && c.cp != nil:
		return c, &OptionError{Msg: "runtime: WithCheckpointer needs Thread(id): checkpoints belong to a thread"}
	case c.fromID != "" && c.cp == nil:
		return c, &OptionError{Msg: fmt.Sprintf("runtime: FromCheckpoint(%q) needs Thread and WithCheckpointer", c.fromID)}
	case c.limit < 0:
		return c, &OptionError{Msg: fmt.Sprintf("runtime: RecursionLimit(%d) must not be negative", c.limit)}
	}
	if c.thread != "" {
		if err := CheckThreadID(c.thread); err != nil {
			return c, err
		}
	}
	return c, checkThreadOptions(&c)
}

// Result is how a run ended.
type Result[S any] struct {
	Status Status
	// State is the state after the last committed superstep.
	State S
	// Err is why the run ended in StatusError or StatusAborted.
	Err error
	// Pending lists the open interrupts when Status is StatusInterrupted,
	// sorted by id.
	Pending []PendingInterrupt
	RunID   string
	// CheckpointID is the thread's latest checkpoint ("" without one).
	CheckpointID string
	// Supersteps is the number of supersteps this run executed.
	Supersteps int
}

// Answers is what a resume hands to the pending interrupts: one bare answer
// (only when exactly one is open) or answers keyed by interrupt id.
type Answers struct {
	bare  any
	keyed map[string]any
	isMap bool
}

// Answer is a bare answer to the one open interrupt of a thread.
func Answer(v any) Answers { return Answers{bare: v} }

// AnswersByID answers open interrupts by their ids; it must cover every open
// one and name no other.
func AnswersByID(m map[string]any) Answers { return Answers{keyed: m, isMap: true} }

// Invoke runs the graph to its end with input folded into the channels first
// and returns the result. err is non-nil when the run was refused or ended in
// error or aborted (then also Result.Err); an interrupted run is not an
// error, except when it paused again because the answer it was resumed with
// does not decode into the type the node asked for (a *ResumeError matching
// ErrAnswerType, also in Result.Err).
func (g *Graph[S, U]) Invoke(ctx context.Context, input U, opts ...RunOption) (Result[S], error) {
	return g.invoke(ctx, &input, nil, opts)
}

// Resume answers the thread's pending interrupts and continues its run.
func (g *Graph[S, U]) Resume(ctx context.Context, a Answers, opts ...RunOption) (Result[S], error) {
	return g.invoke(ctx, nil, &a, opts)
}

func (g *Graph[S, U]) invoke(ctx context.Context, in *U, a *Answers, opts []RunOption) (Result[S], error) {
	cfg, err := newRunConfig(opts)
	if err != nil {
		return Result[S]{}, err
	}
	r := newRunner(g, ctx, cfg, nil)
	res := r.run(in, a)
	r.release()
	if res.Status == StatusDone || (res.Status == StatusInterrupted && res.Err == nil) {
		return res, nil
	}
	return res, res.Err
}

// Stream runs the graph and yields its events live. A refused run yields one
// error and no event. Stopping the iteration aborts the run at the next
// superstep boundary (the last checkpoint stands).
func (g *Graph[S, U]) Stream(ctx context.Context, input U, opts ...RunOption) iter.Seq2[Event, error] {
	return g.stream(ctx, &input, nil, opts)
}

// StreamResume is Resume with the events streamed as Stream does.
func (g *Graph[S, U]) StreamResume(ctx context.Context, a Answers, opts ...RunOption) iter.Seq2[Event, error] {
	return g.stream(ctx, nil, &a, opts)
}

func (g *Graph[S, U]) stream(ctx context.Context, in *U, a *Answers, opts []RunOption) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		cfg, err := newRunConfig(opts)
		if err != nil {
			yield(Event{}, err)
			return
		}
		r := newRunner(g, ctx, cfg, yield)
		res := r.run(in, a)
		stopped := r.stopped
		r.release()
		if res.Status == "" && res.Err != nil && !stopped {
			yield(Event{}, res.Err)
		}
	}
}

// sendKeyClash refuses a node id of the form <other node id>#<digits>: it is
// the task key of a send to that other node, and the two tasks would share a
// journal and interrupt ids.
func sendKeyClash(ids []string, index map[string]int) error {
	for _, id := range ids {
		i := strings.LastIndexByte(id, '#')
		if i <= 0 || i == len(id)-1 {
			continue
		}
		if strings.Trim(id[i+1:], "0123456789") != "" {
			continue
		}
		if _, ok := index[id[:i]]; ok {
			return &SpecError{Msg: fmt.Sprintf("node id %q reads as the task key of a send to node %q: the two tasks would share a journal and interrupt ids; rename node %q (ids of the form <node>#<n> are reserved for sends)", id, id[:i], id)}
		}
	}
	return nil
}
