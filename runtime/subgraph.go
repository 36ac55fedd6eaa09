package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// Subgraphs: a graph that runs another compiled graph as one of its nodes.
//
// A subgraph node's task runs the child graph to its end inside the task,
// with the child's own channels, supersteps and recursion limit. Everything
// the child stores lives in the parent task's journal, in the parent's
// thread, so it shares the task's identity (its task id, planID:key, which
// survives resumes, retries and crashes) and its fate:
//
//   - the child's latest checkpoint, under the journal key
//     "subgraph:checkpoint";
//   - the journal of each child task of the superstep in flight, entry by
//     entry, under `sub"<child task key>"/<entry key>` (a nested child's
//     entries nest the same way inside its parent's).
//
// Each child commit is one write of the parent task's journal, so the
// child's checkpoint and the journals it drops change together. A replayed
// parent task (resume, retry, a crash, a sibling's pause) continues the
// child from its latest checkpoint: nothing the child committed, and no
// step it journaled, runs again; a child that reached its end is not run
// again at all. The parent's superstep commit drops the task's journal, and
// with it everything of the child, in the same write that commits the
// task's update (the mapped output channels): the parent's channels change
// only when the child reached its end. A pause of the parent keeps the
// task's journal with the checkpoint (checkpoint.TaskRef.Journal), so a
// fork of the parent from it forks the child from the matching point.
//
// An interrupt inside the child pauses the parent task. It is listed on
// the parent's pending list with the id "<parent task key>/<child
// interrupt id>" (so "refund/approve:interrupt#0", and one more segment per
// level of nesting), the parent node, the parent task's id, and a key
// addressing the mirrored entry in the parent task's journal. Resume
// answers it by that id, as any interrupt: the runtime's rule that a
// resume answers every open interrupt or writes nothing applies across the
// whole tree, and each answer lands in its own child's entry.
//
// The child run takes its own recursion limit (spec.SubgraphConfig.Limit)
// and the parent run's context, strictness, meta, logger and stop signal.
// A stop ends the child at a superstep boundary with ErrStopRequested; the
// parent's superstep sees it (executor.go) and stops as at its own
// boundary, so the task's journal, which holds the child's checkpoint,
// stays for the next run.
//
// The parent's version pins its children (fingerprint.go): the
// compatibility rule (compat.go, childReason) reads a new child version as
// a changed config of the subgraph node, and AffectedThreads reports the
// path-qualified ids of the interrupts paused inside it.

// subgraphCheckpointKey is the journal key of the child's latest checkpoint
// in its parent task's journal.
const subgraphCheckpointKey = "subgraph:checkpoint"

// Child is a compiled graph another graph can run as a node
// (Builder.Subgraph, a document's "subgraph" node with WithSubgraphs).
// Every *Graph[S, U] is one, whatever its state type; no other type is.
type Child interface {
	// Shape is the child's static shape: its name, nodes and channels.
	Shape() *Shape
	// Fingerprint identifies the child's version (Graph.Fingerprint).
	Fingerprint() string
	runChild(ctx *Ctx, store *subStore, emit func(Event), limit int) (childOutcome, error)
	childNames() []string
	childMermaid() (mermaid.Graph, error)
}

// childOutcome is how one pass of a child run ended.
type childOutcome struct {
	status   Status
	channels []byte // the child's channels when it reached its end
	state    any    // instead of channels, its typed state (a run without a checkpointer from a typed seed)
	pending  []PendingInterrupt
	refused  *ResumeError
}

// WithSubgraphs hands FromSpec and Load the graphs a document's "subgraph"
// nodes may name, each under its Shape().Name. A document naming a graph
// not given here is refused when it is built.
func WithSubgraphs(children ...Child) Option {
	return graphOption(func(c *graphConfig) {
		if c.subgraphs == nil {
			c.subgraphs = map[string]Child{}
		}
		for _, ch := range children {
			if ch != nil {
				c.subgraphs[ch.Shape().Name] = ch
			}
		}
	})
}

// ErrSubgraph is matched (errors.Is) by the errors that refuse a subgraph
// node when its graph is built: an unknown child, a fingerprint pin the
// child does not match, a channel a map names that a graph does not
// declare, reducers whose meaning the mapping would change, and a graph
// that contains itself.
var ErrSubgraph = errors.New("the subgraph node cannot be built")

