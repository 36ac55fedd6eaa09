package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// ErrIncompatible matches (with errors.Is) every *IncompatibleError.
var ErrIncompatible = errors.New("the thread's checkpoint is incompatible with this graph version")

// ReasonKind names why a checkpoint cannot run on a graph version.
type ReasonKind string

// The reasons of an IncompatibleError.
const (
	ReasonNodeMissing    ReasonKind = "node-missing"
	ReasonNodeType       ReasonKind = "node-type-changed"
	ReasonNodeConfig     ReasonKind = "node-config-changed"
	ReasonChannelMissing ReasonKind = "channel-missing"
	ReasonReducer        ReasonKind = "reducer-changed"
)

// IncompatibleReason is one thing a checkpoint holds that the new version
// cannot take, and what to do about it.
type IncompatibleReason struct {
	Kind ReasonKind
	// Subject is the node id or channel name.
	Subject string
	Msg     string
	Fix     string
}

// IncompatibleError refuses a run or resume of a thread whose latest
// checkpoint was written by another version of the graph, when the
// compatibility rule (see Compatible) does not hold. Nothing ran and nothing
// was written.
type IncompatibleError struct {
	ThreadID     string
	CheckpointID string
	// From is the fingerprint the checkpoint records, To the graph's.
	From, To string
	Reasons  []IncompatibleReason
}

// Error names the thread, the checkpoint and both versions, then each
// reason with its fix, one a line.
func (e *IncompatibleError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "thread %q: checkpoint %s was written by graph version %s and cannot continue on version %s:", e.ThreadID, e.CheckpointID, e.From, e.To)
	for _, r := range e.Reasons {
		fmt.Fprintf(&b, "\n  %s %q: %s; %s", r.Kind, r.Subject, r.Msg, r.Fix)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrIncompatible) hold.
func (e *IncompatibleError) Is(target error) bool { return target == ErrIncompatible }

// docView is what the compatibility rule reads of a stored form: a
// document's fingerprint form or a shape form.
type docView struct {
	Channels map[string]struct {
		Reducer string `json:"reducer"`
	} `json:"channels"`
	Nodes []struct {
		ID     string          `json:"id"`
		Type   string          `json:"type"`
		Config json.RawMessage `json:"config"`
	} `json:"nodes"`
}

