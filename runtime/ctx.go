package runtime

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Ctx is the handle every node receives: a context.Context that is cancelled
// with the run, plus the run's and the task's identity, the caller's meta,
// event emission, and the task's journal (used by Step and Interrupt).
//
// A Ctx belongs to one task. Its own methods (the identity, Emit, and the
// Step, Interrupt and Sleep calls that take it) are valid only until the
// node returns. As a context.Context it stays valid after that: a goroutine
// the node handed it to, as net/http does with a request's context for a
// dial it finishes in the background, or an SDK that sends a cancellation
// notice from a goroutine of its own, sees it cancelled with the run, and
// the runtime does not reuse it for another task or run.
type Ctx struct {
	context.Context
	r *runInfo
	t *taskInfo
}

// runInfo is what every task of a run shares.
type runInfo struct {
	shape     *Shape
	runID     string
	threadID  string
	meta      map[string]any
	logger    *slog.Logger
	limit     int
	strict    bool
	cp        Checkpointer
	lease     checkpoint.Lease        // the run's lease on its thread, nil without a checkpointer
	stop      context.CancelCauseFunc // cancels the run, with a cause
	stopSig   <-chan struct{}         // WithStopSignal, which reaches the run's subgraphs
	obs       Observer                // nil: nobody observes the run
	stepIndex int
	runSteps  int
	parkAfter time.Duration // the longest in-process wait (WithParkAfter)
}

// leaseValid reports whether the run may still start an effect as far as
// its lease is concerned: past the lease's local deadline another process
// may hold the thread, so the run is stopped with a lost lease (checkpoint.LeaseDeadlinePassed).
func (r *runInfo) leaseValid() error {
	if r.lease == nil {
		return nil
	}
	if d := r.lease.Deadline(); !d.IsZero() && !time.Now().Before(d) {
		cause := &leaseLostError{err: &checkpoint.LeaseLostError{Thread: r.threadID, Fence: r.lease.Fence(), Reason: checkpoint.LeaseDeadlinePassed, Found: "deadline"}}
		r.stop(cause)
		return cause
	}
	return nil
}

// taskInfo is one task's own part of its Ctx.
type taskInfo struct {
	node    int
	key     string
	planID  string // "" without checkpointer
	runID   string
	step    int
	id      string // lazily planID + ":" + key
	state   any    // *S of the program
	emit    func(Event)
	preload []checkpoint.JournalEntry // journal recorded by earlier passes
	jr      *journal                  // built on first Step or Interrupt
	rec     *TaskRecord               // the task's record when the run is observed
	stepKey string                    // the journal key of the Step whose function runs ("" otherwise)

	halted     bool
	pending    []PendingInterrupt
	refused    *ResumeError // an answer this pass took back (ErrAnswerType)
	command    []Goto
	commandSet bool
}

// clean reports whether the optional fields of t (those a task sets only
// when it emits, journals, pauses or returns a command) are all zero, so
// that the executor can reuse t for the next task by rewriting its identity
// alone. A field added to taskInfo must be added here unless the executor
// writes it for every task.
func (t *taskInfo) clean() bool {
	return t.emit == nil && t.preload == nil && t.jr == nil && t.rec == nil && !t.halted && t.pending == nil && t.refused == nil &&
		t.command == nil && !t.commandSet && t.stepKey == ""
}

// ThreadID is the thread the run belongs to ("" for a run without thread).
func (c *Ctx) ThreadID() string { return c.r.threadID }

// RunID identifies this run; it changes across an interrupt and its resume.
func (c *Ctx) RunID() string { return c.r.runID }

// Graph is the static shape of the graph the task runs in: its name, its
// nodes in declaration order with their registry types, and its channels
// with their reducers. A node's position in Shape.Nodes (Shape.NodeIndex)
// is the index a Program's Run and Plan receive. Every task of every run
// of the graph gets the same *Shape; read it only.
func (c *Ctx) Graph() *Shape { return c.r.shape }

// Meta is the map the caller passed to this run with WithRunMeta, nil without
// it. Every task of the run gets the same map; read it only. It is not
// stored with the thread: a resumed run or a later turn sees the map its
// own call passed.
func (c *Ctx) Meta() map[string]any { return c.r.meta }

// StepIndex is the number of the running superstep in its thread: 1 for a
// thread's first superstep (the input is folded at 0), counting on across
// the thread's runs, so that a later turn goes on from where the last one
// stopped. A superstep that runs again — replayed by the Resume that
// answers its interrupt, or retried after it failed — keeps its number,
// so every pass of a task sees the same StepIndex. A run without a thread
// counts from 1.
func (c *Ctx) StepIndex() int { return c.r.stepIndex }