// SubgraphError is a child's failure inside a parent task: it names the
// path of subgraph nodes (outermost first) and wraps the child's error.
type SubgraphError struct {
	Path []string
	Err  error
}

func (e *SubgraphError) Error() string {
	return "subgraph " + strings.Join(e.Path, "/") + ": " + e.Err.Error()
}

func (e *SubgraphError) Unwrap() error { return e.Err }

// Subgraph adds node id running child, a compiled graph of any state type,
// to its end in each of id's tasks. in maps each child channel to the
// parent channel it starts from; out maps each parent channel to the child
// channel whose final value the task writes to it. Compile refuses a
// channel that either graph does not declare and a mapping whose reducers
// change its meaning (see CheckSubgraphs). ToSpec stores the node as a
// "subgraph" node whose config is a spec.SubgraphConfig.
//
// The one run option a subgraph takes is WithRecursionLimit: the child
// run's own limit (spec.SubgraphConfig.Limit), DefaultRecursionLimit when
// not given.
func (b *Builder) Subgraph(id string, child Child, in, out map[string]string, opts ...RunOption) *Builder {
	if child == nil {
		b.errs = append(b.errs, fmt.Sprintf("node %q: Subgraph needs a child graph, got nil", id))
		return b
	}
	limit, err := childLimit(opts)
	if err != nil {
		b.errs = append(b.errs, fmt.Sprintf("node %q: %v", id, err))
	}
	cfg := spec.SubgraphConfig{Graph: child.Shape().Name, Limit: limit, In: maps.Clone(in), Out: maps.Clone(out)}
	b.nodes = append(b.nodes, builderNode{id: id, typ: spec.SubgraphType, config: cfg, fn: subgraphFunc(id, child, cfg), sub: child})
	return b
}

// checkSubgraphs returns what is wrong with the builder's subgraph nodes.
func (b *Builder) checkSubgraphs() []string {
	var errs []string
	chans := map[string]spec.Reducer{}
	for _, c := range b.channels {
		red := c.reducer
		switch {
		case c.custom != nil:
			red = "custom"
		case red == "":
			red = spec.LastWrite
		}
		chans[c.name] = red
	}
	for _, n := range b.nodes {
		if n.sub == nil {
			continue
		}
		cfg := n.config.(spec.SubgraphConfig)
		for _, d := range spec.SubgraphMapping(b.name, chans, cfg.Graph, cfg.Fingerprint, cfg.In, cfg.Out, childView(n.sub)) {
			errs = append(errs, fmt.Sprintf("node %q: %s: %s", n.id, d.Path, d.Message))
		}
	}
	return errs
}

// childView is what the checks of spec need of a child.
func childView(c Child) spec.SubgraphChild {
	sh := c.Shape()
	v := spec.SubgraphChild{Name: sh.Name, Fingerprint: c.Fingerprint(), Channels: map[string]spec.Reducer{}, Contains: c.childNames()}
	for _, ch := range sh.Channels {
		v.Channels[ch.Name] = spec.Reducer(ch.Reducer)
	}
	return v
}

// CheckSubgraphs reports, placed in doc, every "subgraph" node whose
// child is not among children (by Shape().Name) or whose channel maps
// spec.SubgraphMapping refuses. FromSpec and Load run it (with the config
// decoded as strictly as a factory decodes one); a tool checking
// documents calls it beside spec.Decode.
func CheckSubgraphs(doc *spec.Graph, children ...Child) spec.Diagnostics {
	byName := map[string]Child{}
	for _, c := range children {
		if c != nil {
			byName[c.Shape().Name] = c
		}
	}
	return checkSubgraphDoc(doc, byName)
}

func checkSubgraphDoc(doc *spec.Graph, byName map[string]Child) spec.Diagnostics {
	views := make(map[string]spec.SubgraphChild, len(byName))
	for name, c := range byName {
		views[name] = childView(c)
	}
	var out spec.Diagnostics
	for i, n := range doc.Nodes {
		if n.Type != spec.SubgraphType {
			continue
		}
		var cfg spec.SubgraphConfig
		if err := DecodeConfig(n, &cfg); err != nil {
			path := spec.PathKey(spec.PathIndex("nodes", i), "config")
			out = append(out, spec.Diagnostic{Severity: spec.SeverityError, Pos: doc.Pos(path), Path: path, Message: "node " + strconv.Quote(n.ID) + ": " + err.Error(), Hint: "fix the stored config"})
		}
	}
	return append(out, spec.CheckSubgraphs(doc, views)...)
}

