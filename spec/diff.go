package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// ChangeKind names one kind of structural change between two documents.
type ChangeKind string

// The kinds of change Compare reports.
const (
	NameChanged       ChangeKind = "name-changed"
	ChannelAdded      ChangeKind = "channel-added"
	ChannelRemoved    ChangeKind = "channel-removed"
	ReducerChanged    ChangeKind = "reducer-changed"
	NodeAdded         ChangeKind = "node-added"
	NodeRemoved       ChangeKind = "node-removed"
	NodeTypeChanged   ChangeKind = "node-type-changed"
	NodeConfigChanged ChangeKind = "node-config-changed"
	NodeMoved         ChangeKind = "node-moved"
	EdgeAdded         ChangeKind = "edge-added"
	EdgeRemoved       ChangeKind = "edge-removed"
	PredicateChanged  ChangeKind = "predicate-changed"
	NodeGotoChanged   ChangeKind = "node-goto-changed"
)

// Change is one structural difference between an old and a new document,
// placed in both (a side that does not hold the changed part has an empty
// path and the zero Pos) and classified for the two kinds of thread a change
// can meet (see Compare for the rule).
type Change struct {
	Kind ChangeKind
	// Subject is what changed: a node id, a channel name, an edge as
	// "from -> to", or the document name.
	Subject string
	// OldPath and NewPath are JSON paths (as in Diagnostic.Path) in the old
	// and the new document; OldPos and NewPos are where they start.
	OldPath, NewPath string
	OldPos, NewPos   Pos
	// Detail says what changed in one sentence.
	Detail string
	// UnsafePaused is set when a thread paused under the old document may
	// not continue under the new one; UnsafeNew when node code written for
	// the old document may fail or behave differently in a thread started on
	// the new one. Reason says why when either is set.
	UnsafePaused bool
	UnsafeNew    bool
	Reason       string
}

// Unsafe reports whether c is unsafe for paused or for new threads.
func (c Change) Unsafe() bool { return c.UnsafePaused || c.UnsafeNew }

// Compare returns the structural changes from old to new, in this order:
// name, channels (by name), nodes (by id, in old then new document order),
// edges. Parts that Fingerprint ignores (x- members, $schema, formatting, key
// order, the spelling of numbers, an absent reducer against "last_write")
// are never changes, so Compare returns nothing exactly when the two
// fingerprints are equal.
//
// Channels and nodes are matched by name and id; a renamed one is a removal
// and an addition. Edges are matched by their ends: the k-th edge from A to
// B in the old document is the k-th one in the new document, and a
// different guard between matched edges is a PredicateChanged.
//
// The rule. A change is unsafe for paused threads (UnsafePaused) when a
// checkpoint written under the old document can hold something the new one
// cannot take as it is:
//
//   - NodeRemoved: a planned task or a pending interrupt can name the node;
//   - NodeTypeChanged, NodeConfigChanged: a planned task of the node re-runs
//     it, replaying the journal its old implementation or configuration
//     wrote, in a different one;
//   - ChannelRemoved: the checkpoint can hold the channel's value;
//   - ReducerChanged: the stored value was folded by the old reducer and
//     later writes would fold into it with another;
//   - NameChanged: a Versions set of the runtime keeps one name, so the two
//     documents are no longer versions of one graph;
//   - NodeGotoChanged that takes a destination away (a target removed, or a
//     list declared where there was none): a paused task of the node can
//     route there when it resumes, and a run refuses that goto. It is
//     unsafe for new threads too, since node code written for the old
//     document may route there. Adding targets, or dropping the list, is
//     safe.
//
// Every other change is safe for paused threads: an added node or channel
// starts empty, and edges, guards and the node order only decide what is
// planned and how updates fold from the next superstep on, after the work a
// checkpoint holds. The runtime decides per thread (its planned tasks,
// pending interrupts and held channels), so a change unsafe here can still
// be compatible with a given thread.
//
// A change is unsafe for new threads (UnsafeNew) when node code written for
// the old document can fail or behave differently on the new one:
// ChannelRemoved (a node that writes the channel fails: writing an
// undeclared channel is an error of the task), ReducerChanged (nodes reading
// the channel see values of another shape) and NodeTypeChanged (the node
// needs another implementation). Routing changes, added parts, config
// changes (a node receives its configuration) and reorderings are safe for
// new threads.
func Compare(old, new *Graph) []Change {
	if old == nil {
		old = &Graph{}
	}
	if new == nil {
		new = &Graph{}
	}
	d := differ{old: old, new: new}
	d.name()
	d.channels()
	d.nodes()
	d.edges()
	return d.out
}

