package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// AffectedThread is a thread that a change from one graph version to
// another touches: it waits on, or has work planned in, a node the change
// touches, or holds a channel it touches.
type AffectedThread struct {
	ThreadID string
	// CheckpointID is the thread's latest checkpoint, written by the old
	// version.
	CheckpointID string
	// Status is the thread's status (checkpoint.ThreadStatus) as its store
	// shows it: a run going on is not seen here, so never running.
	Status Status
	// Nodes are the planned or pending nodes of the checkpoint that the
	// change touches (removed, retyped, reconfigured, their goto list or
	// an edge or guard leaving them changed), in checkpoint order.
	Nodes []string
	// Pending are the ids of the interrupts the thread waits on in Nodes,
	// sorted. Inside a subgraph node an id is path-qualified
	// ("refund/approve:interrupt#0"), so it tells which child, and which
	// node of it, the thread waits in.
	Pending []string
	// Channels are the channels the checkpoint holds that the change
	// removes or gives another reducer, sorted.
	Channels []string
	// Incompatible, when not nil, is why the thread cannot continue on
	// the new version (the version rule, Compatible): run it on its own
	// version (Versions) or move it (Migrate). Nil: it continues on the
	// new version, which may take it elsewhere than the old one would.
	Incompatible *IncompatibleError
}

// AffectedThreads reports, in one call, the threads a change from version
// from to version to touches: every thread of cp (which must be a
// checkpoint.ThreadLister) whose latest checkpoint was written by from (its
// fingerprint) and has work planned or an interrupt pending, and that
// waits in or is planned for a node the change touches, holds a channel
// it touches, or cannot continue on to at all. Threads written by other
// versions, finished threads and untouched ones are left out. It reads
// each candidate thread's latest checkpoint; run it before deploying a
// version, as a report (it changes nothing).
//
// What "touches" means is read off spec.Compare when both versions are
// documents; for a code-built version without one only the version rule
// (Compatible) is applied. A version's stored form pins the children its
// subgraph nodes run (see Graph.Fingerprint), so a new version of a child
// touches the subgraph node that runs it, like a changed config: a thread
// paused inside the child is reported, with the path-qualified ids of its
// pending interrupts.
func AffectedThreads(ctx context.Context, cp Checkpointer, from, to Version) ([]AffectedThread, error) {
	lister, ok := cp.(checkpoint.ThreadLister)
	if !ok {
		return nil, fmt.Errorf("runtime: AffectedThreads: the checkpointer %T cannot list threads; use one that implements ThreadLister (Memory, runtime/sqlite, runtime/postgres)", cp)
	}
	fromFP, oldDoc := from.versionDocument()
	_, newDoc := to.versionDocument()
	nodes, channels := touched(oldDoc, newDoc)
	var out []AffectedThread
	q := checkpoint.ThreadQuery{Limit: checkpoint.MaxThreadLimit}
	for {
		page, err := lister.ListThreads(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("runtime: AffectedThreads: list threads: %w", err)
		}
		for _, t := range page.Threads {
			a, err := affected(ctx, cp, t, fromFP, oldDoc, newDoc, nodes, channels)
			if err != nil {
				return nil, err
			}
			if a != nil {
				out = append(out, *a)
			}
		}
		if page.Next == "" {
			return out, nil
		}
		q.Cursor = page.Next
	}
}

// affected returns what the change does to thread t, or nil.
func affected(ctx context.Context, cp Checkpointer, t checkpoint.ThreadInfo, fromFP string, oldDoc, newDoc []byte, nodes, channels map[string]bool) (*AffectedThread, error) {
	latest, err := cp.Get(ctx, t.ID, "")
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, nil // a thread with metadata only
	case err != nil:
		return nil, fmt.Errorf("runtime: AffectedThreads: read thread %q: %w", t.ID, err)
	}
	if latest.Fingerprint != fromFP || (len(latest.Next) == 0 && len(latest.Pending) == 0) {
		return nil, nil
	}
	open, err := OpenInterrupts(ctx, cp, latest)
	if err != nil {
		return nil, fmt.Errorf("runtime: AffectedThreads: read the interrupts of thread %q: %w", t.ID, err)
	}
	status := checkpoint.ThreadStatus(checkpoint.ThreadFacts{Checkpoint: true, Next: len(latest.Next), Created: latest.Created,
		Open: open, Outcome: t.Outcome})
	a := &AffectedThread{ThreadID: t.ID, CheckpointID: latest.ID, Status: status}
	seen := map[string]bool{}
	for _, n := range slices.Concat(taskNodes(latest.Next), pendingNodes(latest.Pending)) {
		if nodes[n] && !seen[n] {
			seen[n] = true
			a.Nodes = append(a.Nodes, n)
		}
	}
	for _, p := range latest.Pending {
		if nodes[p.Node] {
			a.Pending = append(a.Pending, p.ID)
		}
	}
	slices.Sort(a.Pending)
	if len(channels) > 0 {
		for name := range heldChannels(latest.Channels) {
			if channels[name] {
				a.Channels = append(a.Channels, name)
			}
		}
		slices.Sort(a.Channels)
	}
	if err := Compatible(latest, oldDoc, newDoc); err != nil {
		var ie *IncompatibleError
		if !errors.As(err, &ie) {
			return nil, fmt.Errorf("runtime: AffectedThreads: thread %q: %w", t.ID, err)
		}
		ie.ThreadID = t.ID
		a.Incompatible = ie
	}
	if len(a.Nodes) == 0 && len(a.Channels) == 0 && a.Incompatible == nil {
		return nil, nil
	}
	return a, nil
}

// touched returns the nodes and channels a change between two stored forms
// touches, by spec.Compare; nothing when either is not a document.
func touched(oldDoc, newDoc []byte) (nodes, channels map[string]bool) {
	nodes, channels = map[string]bool{}, map[string]bool{}
	og, od := spec.Decode("old", oldDoc)
	ng, nd := spec.Decode("new", newDoc)
	if od.HasErrors() || nd.HasErrors() || og == nil || ng == nil {
		return nodes, channels
	}
	for _, c := range spec.Compare(og, ng) {
		switch c.Kind {
		case spec.NodeRemoved, spec.NodeTypeChanged, spec.NodeConfigChanged, spec.NodeGotoChanged:
			nodes[c.Subject] = true
		case spec.EdgeAdded, spec.EdgeRemoved, spec.PredicateChanged:
			if from, _, ok := strings.Cut(c.Subject, " -> "); ok {
				nodes[from] = true
			}
		case spec.ChannelRemoved, spec.ReducerChanged:
			channels[c.Subject] = true
		}
	}
	return nodes, channels
}

func taskNodes(ts []checkpoint.TaskRef) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Node
	}
	return out
}

func pendingNodes(ps []PendingInterrupt) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Node
	}
	return out
}

// heldChannels returns the names of the channels an encoded state holds.
func heldChannels(state []byte) map[string]bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(state, &m) != nil {
		return nil
	}
	out := make(map[string]bool, len(m))
	for name := range m {
		out[name] = true
	}
	return out
}