func parseView(doc []byte) (*docView, error) {
	var v docView
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

func (v *docView) node(id string) (typ string, config json.RawMessage, ok bool) {
	for _, n := range v.Nodes {
		if n.ID == id {
			return n.Type, n.Config, true
		}
	}
	return "", nil, false
}

func (v *docView) reducer(name string) (string, bool) {
	c, ok := v.Channels[name]
	if !ok {
		return "", false
	}
	if c.Reducer == "" {
		return string(spec.LastWrite), true
	}
	return c.Reducer, true
}

// Compatible applies the compatibility rule to a checkpoint written by the
// graph version whose stored form is oldDoc (nil when the backend does not
// know it) and the version whose stored form is newDoc. It returns nil when
// the thread can continue on the new version, and an *IncompatibleError
// listing every reason otherwise.
//
// The rule. A checkpoint can continue on a new version when
//
//  1. every node the checkpoint has a task planned for (Checkpoint.Next) or
//     an interrupt pending on (Checkpoint.Pending) exists in the new
//     version with the same type and the same config (compared as JSON
//     values): the task re-runs the node and replays its journal, which
//     the old implementation and configuration wrote. A subgraph node's
//     config counts its child's version (the pin of the stored form, see
//     Graph.Fingerprint): the task continues the child from the checkpoint
//     the old child wrote, so a new child version is a changed config. A
//     form that pins no child says nothing of its version; the child's own
//     rule then applies when the task continues it;
//  2. every channel the checkpoint holds (a member of Checkpoint.Channels or
//     of a planned send's input) exists in the new version with the same
//     reducer: the held value was folded by it, and later writes fold into
//     it.
//
// Nothing else counts: added nodes and channels, edges, guards, the node
// order, and nodes and channels the checkpoint does not hold may all
// change; they decide only what happens after the work the checkpoint
// holds. When oldDoc is nil the rule checks that the nodes and channels
// exist, and cannot compare types, configs and reducers.
func Compatible(cp *Checkpoint, oldDoc, newDoc []byte) error {
	nv, err := parseView(newDoc)
	if err != nil {
		return fmt.Errorf("runtime: Compatible: the new document is not a stored form: %w", err)
	}
	var ov *docView
	if oldDoc != nil {
		if ov, err = parseView(oldDoc); err != nil {
			return fmt.Errorf("runtime: Compatible: the old document is not a stored form: %w", err)
		}
	}
	var reasons []IncompatibleReason
	seen := map[string]bool{}
	checkNode := func(id string) {
		if seen["n\x00"+id] {
			return
		}
		seen["n\x00"+id] = true
		typ, cfg, ok := nv.node(id)
		if !ok {
			reasons = append(reasons, IncompatibleReason{Kind: ReasonNodeMissing, Subject: id,
				Msg: "the thread has a task of this node planned or an interrupt of it pending, and the new version has no such node",
				Fix: "keep the node until paused threads have passed it, run the thread on its own version (Versions), or migrate it (Migrate)"})
			return
		}
		if ov == nil {
			return
		}
		otyp, ocfg, ok := ov.node(id)
		if !ok {
			return
		}
		if otyp != typ {
			reasons = append(reasons, IncompatibleReason{Kind: ReasonNodeType, Subject: id,
				Msg: fmt.Sprintf("a planned task of the node was started as type %s, and the new version has type %s", otyp, typ),
				Fix: "give the new implementation a new node id, run the thread on its own version (Versions), or migrate it (Migrate)"})
		}
		if typ == spec.SubgraphType && otyp == typ {
			if r, ok := childReason(cp, id, ocfg, cfg); ok {
				reasons = append(reasons, r...)
				return
			}
		}
		if !rawEqual(ocfg, cfg) {
			reasons = append(reasons, IncompatibleReason{Kind: ReasonNodeConfig, Subject: id,
				Msg: "a planned task of the node was started with another config, whose journal it would replay",
				Fix: "change the config once no thread is paused in the node, run the thread on its own version (Versions), or migrate it (Migrate)"})
		}
	}
	for _, t := range cp.Next {
		checkNode(t.Node)
	}
	for _, p := range cp.Pending {
		checkNode(p.Node)
	}
	checkChannels := func(state json.RawMessage) {
		var m map[string]json.RawMessage
		if json.Unmarshal(state, &m) != nil {
			return
		}
		for _, name := range sortedNames(m) {
			if seen["c\x00"+name] {
				continue
			}
			seen["c\x00"+name] = true
			red, ok := nv.reducer(name)
			if !ok {
				reasons = append(reasons, IncompatibleReason{Kind: ReasonChannelMissing, Subject: name,
					Msg: "the checkpoint holds a value of this channel, and the new version does not declare it",
					Fix: "keep the channel (a rename is a new channel), run the thread on its own version (Versions), or migrate its state (Migrate)"})
				continue
			}
			if ov == nil {
				continue
			}
			if ored, ok := ov.reducer(name); ok && ored != red {
				reasons = append(reasons, IncompatibleReason{Kind: ReasonReducer, Subject: name,
					Msg: fmt.Sprintf("the held value was folded with %s, and the new version folds with %s", ored, red),
					Fix: "use a new channel for the new reducer, run the thread on its own version (Versions), or migrate its state (Migrate)"})
			}
		}
	}
	checkChannels(cp.Channels)
	for _, t := range cp.Next {
		if t.Input != nil {
			checkChannels(t.Input)
		}
	}
	if len(reasons) == 0 {
		return nil
	}
	return &IncompatibleError{ThreadID: cp.ThreadID, CheckpointID: cp.ID, From: cp.Fingerprint, Reasons: reasons}
}

// childReason applies the rule to subgraph node id, whose configs in the
// old and the new form are ocfg and cfg, when it can say more than "another
// config": a new version of the child alone (the pins differ, the rest is
// equal) is a changed config whose reason names the child, its versions
// and the interrupts the thread waits on inside it; a form that pins no
// child (a generated program given no WithSubgraphs, a checkpoint written
// before pins) says nothing about the child's version, and the child's own
// rule applies when the task continues it.
func childReason(cp *Checkpoint, id string, ocfg, cfg json.RawMessage) ([]IncompatibleReason, bool) {
	var oc, nc spec.SubgraphConfig
	if json.Unmarshal(ocfg, &oc) != nil || json.Unmarshal(cfg, &nc) != nil {
		return nil, false
	}
	ofp, nfp := oc.Fingerprint, nc.Fingerprint
	if ofp == "" || nfp == "" {
		oc.Fingerprint, nc.Fingerprint = "", ""
	} else if oc.Graph == nc.Graph {
		oc.Fingerprint = nc.Fingerprint
	}
	ob, err1 := json.Marshal(oc)
	nb, err2 := json.Marshal(nc)
	if err1 != nil || err2 != nil || !rawEqual(ob, nb) {
		return nil, false // another mapping or another graph: the plain reason
	}
	if ofp == "" || nfp == "" || ofp == nfp {
		return nil, true
	}
	var inside []string
	for _, p := range cp.Pending {
		if p.Node == id {
			inside = append(inside, p.ID)
		}
	}
	where := "has a task planned in it"
	if len(inside) > 0 {
		where = "waits inside it (" + strings.Join(inside, ", ") + ")"
	}
	return []IncompatibleReason{{Kind: ReasonNodeConfig, Subject: id,
		Msg: fmt.Sprintf("the node runs graph %q, now at version %s; the thread %s, on the checkpoint version %s of the child wrote", nc.Graph, nfp, where, ofp),
		Fix: "change the child once no thread is paused in the node, run the thread on its own version with its child (Versions), or migrate it (Migrate)"}}, true
}

func rawEqual(a, b json.RawMessage) bool {
	null := func(r json.RawMessage) bool { return r == nil || bytes.Equal(bytes.TrimSpace(r), []byte("null")) }
	if null(a) || null(b) {
		return null(a) && null(b)
	}
	eq, err := spec.JSONEqual(a, b)
	return err == nil && eq
}

func sortedNames(m map[string]json.RawMessage) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// checkVersion applies the compatibility rule before a run or resume
// touches the thread whose latest checkpoint is latest (nil for a new
// thread), and on success stores the graph's document in a DocumentStore.
// It writes nothing when it refuses.
func (r *runner[S, U]) checkVersion(latest *Checkpoint) error {
	fp, doc := r.g.versionDocument()
	if latest != nil && latest.Fingerprint != "" && latest.Fingerprint != fp {
		var old []byte
		if ds, ok := r.cfg.cp.(checkpoint.DocumentStore); ok {
			d, err := ds.GetDocument(r.ctx, latest.Fingerprint)
			switch {
			case err == nil:
				old = d
			case !errors.Is(err, ErrNotFound):
				return &CheckpointError{Op: "get document " + latest.Fingerprint, Err: err}
			}
		}
		if err := Compatible(latest, old, doc); err != nil {
			var ie *IncompatibleError
			if errors.As(err, &ie) {
				ie.ThreadID, ie.To = r.cfg.thread, fp
			}
			return err
		}
	}
	if ds, ok := r.cfg.cp.(checkpoint.DocumentStore); ok {
		if err := ds.PutDocument(r.ctx, fp, doc); err != nil {
			return &CheckpointError{Op: "put document " + fp, Err: err}
		}
	}
	return nil
}