type differ struct {
	old, new *Graph
	out      []Change
}

func (d *differ) add(c Change) {
	if c.OldPath != "" {
		c.OldPos = d.old.Pos(c.OldPath)
	}
	if c.NewPath != "" {
		c.NewPos = d.new.Pos(c.NewPath)
	}
	d.out = append(d.out, c)
}

func (d *differ) name() {
	if d.old.Name == d.new.Name {
		return
	}
	d.add(Change{
		Kind: NameChanged, Subject: d.new.Name,
		OldPath: "name", NewPath: "name",
		Detail:       fmt.Sprintf("name %q became %q", d.old.Name, d.new.Name),
		UnsafePaused: true,
		Reason:       "a set of versions holds graphs of one name; threads of the old name do not find this one",
	})
}

func (d *differ) channels() {
	for _, oc := range d.old.Channels {
		path := PathKey("channels", oc.Name)
		nc, ok := d.new.Channel(oc.Name)
		if !ok {
			d.add(Change{
				Kind: ChannelRemoved, Subject: oc.Name, OldPath: path,
				Detail:       fmt.Sprintf("channel %q (%s) was removed", oc.Name, oc.Kind()),
				UnsafePaused: true, UnsafeNew: true,
				Reason: "a paused thread can hold its value; a node that still writes it fails",
			})
			continue
		}
		if oc.Kind() != nc.Kind() {
			d.add(Change{
				Kind: ReducerChanged, Subject: oc.Name,
				OldPath: reducerPath(d.old, oc), NewPath: reducerPath(d.new, nc),
				Detail:       fmt.Sprintf("channel %q folds with %s instead of %s", oc.Name, nc.Kind(), oc.Kind()),
				UnsafePaused: true, UnsafeNew: true,
				Reason: "a stored value was folded by the old reducer; nodes reading the channel see values of another shape",
			})
		}
	}
	for _, nc := range d.new.Channels {
		if _, ok := d.old.Channel(nc.Name); !ok {
			d.add(Change{
				Kind: ChannelAdded, Subject: nc.Name, NewPath: PathKey("channels", nc.Name),
				Detail: fmt.Sprintf("channel %q (%s) was added", nc.Name, nc.Kind()),
			})
		}
	}
}

// reducerPath is the path of c's reducer member, or of the channel when the
// member is absent.
func reducerPath(g *Graph, c Channel) string {
	p := PathKey("channels", c.Name)
	if c.Reducer != "" {
		return PathKey(p, "reducer")
	}
	return p
}

