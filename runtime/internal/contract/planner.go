package contract

import (
	"slices"
	"strconv"
)

// Target is one destination of a command's goto or of a router: a node
// index (or EndNode), and for a send the input that becomes the task's
// state. Build it with To or Send.
type Target[S any] struct {
	node  int
	send  bool
	input S
}

// To is the target that plans node i (EndNode: nowhere).
func To[S any](i int) Target[S] { return Target[S]{node: i} }

// Send is the target that plans one task of node i whose state is input.
func Send[S any](i int, input S) Target[S] { return Target[S]{node: i, send: true, input: input} }

// Node is the target's node index (EndNode for spec.End).
func (t Target[S]) Node() int { return t.node }

// IsSend reports whether the target is a send.
func (t Target[S]) IsSend() bool { return t.send }

// Input is a send's input.
func (t Target[S]) Input() S { return t.input }

// Planner collects the tasks of the next superstep. Programs add static
// targets with Node and dynamic fan-out with Send; the executor owns it,
// through the functions of this package.
type Planner[S any] struct {
	ids   []string // node ids by index, for task keys
	seen  []uint64 // epoch in which a node was planned statically
	sent  []uint64 // epoch in which sendN counts are valid
	sendN []int    // sends to a node in the current epoch
	epoch uint64
	tasks []Task[S]
	// held counts the targets handed to Node and Send, EndNode and repeats
	// included: a Plan that left it unchanged followed no edge.
	held int
}

// Task is one planned task: a node, its task key and, for a send, its
// input.
type Task[S any] struct {
	Node  int
	Key   string
	Send  bool
	Input S
}

// NewPlanner returns the planner of a graph whose node ids are ids.
func NewPlanner[S any](ids []string) *Planner[S] {
	return &Planner[S]{
		ids:   ids,
		seen:  make([]uint64, len(ids)),
		sent:  make([]uint64, len(ids)),
		sendN: make([]int, len(ids)),
	}
}

// Reset starts planning a new superstep, reusing dst's storage for the
// tasks.
func Reset[S any](p *Planner[S], dst []Task[S]) {
	p.epoch++
	p.tasks = dst[:0]
}

// Tasks returns the tasks planned so far, unordered.
func Tasks[S any](p *Planner[S]) []Task[S] { return p.tasks }

// Drop forgets the planner's tasks (their storage belongs to a run).
func Drop[S any](p *Planner[S]) { p.tasks = nil }

// Held counts the targets handed to the planner so far.
func Held[S any](p *Planner[S]) int { return p.held }

// Node plans node i from a static edge or goto. A node planned several
// times in one superstep runs once; EndNode is ignored.
func (p *Planner[S]) Node(i int) {
	p.held++
	if i < 0 || i >= len(p.ids) {
		return
	}
	if p.seen[i] == p.epoch {
		return
	}
	p.seen[i] = p.epoch
	p.tasks = append(p.tasks, Task[S]{Node: i, Key: p.ids[i]})
}

// Send plans one task of node i whose state is input. Every send is its
// own task, keyed id#n where n counts the sends to that node in this
// superstep.
func (p *Planner[S]) Send(i int, input S) {
	p.held++
	if i < 0 || i >= len(p.ids) {
		return
	}
	if p.sent[i] != p.epoch {
		p.sent[i] = p.epoch
		p.sendN[i] = 0
	}
	n := p.sendN[i]
	p.sendN[i]++
	p.tasks = append(p.tasks, Task[S]{Node: i, Key: p.ids[i] + "#" + strconv.Itoa(n), Send: true, Input: input})
}

// Target plans one target of a goto or router.
func (p *Planner[S]) Target(t Target[S]) {
	if t.send {
		p.Send(t.node, t.input)
		return
	}
	p.Node(t.node)
}

// Done orders the planned tasks by node declaration order, keeping the
// scheduling order among tasks of one node, and returns them.
func Done[S any](p *Planner[S]) []Task[S] {
	if !slices.IsSortedFunc(p.tasks, cmpTask[S]) {
		slices.SortStableFunc(p.tasks, cmpTask[S])
	}
	return p.tasks
}

func cmpTask[S any](a, b Task[S]) int { return a.Node - b.Node }