// specSubgraph adds a document's "subgraph" node n for FromSpec.
func (b *Builder) specSubgraph(n spec.Node, byName map[string]Child) error {
	var cfg spec.SubgraphConfig
	if err := DecodeConfig(n, &cfg); err != nil {
		return err
	}
	child, ok := byName[cfg.Graph]
	if !ok {
		return fmt.Errorf("graph %q is not registered; pass it with runtime.WithSubgraphs: %w", cfg.Graph, ErrSubgraph)
	}
	b.nodes = append(b.nodes, builderNode{id: n.ID, typ: spec.SubgraphType, config: cfg, fn: subgraphFunc(n.ID, child, cfg), sub: child})
	return nil
}

// childNames returns the names of the graphs g contains as subgraphs, at
// any depth.
func (g *Graph[S, U]) childNames() []string {
	if u, ok := any(g.p).(*untyped); ok && u.builder != nil {
		return u.builder.subgraphNames()
	}
	return nil
}

// childMermaid is g's diagram, for a parent that expands its subgraphs.
func (g *Graph[S, U]) childMermaid() (mermaid.Graph, error) { return mermaidGraph(g) }

// mermaidChildren adds to mg the diagrams of the builder's subgraph nodes'
// children (mermaid.Options.ExpandSubgraphs draws them).
func (b *Builder) mermaidChildren(mg *mermaid.Graph) error {
	for _, n := range b.nodes {
		if n.sub == nil {
			continue
		}
		cg, err := n.sub.childMermaid()
		if err != nil {
			return err
		}
		if mg.Subgraphs == nil {
			mg.Subgraphs = map[string]mermaid.Graph{}
		}
		mg.Subgraphs[n.id] = cg
	}
	return nil
}

// children returns the children of the builder's subgraph nodes, by name.
func (b *Builder) children() map[string]Child {
	var out map[string]Child
	for _, n := range b.nodes {
		if n.sub != nil {
			if out == nil {
				out = map[string]Child{}
			}
			out[n.sub.Shape().Name] = n.sub
		}
	}
	return out
}

