package runtime

import (
	"slices"
	"strconv"
)

// Planner collects the tasks of the next superstep. Programs add static
// targets with Node and dynamic fan-out with Send; the executor owns it.
type Planner[S any] struct {
	ids   []string // node ids by index, for task keys
	seen  []uint64 // epoch in which a node was planned statically
	sent  []uint64 // epoch in which sendN counts are valid
	sendN []int    // sends to a node in the current epoch
	epoch uint64
	tasks []plan[S]
	// held counts the targets handed to Node and Send, EndNode and repeats
	// included: a Plan that left it unchanged followed no edge.
	held int
}

// plan is one planned task: a node, its task key and, for a send, its input.
type plan[S any] struct {
	node  int
	key   string
	send  bool
	input S
}

func newPlanner[S any](ids []string) *Planner[S] {
	return &Planner[S]{
		ids:   ids,
		seen:  make([]uint64, len(ids)),
		sent:  make([]uint64, len(ids)),
		sendN: make([]int, len(ids)),
	}
}

// reset starts planning a new superstep, reusing dst's storage for the tasks.
func (p *Planner[S]) reset(dst []plan[S]) {
	p.epoch++
	p.tasks = dst[:0]
}

// Node plans node i from a static edge or goto. A node planned several times
// in one superstep runs once; EndNode is ignored.
func (p *Planner[S]) Node(i int) {
	p.held++
	if i < 0 || i >= len(p.ids) {
		return
	}
	if p.seen[i] == p.epoch {
		return
	}
	p.seen[i] = p.epoch
	p.tasks = append(p.tasks, plan[S]{node: i, key: p.ids[i]})
}

// Send plans one task of node i whose state is input. Every send is its own
// task, keyed id#n where n counts the sends to that node in this superstep.
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
	p.tasks = append(p.tasks, plan[S]{node: i, key: p.ids[i] + "#" + strconv.Itoa(n), send: true, input: input})
}

// Target plans one target of a goto or router.
func (p *Planner[S]) Target(t Target[S]) {
	if t.Send {
		p.Send(t.Node, t.Input)
		return
	}
	p.Node(t.Node)
}

// done orders the planned tasks by node declaration order, keeping the
// scheduling order among tasks of one node, and returns them.
func (p *Planner[S]) done() []plan[S] {
	if !slices.IsSortedFunc(p.tasks, cmpPlan[S]) {
		slices.SortStableFunc(p.tasks, cmpPlan[S])
	}
	return p.tasks
}

func cmpPlan[S any](a, b plan[S]) int { return a.node - b.node }