func (d *differ) nodes() {
	// Relative order of the nodes both documents hold: a change of it is a
	// change of the reduce order.
	var oldOrder, newOrder []string
	for i, on := range d.old.Nodes {
		path := PathIndex("nodes", i)
		j := d.new.NodeIndex(on.ID)
		if j < 0 {
			d.add(Change{
				Kind: NodeRemoved, Subject: on.ID, OldPath: path,
				Detail:       fmt.Sprintf("node %q (type %s) was removed", on.ID, on.Type),
				UnsafePaused: true,
				Reason:       "a paused thread can have a task of it planned or an interrupt of it pending",
			})
			continue
		}
		oldOrder = append(oldOrder, on.ID)
		nn := d.new.Nodes[j]
		npath := PathIndex("nodes", j)
		if on.Type != nn.Type {
			d.add(Change{
				Kind: NodeTypeChanged, Subject: on.ID,
				OldPath: PathKey(path, "type"), NewPath: PathKey(npath, "type"),
				Detail:       fmt.Sprintf("node %q has type %s instead of %s", on.ID, nn.Type, on.Type),
				UnsafePaused: true, UnsafeNew: true,
				Reason: "the node needs another implementation; a planned task of it would replay the old one's journal",
			})
		}
		if !configEqual(on.Config, nn.Config) {
			c := Change{
				Kind: NodeConfigChanged, Subject: on.ID,
				OldPath: PathKey(path, "config"), NewPath: PathKey(npath, "config"),
				Detail:       fmt.Sprintf("node %q has another config", on.ID),
				UnsafePaused: true,
				Reason:       "a planned task of the node would replay the journal its old configuration wrote",
			}
			if on.Config == nil {
				c.OldPath = path
			}
			if nn.Config == nil {
				c.NewPath = npath
			}
			if keys := configKeys(on.Config, nn.Config); keys != "" {
				c.Detail += " (" + keys + ")"
			}
			if detail, ok := childVersionChanged(on, nn); ok {
				c.Detail, c.Reason = detail, "a paused task of the node continues its child run from the checkpoint the old child version wrote"
			}
			d.add(c)
		}
		if !gotoEqual(on.Goto, nn.Goto) {
			c := Change{
				Kind: NodeGotoChanged, Subject: on.ID,
				OldPath: PathKey(path, "goto"), NewPath: PathKey(npath, "goto"),
				Detail: fmt.Sprintf("node %q declares goto %s instead of %s", on.ID, gotoText(nn.Goto), gotoText(on.Goto)),
			}
			if on.Goto == nil {
				c.OldPath = path
			}
			if nn.Goto == nil {
				c.NewPath = npath
			}
			if gotoNarrowed(on.Goto, nn.Goto) {
				c.UnsafePaused, c.UnsafeNew = true, true
				c.Reason = "a run refuses a goto or send to a destination the node no longer declares, which a paused task of it or node code written for the old document may name"
			}
			d.add(c)
		}
	}
	for j, nn := range d.new.Nodes {
		if d.old.NodeIndex(nn.ID) < 0 {
			d.add(Change{
				Kind: NodeAdded, Subject: nn.ID, NewPath: PathIndex("nodes", j),
				Detail: fmt.Sprintf("node %q (type %s) was added", nn.ID, nn.Type),
			})
			continue
		}
		newOrder = append(newOrder, nn.ID)
	}
	if strings.Join(oldOrder, "\x00") != strings.Join(newOrder, "\x00") {
		d.add(Change{
			Kind: NodeMoved, Subject: strings.Join(newOrder, ", "),
			OldPath: "nodes", NewPath: "nodes",
			Detail: fmt.Sprintf("the node order (the reduce order) became %s", strings.Join(newOrder, ", ")),
		})
	}
}

// gotoEqual compares two goto lists whatever their order (as Fingerprint
// does); an absent list equals only an absent one.
func gotoEqual(a, b []string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return slices.Equal(sorted(a), sorted(b))
}

// gotoNarrowed reports whether new allows a destination less than old: a
// list where old had none, or a target of old missing from new.
func gotoNarrowed(old, new []string) bool {
	if new == nil {
		return false
	}
	if old == nil {
		return true
	}
	for _, t := range old {
		if !slices.Contains(new, t) {
			return true
		}
	}
	return false
}

func sorted(a []string) []string {
	s := slices.Clone(a)
	slices.Sort(s)
	return s
}