// RemainingSteps is how many more supersteps this run may start after the
// running one before its recursion limit (WithRecursionLimit, by default
// DefaultRecursionLimit) stops it: the limit minus one in the run's first
// superstep, 0 in the last one the limit allows. The limit counts the
// supersteps of this run only, so a Resume or a later turn starts again
// at the limit minus one. A node that sees 0 and still plans more work
// ends the run with a *RecursionLimitError once its superstep commits;
// the planned work stays on the thread for a later run.
func (c *Ctx) RemainingSteps() int {
	n := c.r.limit - c.r.runSteps
	if n < 0 {
		return 0
	}
	return n
}

// Node is the id of the node the task runs, or "" outside a task.
func (c *Ctx) Node() string {
	if c.t == nil {
		return ""
	}
	return c.r.shape.Nodes[c.t.node].ID
}

// TaskKey is the task's key within its superstep: the node id, or id#n for
// the n-th send to that node in the superstep (from 0, in task order). It
// is the name the task has in the events of the run (EventStepStart's
// Tasks) and the last part of its TaskID; "" outside a task.
func (c *Ctx) TaskKey() string {
	if c.t == nil {
		return ""
	}
	return c.t.key
}

// TaskID identifies the task within its thread: it derives from the
// checkpoint the task was planned from and survives interrupt and resume,
// and it names the task's journal.
func (c *Ctx) TaskID() string {
	if c.t == nil {
		return ""
	}
	return c.t.taskID()
}

func (t *taskInfo) taskID() string {
	if t.id == "" {
		if t.planID == "" { // a run without checkpointer: unique within the run
			t.id = t.runID + "/" + strconv.Itoa(t.step) + ":" + t.key
		} else {
			t.id = t.planID + ":" + t.key
		}
	}
	return t.id
}

// State is a pointer to the state the task runs on, the value the node
// received as its argument: the channels as of the last checkpoint, or for
// a send the send's input folded into an empty state. Its type is *Values
// for a graph built from a document or in Go, *State of the package for a
// generated graph (*S of the Program). It is for code that is handed the
// Ctx but not the state, such as helpers shared by several nodes. Read it
// only; it is nil outside a task.
func (c *Ctx) State() any {
	if c.t == nil {
		return nil
	}
	return c.t.state
}

// Logger is the logger for a node's own records: the run's WithLogger (or
// slog.Default() without it; a graph's WithLogger is for the runtime's
// records, not the nodes'), with the attributes thread and run, and node
// and task (the TaskKey) inside a task.
func (c *Ctx) Logger() *slog.Logger {
	l := c.r.logger
	if l == nil {
		l = slog.Default()
	}
	l = l.With("thread", c.r.threadID, "run", c.r.runID)
	if c.t != nil {
		l = l.With("node", c.Node(), "task", c.t.key)
	}
	return l
}

// Emit pushes a custom event with payload into the run's stream, live, while
// sibling tasks may still be running. Custom events are not journaled: a
// replayed task emits them again.
func (c *Ctx) Emit(payload any) {
	if c.t == nil || c.t.emit == nil {
		return
	}
	c.t.emit(Event{Type: EventCustom, Node: c.Node(), TaskID: c.t.taskID(), Payload: payload, Time: time.Now()})
}

// Token is the fixed shape of a streamed token: a custom event payload that
// the messages view of package runtime/stream selects.
type Token struct {
	Type string         `json:"type"` // always "token"
	Text string         `json:"text"`
	Meta map[string]any `json:"meta,omitempty"`
}

// EmitToken emits a token ({type: "token", text, meta}) as a custom event.
func (c *Ctx) EmitToken(text string, meta map[string]any) {
	c.Emit(Token{Type: "token", Text: text, Meta: meta})
}

// Goto is one destination of an untyped command: a node id (or spec.End) and,
// for a send, the input that becomes that task's state.
type Goto struct {
	Node  string
	Send  bool
	Input Values
}

// To is a goto target that plans node (or spec.End).
func To(node string) Goto { return Goto{Node: node} }

// SendTo is a goto target that plans one task of node whose state is input.
func SendTo(node string, input Values) Goto { return Goto{Node: node, Send: true, Input: input} }

// Command makes the running node return a command: its update reduces as
// usual, and the targets replace the node's static edges for this superstep
// (none routes nowhere). Calling it again replaces the targets. It is for
// untyped nodes; generated packages carry the goto in their Update.
func (c *Ctx) Command(targets ...Goto) {
	if c.t == nil {
		return
	}
	c.t.commandSet = true
	c.t.command = targets
}

// pendingCommand returns the targets recorded with Command by the running
// node, for adapters that run untyped nodes inside typed programs.
func (c *Ctx) pendingCommand() ([]Goto, bool) {
	if c.t == nil {
		return nil, false
	}
	return c.t.command, c.t.commandSet
}
