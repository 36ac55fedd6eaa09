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
	logger   *slog.Logger     // WithLogger; nil: the runtime logs nothing

	version version      // Fingerprint and the stored form of the graph's document
	gobs    []Observer   // WithObserver
	obs     Observer     // what observes a run without observers or logger of its own
	timers  timerOptions // WithParkAfter given to the graph
	durable Durability   // WithDurability given to the graph

	children map[string]Child // WithSubgraphs given to a generated program: the children its version pins

	states stateCache[S] // the last state of threads this graph ran (statecache.go)
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

type graphConfig struct {
	byID       map[string]*RetryPolicy
	byType     map[string]*RetryPolicy
	logger     *slog.Logger
	strict     bool             // WithWarningsAsErrors
	warnings   spec.Diagnostics // set by FromSpec
	observers  []Observer       // WithObserver
	timers     timerOptions     // WithParkAfter
	durability Durability       // WithDurability
	subgraphs  map[string]Child // WithSubgraphs (subgraph.go)
}

// Warnings returns the warnings of the document the graph was built from by
// FromSpec or Load, with their positions; nil for other graphs (a generated
// package's document was checked when it was generated).
func (g *Graph[S, U]) Warnings() spec.Diagnostics { return g.warnings }

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
		if o != nil {
			o.applyGraph(&cfg)
		}
	}
	if err := checkDurability(cfg.durability); err != nil {
		return err
	}
	if cfg.strict && len(cfg.warnings) > 0 {
		err := &spec.Error{Diagnostics: cfg.warnings}
		return &SpecError{Msg: "runtime: the document has warnings, and WithWarningsAsErrors refuses them:\n" + err.Error(), Err: err}
	}
	shape := p.Describe()
	*g = Graph[S, U]{p: p, shape: shape, ids: make([]string, len(shape.Nodes)), retry: make([]*RetryPolicy, len(shape.Nodes)), index: make(map[string]int, len(shape.Nodes)),
		warnings: cfg.warnings, logger: cfg.logger, gobs: cfg.observers, timers: cfg.timers, durable: cfg.durability}
	if u, ok := any(p).(*untyped); !ok || u.builder == nil {
		if err := g.takeChildren(cfg.subgraphs); err != nil {
			return err
		}
	}
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
			return &SpecError{Msg: fmt.Sprintf("WithNodeRetry(%q): the graph has no such node", id)}
		}
		if rp.MaxAttempts < 1 {
			return &SpecError{Msg: fmt.Sprintf("WithNodeRetry(%q): MaxAttempts must be at least 1", id)}
		}
	}
	for typ, rp := range cfg.byType {
		if rp.MaxAttempts < 1 {
			return &SpecError{Msg: fmt.Sprintf("WithTypeRetry(%q): MaxAttempts must be at least 1", typ)}
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

// runConfig is one run's settings: its thread (set by a Thread handle)
// and its RunOptions.
type runConfig struct {
	thread string       // Thread: the thread's id
	cp     Checkpointer // Thread: where the thread lives
	fromID string       // Thread.Fork: the checkpoint the run starts from
	limit  int          // WithRecursionLimit
	strict bool         // WithStrictReplay
	meta   map[string]any
	logger *slog.Logger

	observers []Observer      // WithObserver
	stop      <-chan struct{} // WithStopSignal

	threadMeta map[string]string // WithThreadMeta
	events     bool              // WithEventLog
	ifLatest   *string           // WithExpectedLatest
	timers     timerOptions      // WithParkAfter
	durability Durability        // WithDurability; 0: the graph's
	keepFirst  bool              // queuehook.KeepFirst: the first checkpoint waits for the next write
	runID      string            // queuehook.RunID: the run's id, made before the run (else newID)
}

// DefaultRecursionLimit is the number of supersteps a run may take unless
// WithRecursionLimit says otherwise.
const DefaultRecursionLimit = 25

// ErrThreadMoved is matched (errors.Is) by the error of a run or a resume
// started with WithExpectedLatest when the thread's latest checkpoint was
// another one.
var ErrThreadMoved = errors.New("the thread's latest checkpoint is not the one the run was started against (WithExpectedLatest); look at the thread again before running")

// newRunConfig makes the settings of a run of thread t (nil: a run
// without a thread) from opts, or refuses them.
func newRunConfig[S, U any](t *Thread[S, U], opts []RunOption) (runConfig, error) {
	c := runConfig{limit: DefaultRecursionLimit, strict: true}
	if t != nil {
		if err := t.check(); err != nil {
			return c, err
		}
		c.thread, c.cp, c.fromID = t.id, t.cp, t.from
	}
	for _, o := range opts {
		if o != nil {
			o.applyRun(&c)
		}
	}
	if c.limit < 0 {
		return c, &OptionError{Msg: fmt.Sprintf("runtime: WithRecursionLimit(%d) must not be negative", c.limit)}
	}
	if err := checkDurability(c.durability); err != nil {
		return c, err
	}
	if c.cp == nil && (c.threadMeta != nil || c.events || c.ifLatest != nil) {
		return c, &OptionError{Msg: "runtime: WithThreadMeta, WithEventLog and WithExpectedLatest apply to a thread's run; run through g.Thread(store, id)"}
	}
	if c.fromID != "" && c.ifLatest != nil {
		return c, &OptionError{Msg: "runtime: WithExpectedLatest does not apply to a fork, which starts from the checkpoint it names (Thread.Fork), not the latest; leave the option out"}
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
	// and the timers too when it is StatusParked, sorted by id.
	Pending []PendingInterrupt
	RunID   string
	// CheckpointID is the thread's latest checkpoint ("" without one).
	CheckpointID string
	// Supersteps is the number of supersteps this run executed.
	Supersteps int
	// WakeAt is when the thread is to be woken (the earliest timer or
	// interrupt deadline of Pending; see Thread.Wake); zero when nothing
	// but an answer continues it.
	WakeAt time.Time
}

// Answers is what a resume hands to the pending interrupts: one bare answer
// (only when exactly one is open) or answers keyed by interrupt id.
type Answers struct {
	bare  any
	keyed map[string]any
	isMap bool
	wake  bool // Thread.Wake: no answers, a due timer continues the thread
}

// Answer is a bare answer to the one open interrupt of a thread.
func Answer(v any) Answers { return Answers{bare: v} }

// AnswersByID answers open interrupts by their ids; it must cover every open
// one and name no other.
func AnswersByID(m map[string]any) Answers { return Answers{keyed: m, isMap: true} }

// Invoke runs the graph to its end with input folded into the channels first
// and returns the result, keeping nothing: a run that must survive its
// process, pause for a person or be looked at later runs on a thread
// (Graph.Thread). err is non-nil when the run was refused or ended in error
// or aborted (then also Result.Err). A run without a thread that reaches an
// interrupt ends StatusInterrupted with nothing to resume.
func (g *Graph[S, U]) Invoke(ctx context.Context, input U, opts ...RunOption) (Result[S], error) {
	return g.invoke(ctx, nil, &input, nil, opts)
}

func (g *Graph[S, U]) invoke(ctx context.Context, t *Thread[S, U], in *U, a *Answers, opts []RunOption) (Result[S], error) {
	cfg, err := newRunConfig(t, opts)
	if err != nil {
		return Result[S]{}, err
	}
	r := newRunner(g, ctx, cfg, nil)
	res := r.run(in, a)
	r.release()
	if res.Status == StatusDone || ((res.Status == StatusInterrupted || res.Status == StatusParked) && res.Err == nil) {
		return res, nil
	}
	return res, res.Err
}

// Stream runs the graph without a thread, as Invoke does, and yields its
// events live. A refused run yields one error and no event. Stopping the
// iteration aborts the run at the next superstep boundary.
func (g *Graph[S, U]) Stream(ctx context.Context, input U, opts ...RunOption) iter.Seq2[Event, error] {
	return g.stream(ctx, nil, &input, nil, opts)
}

func (g *Graph[S, U]) stream(ctx context.Context, t *Thread[S, U], in *U, a *Answers, opts []RunOption) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		cfg, err := newRunConfig(t, opts)
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