// takeChildren keeps the children WithSubgraphs gave a program that runs
// its subgraph nodes itself (a generated package, whose nodes call
// RunSubgraph), so that its version pins them: each must be one its
// document's subgraph nodes name, at the version a node pins, if any.
func (g *Graph[S, U]) takeChildren(children map[string]Child) error {
	if len(children) == 0 {
		return nil
	}
	doc, err := g.p.Spec()
	if err != nil || doc == nil {
		return &SpecError{Msg: "runtime: WithSubgraphs: the program has no document naming its subgraphs", Err: ErrSubgraph}
	}
	named := map[string]bool{}
	for i, n := range doc.Nodes {
		if n.Type != spec.SubgraphType {
			continue
		}
		var cfg spec.SubgraphConfig
		if json.Unmarshal(n.Config, &cfg) != nil {
			continue
		}
		named[cfg.Graph] = true
		if c, ok := children[cfg.Graph]; ok && cfg.Fingerprint != "" && cfg.Fingerprint != c.Fingerprint() {
			return &SpecError{Msg: fmt.Sprintf("runtime: nodes[%d].config.fingerprint: node %q pins graph %q at %s, but the graph given is %s; pin the child's current fingerprint or give the pinned version", i, n.ID, cfg.Graph, cfg.Fingerprint, c.Fingerprint()), Err: ErrSubgraph}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(children)) {
		if !named[name] {
			return &SpecError{Msg: fmt.Sprintf("runtime: WithSubgraphs: graph %q has no subgraph node running graph %q; give only the children its document names", doc.Name, name), Err: ErrSubgraph}
		}
	}
	g.children = children
	return nil
}

// subgraphNames lists the names of the children of the subgraph nodes a
// builder holds, at any depth.
func (b *Builder) subgraphNames() []string {
	var out []string
	for _, n := range b.nodes {
		if n.sub != nil {
			out = append(out, n.sub.Shape().Name)
			out = append(out, n.sub.childNames()...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// childLimit reads the run options a subgraph takes: its child's
// recursion limit, 0 when none is given (the default).
func childLimit(opts []RunOption) (int, error) {
	limit := 0
	for _, o := range opts {
		switch o := o.(type) {
		case nil:
		case limitOption:
			if o < 1 {
				return 0, fmt.Errorf("the child's recursion limit must be at least 1, got WithRecursionLimit(%d); leave it out for the default: %w", int(o), ErrSubgraph)
			}
			limit = int(o)
		default:
			return 0, fmt.Errorf("a child run takes one run option, WithRecursionLimit; the others (stop signal, run meta, ...) come from the parent's run: %w", ErrSubgraph)
		}
	}
	return limit, nil
}

// subgraphFunc is the body of a subgraph node.
func subgraphFunc(id string, child Child, cfg spec.SubgraphConfig) NodeFunc {
	ins := slices.Sorted(maps.Keys(cfg.In))
	outs := slices.Sorted(maps.Keys(cfg.Out))
	return func(ctx *Ctx, state Values) (Values, error) {
		chans, _, err := runSubgraph(ctx, child, cfg.Limit, func() ([]byte, error) {
			seed := Values{}
			for _, cc := range ins {
				if v, ok := state[cfg.In[cc]]; ok {
					seed[cc] = v
				}
			}
			raw, err := json.Marshal(seed)
			if err != nil {
				return nil, fmt.Errorf("subgraph %q: encode the input of graph %q: %w", id, cfg.Graph, err)
			}
			return raw, nil
		}, nil)
		if err != nil {
			return nil, err
		}
		return subgraphOutput(chans, cfg, outs)
	}
}

// RunSubgraph runs child to its end inside the task of ctx, as a subgraph
// node does (see the package's manual, "Subgraphs"), starting from seed
// (its channels before its first superstep: build it with the child's
// State.With) unless the task already ran it, and returns the child's
// final state. It is what a node of a typed graph calls to run a typed
// child, where a mapping between channels of different Go types fails to
// compile:
//
//	out, err := runtime.RunSubgraph(ctx, refund, refundgraph.State{}.With(refundgraph.Update{Order: &s.Order}))
//	if err != nil {
//		return supportgraph.Update{}, err // a pause of the child too
//	}
//	return supportgraph.Update{Status: &out.Status}, nil
//
// A pause inside the child returns an error for which IsInterrupt is true;
// the node must return it. Call it once per task. The one run option it
// takes is WithRecursionLimit, the child run's own limit
// (DefaultRecursionLimit when not given); the stop signal and the
// cancellation of the parent's run reach the child.
func RunSubgraph[S, U any](ctx *Ctx, child *Graph[S, U], seed S, opts ...RunOption) (S, error) {
	var zero S
	limit, err := childLimit(opts)
	if err != nil {
		return zero, fmt.Errorf("runtime: RunSubgraph of graph %q: %w", child.shape.Name, err)
	}
	var typed any
	if _, untyped := any(seed).(Values); !untyped {
		// A typed seed skips the JSON round trip in a run without a
		// checkpointer; Values keep it, which gives every value its JSON
		// form as a stored seed would.
		typed = seed
	}
	chans, final, err := runSubgraph(ctx, child, limit, func() ([]byte, error) { return child.p.EncodeState(seed) }, typed)
	if err != nil {
		return zero, err
	}
	if st, ok := final.(S); ok {
		return st, nil // run without a checkpointer: no JSON either way
	}
	st, err := child.p.DecodeState(chans)
	if err != nil {
		return zero, fmt.Errorf("subgraph %q: decode the final state of graph %q: %w", ctx.t.key, child.shape.Name, err)
	}
	return st, nil
}

// runSubgraph runs child in the task of ctx and returns its final channels:
// from the checkpoint of an earlier pass when the child ended there, else
// from its latest checkpoint, or from the channels seed returns when it
// has none. A pause halts the task with the child's interrupts. limit is
// the child's recursion limit, 0 for the default. typed, when not nil, is
// the seed as the child's own state type: a run without a checkpointer
// starts from it and returns its final state as final instead of
// channels, so the typed path pays for no JSON.
func runSubgraph(ctx *Ctx, child Child, limit int, seed func() ([]byte, error), typed any) (channels []byte, final any, err error) {
	if ctx == nil || ctx.t == nil {
		return nil, nil, ErrNotInTask
	}
	j := ctx.t.j()
	markUsed(j)
	store := &subStore{parent: ctx, j: j}
	cp := store.latest()
	if cp != nil && len(cp.Next) == 0 && len(cp.Pending) == 0 {
		// The child reached its end on an earlier pass of this task.
		return cp.Channels, nil, nil
	}
	if cp != nil && len(cp.Pending) > 0 {
		// The child paused on an earlier pass of this task. When that
		// pass's process died before the parent committed its own pause,
		// the thread lists none of the child's interrupts, and a run of
		// the child would be refused (it waits on a person): raise its
		// open interrupts as this task's pause again. Those answered
		// since (the answer in this task's journal) resume the child.
		_, open, err := readPauses(ctx.Context, store, ctx.r.threadID, cp.Pending)
		if err != nil {
			return nil, nil, &SubgraphError{Path: []string{ctx.t.key}, Err: fmt.Errorf("read the journals of the child's interrupts %s: %w", idList(cp.Pending), err)}
		}
		if len(open) > 0 {
			return nil, nil, raiseChildPause(ctx, open, nil)
		}
	}
	if ctx.r.cp == nil && typed != nil {
		store.typed = typed
	} else if cp == nil {
		raw, err := seed()
		if err != nil {
			return nil, nil, err
		}
		store.seed = raw
	}
	var emit func(Event)
	if em := ctx.t.emit; em != nil {
		key := ctx.t.key
		emit = func(ev Event) {
			switch ev.Type {
			case EventRunStart, EventRunEnd, EventCheckpoint, EventInterrupt:
				// The parent's own events say these: the child's
				// checkpoints are no checkpoints of the thread, and
				// the parent's interrupt event lists the child's
				// pauses by their path-qualified ids.
				return
			}
			ev.NS = append([]string{key}, ev.NS...)
			em(ev)
		}
	}
	if limit <= 0 {
		limit = DefaultRecursionLimit
	}
	o, err := child.runChild(ctx, store, emit, limit)
	if err != nil {
		var se *SubgraphError
		if errors.As(err, &se) {
			se.Path = append([]string{ctx.t.key}, se.Path...)
			return nil, nil, se
		}
		return nil, nil, &SubgraphError{Path: []string{ctx.t.key}, Err: err}
	}
	if o.status == StatusInterrupted {
		return nil, nil, raiseChildPause(ctx, o.pending, o.refused)
	}
	return o.channels, o.state, nil
}

// raiseChildPause halts the task of ctx with the child's pending
// interrupts, under their path-qualified ids and keys in the task's
// journal; refused, when not nil, is the child's refusal of an answer.
func raiseChildPause(ctx *Ctx, pending []PendingInterrupt, refused *ResumeError) error {
	t := ctx.t
	for _, p := range pending {
		q := p
		q.ID = t.key + "/" + p.ID
		q.Key = subKey(p.TaskID, p.Key)
		q.Node = ctx.Node()
		q.TaskID = t.taskID()
		t.pending = append(t.pending, q)
	}
	t.halted = true
	if refused != nil {
		rf := *refused
		rf.Interrupt = t.key + "/" + rf.Interrupt
		t.refused = &rf
	}
	return &haltError{id: t.pending[0].ID}
}

// subgraphOutput is the parent update: each out channel's final value in
// the child, for the child channels its encoding holds.
func subgraphOutput(channels []byte, cfg spec.SubgraphConfig, outs []string) (Values, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(channels, &m); err != nil {
		return nil, fmt.Errorf("decode the channels of graph %q: %w", cfg.Graph, err)
	}
	up := Values{}
	for _, pc := range outs {
		raw, ok := m[cfg.Out[pc]]
		if !ok {
			continue
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("decode channel %q of graph %q: %w", cfg.Out[pc], cfg.Graph, err)
		}
		up[pc] = v
	}
	return up, nil
}

// zeroState is the state a run without a checkpointer starts from: the
// program's zero, or a subgraph's seed.
func (r *runner[S, U]) zeroState() S {
	if r.seed != nil {
		return *r.seed
	}
	return r.p.Zero()
}

// runChild runs g as the child of the task of ctx, from the child's latest
// checkpoint in store (its seed when it has none), to its end or a pause,
// within its own recursion limit. The parent run's stop signal stops it at
// its next superstep boundary, its checkpoint committed.
func (g *Graph[S, U]) runChild(ctx *Ctx, store *subStore, emit func(Event), limit int) (childOutcome, error) {
	cfg := runConfig{thread: ctx.r.threadID, cp: store, limit: limit, strict: ctx.r.strict, meta: ctx.r.meta, logger: ctx.r.logger, stop: ctx.r.stopSig}
	var yield func(Event, error) bool
	if emit != nil {
		yield = func(ev Event, err error) bool {
			if err == nil {
				emit(ev)
			}
			return true
		}
	}
	if ctx.r.cp == nil {
		// Nothing is durable without the parent's checkpointer: the child
		// runs from its seed without one, and pays for no checkpoint;
		// from a typed seed (RunSubgraph), for no JSON either.
		seed, typed := store.typed.(S)
		if !typed {
			var err error
			if seed, err = g.p.DecodeState(store.seed); err != nil {
				return childOutcome{}, fmt.Errorf("decode the input: %w", err)
			}
		}
		cfg.cp, cfg.thread = nil, ""
		r := newRunner(g, ctx.Context, cfg, yield)
		r.seed = &seed
		res := r.run(nil, nil)
		r.release()
		if typed && res.Status == StatusDone {
			return childOutcome{status: StatusDone, state: res.State}, nil
		}
		return g.outcome(res)
	}
	r := newRunner(g, ctx.Context, cfg, yield)
	res := r.run(nil, nil)
	r.release()
	return g.outcome(res)
}

// outcome is how the child run that ended with res ended.
func (g *Graph[S, U]) outcome(res Result[S]) (childOutcome, error) {
	switch res.Status {
	case StatusDone:
		chans, err := g.p.EncodeState(res.State)
		if err != nil {
			return childOutcome{}, fmt.Errorf("encode the final state: %w", err)
		}
		return childOutcome{status: StatusDone, channels: chans}, nil
	case StatusInterrupted:
		o := childOutcome{status: StatusInterrupted, pending: res.Pending}
		var rf *ResumeError
		if errors.As(res.Err, &rf) {
			o.refused = rf
		}
		return o, nil
	}
	if res.Err == nil {
		return childOutcome{}, fmt.Errorf("ended %s", res.Status)
	}
	return childOutcome{}, res.Err
}

// subKey is the key, in a parent task's journal, of entry key of the child
// task taskID.
func subKey(taskID, key string) string { return subPrefix(taskID) + key }

// subPrefix is the prefix of the entries of the child task taskID
// (planID:key) in its parent task's journal. It names the task by its key
// alone: the journals a child keeps are those of the one superstep in
// flight (each commit drops the ones it finishes), whose task keys are
// unique, and a key, unlike a plan id, reads the same in every run, so
// the ids and keys a pause lists are deterministic.
func subPrefix(taskID string) string {
	_, key, _ := strings.Cut(taskID, ":")
	return "sub" + strconv.Quote(key) + "/"
}

// markUsed marks every entry of j as asked for by this pass: a subgraph
// task's journal holds only the child's records, which strict replay must
// not count as skipped steps.
func markUsed(j *journal) {
	if j.used == nil {
		j.used = map[string]bool{}
	}
	for _, e := range j.entries {
		j.used[e.Key] = true
	}
	j.loaded = min(j.loaded, len(j.entries))
}

// subStore is the Checkpointer a child run writes through: it keeps the
// child's latest checkpoint and its tasks' journals in the parent task's
// journal, and writes that journal through the parent run's lease.
type subStore struct {
	mu     sync.Mutex
	parent *Ctx
	j      *journal
	seed   []byte // the child's channels before its first superstep
	typed  any    // or, in a run without a checkpointer, its typed state (RunSubgraph)

	// The parent task's journal is written by one write at a time, and
	// the changes made while one is in flight share the next (persist):
	// changed counts the changes to j, written is the count the last
	// write that succeeded covered, writing says a write is in flight,
	// and wrote (on mu) is signalled when it ends.
	changed, written uint64
	writing          bool
	wrote            *sync.Cond
}

var (
	_ Checkpointer             = (*subStore)(nil)
	_ checkpoint.DocumentStore = (*subStore)(nil)
)

// latest decodes the child's latest checkpoint; nil when it has none.
func (s *subStore) latest() *Checkpoint {
	e, ok := s.j.lookup(subgraphCheckpointKey)
	if !ok {
		return nil
	}
	var cp Checkpoint
	if json.Unmarshal(e.Value, &cp) != nil {
		return nil
	}
	return &cp
}

// Get returns the child's latest checkpoint, or a seed checkpoint holding
// its input when it has none (a run from it plans the child's entry).
func (s *subStore) Get(_ context.Context, thread, id string) (*Checkpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cp := s.latest()
	if cp == nil {
		cp = &Checkpoint{ID: "seed", PlanID: "seed", ThreadID: thread, Channels: s.seed, Created: time.Now().UTC()}
	}
	if id != "" && id != cp.ID {
		return nil, ErrNotFound
	}
	return cp, nil
}

// List returns the child's latest checkpoint, the only one kept.
func (s *subStore) List(ctx context.Context, thread string, _ int) ([]*Checkpoint, error) {
	cp, err := s.Get(ctx, thread, "")
	if err != nil {
		return nil, err
	}
	return []*Checkpoint{cp}, nil
}

// Put stores cp as the child's latest checkpoint and drops the journals of
// done.
func (s *subStore) Put(ctx context.Context, cp *Checkpoint, done []string) error {
	return s.commit(ctx, cp, done)
}

// PutJournal replaces the journal of a child task.
func (s *subStore) PutJournal(ctx context.Context, _, taskID string, entries []checkpoint.JournalEntry) error {
	return s.putJournal(ctx, taskID, entries)
}

// GetJournal returns the journal of a child task.
func (s *subStore) GetJournal(_ context.Context, _, taskID string) ([]checkpoint.JournalEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prefix := subPrefix(taskID)
	var out []checkpoint.JournalEntry
	for _, e := range s.j.entries {
		if k, ok := strings.CutPrefix(e.Key, prefix); ok {
			e.Key = k
			out = append(out, e)
		}
	}
	return out, nil
}

// DeleteThread is not a child's to do.
func (s *subStore) DeleteThread(context.Context, string) error {
	return errors.New("runtime: a subgraph cannot delete its parent's thread")
}

// Lease returns the child's write handle: the parent run's lease, through
// the parent task's journal.
func (s *subStore) Lease(context.Context, string, checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	return subLease{s}, nil
}

func (s *subStore) commit(_ context.Context, cp *Checkpoint, done []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cp != nil {
		raw, err := json.Marshal(cp)
		if err != nil {
			return err
		}
		s.set(checkpoint.JournalEntry{Key: subgraphCheckpointKey, Value: raw})
	}
	for _, id := range done {
		s.remove(subPrefix(id))
	}
	return s.persist()
}

func (s *subStore) putJournal(_ context.Context, taskID string, entries []checkpoint.JournalEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	prefix := subPrefix(taskID)
	s.remove(prefix)
	for _, e := range entries {
		e.Key = prefix + e.Key
		s.j.add(e)
	}
	markUsed(s.j)
	return s.persist()
}

// set replaces (or adds) the entry of e's key.
func (s *subStore) set(e checkpoint.JournalEntry) {
	if i, ok := s.j.index[e.Key]; ok {
		s.j.entries[i] = e
	} else {
		s.j.add(e)
	}
	markUsed(s.j)
}

// remove drops the entries whose keys start with prefix.
func (s *subStore) remove(prefix string) {
	j := s.j
	kept := j.entries[:0]
	for _, e := range j.entries {
		if !strings.HasPrefix(e.Key, prefix) {
			kept = append(kept, e)
		}
	}
	if len(kept) == len(j.entries) {
		return
	}
	clear(j.entries[len(kept):])
	j.entries = kept
	clear(j.index)
	for i, e := range j.entries {
		j.index[e.Key] = i
	}
	j.loaded = min(j.loaded, len(j.entries))
}

// persist makes the parent task's journal, as it stands, durable: it is
// called with s.mu held, after a change, and returns with s.mu held once a
// write that covers the change succeeded. The parallel tasks of a child
// superstep all write this one journal; rather than each waiting for the
// write before it and then making its own (a round trip and a flush each,
// one after another), the changes made while a write is in flight are
// written together by the next one. One write is in flight at a time, of
// a copy of the journal taken under s.mu, so the last write applied holds
// every change. A write that fails returns its error to the task that
// made it; the others it would have covered write again themselves.
func (s *subStore) persist() error {
	s.changed++
	mine := s.changed
	for s.written < mine {
		if s.writing {
			if s.wrote == nil {
				s.wrote = sync.NewCond(&s.mu)
			}
			s.wrote.Wait()
			continue
		}
		s.writing = true
		covers := s.changed
		entries := slices.Clone(s.j.entries)
		s.mu.Unlock()
		err := s.parent.persistEntries(entries)
		s.mu.Lock()
		s.writing = false
		if err == nil {
			s.written = max(s.written, covers)
		}
		if s.wrote != nil {
			s.wrote.Broadcast()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// subLease is a child run's lease: the parent run's.
type subLease struct{ s *subStore }

func (l subLease) Fence() string {
	if le := l.s.parent.r.lease; le != nil {
		return le.Fence()
	}
	return ""
}

func (l subLease) Deadline() time.Time {
	if le := l.s.parent.r.lease; le != nil {
		return le.Deadline()
	}
	return time.Time{}
}

func (l subLease) Commit(ctx context.Context, c checkpoint.Commit) error {
	return l.s.commit(ctx, c.Checkpoint, c.Done)
}

func (l subLease) PutJournal(ctx context.Context, taskID string, entries []checkpoint.JournalEntry) error {
	return l.s.putJournal(ctx, taskID, entries)
}

func (subLease) Release() {}

// PutDocument stores a child version's document in the parent's store
// when it keeps documents, so that a child paused on one version and
// resumed on another gets the whole compatibility rule.
func (s *subStore) PutDocument(ctx context.Context, fingerprint string, doc []byte) error {
	if ds, ok := s.parent.r.cp.(checkpoint.DocumentStore); ok {
		return ds.PutDocument(ctx, fingerprint, doc)
	}
	return nil
}

// GetDocument reads a child version's document from the parent's store.
func (s *subStore) GetDocument(ctx context.Context, fingerprint string) ([]byte, error) {
	if ds, ok := s.parent.r.cp.(checkpoint.DocumentStore); ok {
		return ds.GetDocument(ctx, fingerprint)
	}
	return nil, ErrNotFound
}

// SubgraphState is where a child run stands inside a task of its parent's
// thread: the path of task keys to it (outermost first) and its latest
// checkpoint (its channels as JSON, the tasks it runs next, and the
// interrupts it waits on, with ids relative to the child).
type SubgraphState struct {
	Path       []string
	Checkpoint *Checkpoint
}

// subgraphStates is Thread.Subgraphs: the children, at every depth, that the planned
// tasks of the thread's latest checkpoint hold: the children of a paused
// parent (whose pauses Pending lists with path-qualified ids) and those a
// crash or a failure left in flight. A thread whose tasks hold no child
// has none. It reads the store only.
func subgraphStates(ctx context.Context, cp Checkpointer, threadID string) ([]SubgraphState, error) {
	latest, err := cp.Get(ctx, threadID, "")
	if err != nil {
		return nil, err
	}
	var out []SubgraphState
	for _, t := range latest.Next {
		j, err := cp.GetJournal(ctx, threadID, latest.PlanID+":"+t.Key)
		if err != nil {
			return nil, err
		}
		if out, err = childStates(out, []string{t.Key}, j); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// childStates appends the child that the task journal entries hold, at
// path, and its own children.
func childStates(out []SubgraphState, path []string, entries []checkpoint.JournalEntry) ([]SubgraphState, error) {
	i := slices.IndexFunc(entries, func(e checkpoint.JournalEntry) bool { return e.Key == subgraphCheckpointKey })
	if i < 0 {
		return out, nil
	}
	var c Checkpoint
	if err := json.Unmarshal(entries[i].Value, &c); err != nil {
		return nil, fmt.Errorf("subgraph %s: decode its checkpoint: %w", strings.Join(path, "/"), err)
	}
	out = append(out, SubgraphState{Path: path, Checkpoint: &c})
	for _, t := range c.Next {
		prefix := subPrefix(c.PlanID + ":" + t.Key)
		var sub []checkpoint.JournalEntry
		for _, e := range entries {
			if k, ok := strings.CutPrefix(e.Key, prefix); ok {
				e.Key = k
				sub = append(sub, e)
			}
		}
		var err error
		if out, err = childStates(out, append(slices.Clip(path), t.Key), sub); err != nil {
			return nil, err
		}
	}
	return out, nil
}