// gotoText writes a goto list for a Detail: ["a", "b"], or "nothing" for
// an absent one.
func gotoText(a []string) string {
	if a == nil {
		return "nothing"
	}
	q := make([]string, len(a))
	for i, t := range a {
		q[i] = quote(t)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// configEqual compares two configs by JSON value, absent and null alike.
func configEqual(a, b []byte) bool {
	if isNullish(a) || isNullish(b) {
		return isNullish(a) && isNullish(b)
	}
	eq, err := JSONEqual(a, b)
	return err == nil && eq
}

func isNullish(b []byte) bool {
	return b == nil || bytes.Equal(bytes.TrimSpace(b), []byte("null"))
}

// configKeys names the top-level config members that differ, when both
// configs are objects: "model, tools".
func configKeys(a, b []byte) string {
	ma, oka := topMembers(a)
	mb, okb := topMembers(b)
	if !oka || !okb {
		return ""
	}
	var keys []string
	seen := map[string]bool{}
	for _, m := range []map[string][]byte{ma, mb} {
		for k := range m {
			if seen[k] {
				continue
			}
			seen[k] = true
			va, ina := ma[k]
			vb, inb := mb[k]
			if ina != inb {
				keys = append(keys, k)
				continue
			}
			if eq, err := JSONEqual(va, vb); err != nil || !eq {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// topMembers returns the members of a JSON object by key.
func topMembers(raw []byte) (map[string][]byte, bool) {
	if raw == nil || checkJSON(raw) != nil {
		return nil, false
	}
	p := newParser(raw, hardMaxDepth)
	if p.peek() != kindObject {
		return nil, false
	}
	m := map[string][]byte{}
	p.object(func(key string, _ int) {
		start := p.pos
		p.skip()
		m[key] = raw[start:p.pos]
	})
	return m, true
}

func (d *differ) edges() {
	type key struct{ from, to string }
	newByKey := map[key][]int{}
	for j, e := range d.new.Edges {
		k := key{e.From, e.To}
		newByKey[k] = append(newByKey[k], j)
	}
	matched := make([]bool, len(d.new.Edges))
	seen := map[key]int{}
	for i, oe := range d.old.Edges {
		k := key{oe.From, oe.To}
		n := seen[k]
		seen[k] = n + 1
		subject := oe.From + " -> " + oe.To
		path := PathIndex("edges", i)
		if n >= len(newByKey[k]) {
			d.add(Change{
				Kind: EdgeRemoved, Subject: subject, OldPath: path,
				Detail: fmt.Sprintf("edge %s%s was removed", subject, guardText(oe.When)),
			})
			continue
		}
		j := newByKey[k][n]
		matched[j] = true
		ne := d.new.Edges[j]
		if !predicateEqual(oe.When, ne.When) {
			c := Change{
				Kind: PredicateChanged, Subject: subject,
				OldPath: PathKey(path, "when"), NewPath: PathKey(PathIndex("edges", j), "when"),
				Detail: fmt.Sprintf("edge %s: guard %s became %s", subject, predText(oe.When), predText(ne.When)),
			}
			if oe.When == nil {
				c.OldPath = path
			}
			if ne.When == nil {
				c.NewPath = PathIndex("edges", j)
			}
			d.add(c)
		}
	}
	for j, ne := range d.new.Edges {
		if matched[j] {
			continue
		}
		subject := ne.From + " -> " + ne.To
		d.add(Change{
			Kind: EdgeAdded, Subject: subject, NewPath: PathIndex("edges", j),
			Detail: fmt.Sprintf("edge %s%s was added", subject, guardText(ne.When)),
		})
	}
}

func predicateEqual(a, b *Predicate) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return predText(a) == predText(b)
}

func guardText(p *Predicate) string {
	if p == nil {
		return ""
	}
	return " when " + predText(p)
}

// predText writes p in its canonical JSON form on one line without its
// extension members, numbers normalised: {"channel":"intent","eq":"buy"}.
func predText(p *Predicate) string {
	if p == nil {
		return "none"
	}
	q := *p
	q.Extra = nil
	w := &writer{}
	w.predicate(&q, 0)
	c, err := canonical(w.b, true)
	if err != nil {
		return string(w.b)
	}
	return string(compactJSON(c))
}

// compactJSON removes the insignificant whitespace of canonical JSON.
func compactJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inStr, esc := false, false
	for _, c := range b {
		switch {
		case inStr:
			out = append(out, c)
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
			out = append(out, c)
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
		default:
			out = append(out, c)
		}
	}
	return out
}

// childVersionChanged describes the config change of a subgraph node whose
// only difference is the child version it pins (see PinSubgraphs): a new
// child version, which Compare reports as the node's config change.
func childVersionChanged(on, nn Node) (string, bool) {
	if on.Type != SubgraphType || nn.Type != SubgraphType {
		return "", false
	}
	og, ofp, ok1 := subgraphPin(on.Config)
	ng, nfp, ok2 := subgraphPin(nn.Config)
	if !ok1 || !ok2 || og != ng || ofp == "" || nfp == "" || ofp == nfp {
		return "", false
	}
	var oc, nc map[string]json.RawMessage
	if json.Unmarshal(on.Config, &oc) != nil || json.Unmarshal(nn.Config, &nc) != nil {
		return "", false
	}
	delete(oc, "fingerprint")
	delete(nc, "fingerprint")
	ob, _ := json.Marshal(oc)
	nb, _ := json.Marshal(nc)
	if !configEqual(ob, nb) {
		return "", false
	}
	return fmt.Sprintf("subgraph node %q runs another version of graph %q (%s, was %s)", on.ID, og, nfp, ofp), true
}
