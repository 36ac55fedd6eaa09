package gen

import (
	"bytes"
	"encoding/json"
	"go/types"
	"slices"
	"strings"

	"github.com/ilmek-go/ilmek/spec"
)

// model is everything the emitters need, derived from the document and the
// bindings and checked: every name converted and claimed, every type
// resolved, every guard compiled. Emitters only read it.
type model struct {
	tables []*table // of the file being emitted (table.go)
	g      *spec.Graph
	opts   Options
	chans  []*chanModel // sorted by channel name
	nodes  []*nodeModel // document order
	types  []*typeModel // sorted by method name
	edges  [][]*edgeModel
	nbits  int // last_write channels, one presence bit each
	pkgPos *scope
	sub    *subgraphModel // resolved subgraph nodes (subgraph.go), nil when none
}

// chanModel is one channel.
type chanModel struct {
	name  string
	field string // State and Update field
	has   string // presence accessor, "" unless last_write
	konst string // Channel<Field> constant
	red   spec.Reducer
	typ   types.Type // State field type: T, []T or map[string]T
	elem  types.Type // append: the element type; merge: the value type
	bound bool       // typed by a binding
	bit   int        // presence bit of a last_write channel, else -1
	path  string
}

// lastWrite reports whether the channel folds with last_write.
func (c *chanModel) lastWrite() bool { return c.red == spec.LastWrite }

// pointer reports whether the channel is a last_write channel bound to a
// pointer type *T: its Update field is that *T itself (nil: not written),
// not a **T, and a null write (only the adapter can make one) is an
// unexported bit of the Update.
func (c *chanModel) pointer() bool {
	_, ok := c.typ.(*types.Pointer)
	return c.lastWrite() && ok
}

// hasPointers reports whether some channel is a pointer channel.
func (m *model) hasPointers() bool {
	for _, c := range m.chans {
		if c.pointer() {
			return true
		}
	}
	return false
}

// nodeModel is one node.
type nodeModel struct {
	index  int
	id     string
	konst  string // Node<ID> constant
	typ    *typeModel
	config any // the decoded config (json.Number for numbers); nil when absent or null
	path   string
}

// typeModel is one node type and its config type.
type typeModel struct {
	name   string
	method string     // Nodes method
	config string     // generated config type name; "" when bound
	bound  types.Type // the bound config type, nil when generated
	// builtin: a built-in node type (BuiltinConfigs) bound to its own
	// config type, built with the registry Nodes.Builtins returns.
	builtin bool
	fields  []*configField
	nodes   []*nodeModel
	path    string // nodes[i].type of its first node
}

// configField is one field of a generated config struct.
type configField struct {
	key   string
	field string
	typ   types.Type
	path  string // first occurrence
}

// edgeModel is one edge, grouped by its source.
type edgeModel struct {
	index int
	from  int // node index or -1 for __start__
	to    int // node index or -1 for __end__
	when  *spec.Predicate
	path  string
	ch    *chanModel // the guard's channel
}

// Generated names of the package block, of State and of Update that no
// document name may take.
var (
	reservedPackage = []string{"State", "Update", "Nodes", "Node", "NodeID", "New", "Graph", "Target", "To", "Send", "SendState", "End", "FromRegistry", "Adapt", "UpdateOf"}
	reservedState   = []string{"MarshalJSON", "UnmarshalJSON", "With"}
	reservedUpdate  = []string{"Goto", "MarshalJSON", "UnmarshalJSON"}
)

var (
	anyType     = types.Universe.Lookup("any").Type()
	stringType  = types.Typ[types.String]
	anySlice    = types.NewSlice(anyType)
	anyMap      = types.NewMap(stringType, anyType)
	boolType    = types.Typ[types.Bool]
	int64Type   = types.Typ[types.Int64]
	float64Type = types.Typ[types.Float64]
)

// buildModel converts and checks everything; problems go to d.
func buildModel(g *spec.Graph, opts Options, d *diags) *model {
	m := &model{g: g, opts: opts}
	pkg := newScope("package", reservedPackage...)
	m.pkgPos = pkg
	state := newScope("State", reservedState...)
	update := newScope("Update", reservedUpdate...)
	nodesIface := newScope("Nodes")
	reported := map[[2]string]bool{} // one diagnostic per pair of clashing elements
	claim := func(s *scope, id string, o origin) bool {
		prev, clash := s.claim(id, o)
		if !clash {
			return true
		}
		if pair := [2]string{o.path, prev.path}; prev.path != "" {
			if reported[pair] {
				return false
			}
			reported[pair] = true
		}
		if prev.path == "" {
			// Generated names are never changed to make room: a renamed
			// identifier would move when the document changes.
			d.errorf(o.path, "rename it in the spec", "%s converts to %s, which is %s", o.desc, id, prev.desc)
		} else {
			d.errorf(o.path, "rename one of them in the spec", "%s converts to %s, as does %s (%s)", o.desc, id, prev.desc, d.at(prev.path))
		}
		return false
	}
	bindings := opts.Bindings
	if bindings == nil {
		bindings = &Bindings{}
	}

	for _, c := range g.Channels {
		cm := &chanModel{name: c.Name, red: c.Kind(), bit: -1, path: spec.PathKey("channels", c.Name)}
		desc := "channel " + quote(c.Name)
		field, err := GoName(c.Name)
		if err != nil {
			d.errorf(cm.path, "rename the channel", "channel name %v", err)
			continue
		}
		cm.field = field
		claim(state, field, origin{desc: desc, path: cm.path})
		claim(update, field, origin{desc: desc, path: cm.path})
		cm.konst = "Channel" + field
		claim(pkg, cm.konst, origin{desc: desc, path: cm.path})
		if cm.lastWrite() {
			cm.bit = m.nbits
			m.nbits++
			cm.has = "Has" + field
			claim(state, cm.has, origin{desc: desc + " (its presence accessor)", path: cm.path})
		}
		m.typeChannel(cm, bindings, d)
		m.chans = append(m.chans, cm)
	}

	byType := map[string]*typeModel{}
	builtinsClaimed := false // Nodes.Builtins, claimed by the first built-in type
	for i, n := range g.Nodes {
		nm := &nodeModel{index: i, id: n.ID, path: spec.PathKey(spec.PathIndex("nodes", i), "id")}
		if len(n.Config) > 0 {
			v, err := decodeJSON(n.Config)
			if err != nil {
				d.errorf(spec.PathKey(spec.PathIndex("nodes", i), "config"), "", "config is not JSON: %v", err)
			}
			nm.config = v
		}
		// The id only ever follows the prefix "Node", so it may start with
		// a digit ("1st", or a builder's UUID) or a caseless letter.
		if konst, err := GoSuffix("Node", n.ID); err != nil {
			d.errorf(nm.path, "rename the node", "node id %v", err)
		} else {
			nm.konst = konst
			claim(pkg, nm.konst, origin{desc: "node " + quote(n.ID), path: nm.path})
			if n.Goto != nil {
				// Its declared destinations' type and values (emitGotos).
				f, at := strings.TrimPrefix(konst, "Node"), spec.PathKey(spec.PathIndex("nodes", i), "goto")
				claim(pkg, f+"Goto", origin{desc: "node " + quote(n.ID) + " (its goto type)", path: at})
				claim(pkg, f+"Gotos", origin{desc: "node " + quote(n.ID) + " (its declared destinations)", path: at})
			}
		}
		if m.subgraphNode(nm, n, d, func(id string, o origin) bool { return claim(nodesIface, id, o) }) {
			m.nodes = append(m.nodes, nm)
			continue
		}
		tm := byType[n.Type]
		if tm == nil {
			tm = &typeModel{name: n.Type, path: spec.PathKey(spec.PathIndex("nodes", i), "type")}
			byType[n.Type] = tm
			desc := "node type " + quote(n.Type)
			if method, err := GoName(n.Type); err != nil {
				d.errorf(tm.path, "rename the node type", "node type %v", err)
			} else {
				tm.method = method
				claim(nodesIface, method, origin{desc: desc, path: tm.path})
				if b, ok := bindings.Configs[n.Type]; ok {
					tm.bound = b.Type
					tm.builtin = BuiltinConfigs[n.Type] != "" && b.Expr == BuiltinConfigs[n.Type]
					if tm.builtin && !builtinsClaimed {
						builtinsClaimed = true
						claim(nodesIface, BuiltinsMethod, origin{desc: "the registry of the built-in node types (Nodes." + BuiltinsMethod + ")", path: tm.path})
					}
				} else {
					tm.config = method + "Config"
					claim(pkg, tm.config, origin{desc: desc + " (its config type)", path: tm.path})
				}
			}
		}
		nm.typ = tm
		tm.nodes = append(tm.nodes, nm)
		m.nodes = append(m.nodes, nm)
	}
	for _, name := range sortedKeys(byType) {
		m.types = append(m.types, byType[name])
	}
	sortByMethod(m.types)
	for _, tm := range m.types {
		if tm.method == "" {
			continue
		}
		if tm.bound != nil {
			m.checkBoundConfigs(tm, d)
		} else {
			m.inferConfig(tm, d)
		}
	}

	// Look nodes and channels up by map: a linear search per edge made
	// large documents quadratic.
	index := make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		if _, dup := index[n.ID]; !dup {
			index[n.ID] = i
		}
	}
	chans := make(map[string]*chanModel, len(m.chans))
	for _, c := range m.chans {
		chans[c.name] = c
	}
	m.edges = make([][]*edgeModel, len(g.Nodes)+1)
	for i, e := range g.Edges {
		em := &edgeModel{index: i, from: -1, to: -1, when: e.When, path: spec.PathIndex("edges", i)}
		if e.From != spec.Start {
			em.from = index[e.From]
		}
		if e.To != spec.End {
			em.to = index[e.To]
		}
		if e.When != nil {
			em.ch = chans[e.When.Channel]
			if em.ch != nil && em.ch.typ != nil {
				checkGuard(em, d)
			}
		}
		m.edges[em.from+1] = append(m.edges[em.from+1], em)
	}
	return m
}

// typeChannel gives cm its Go type: the binding's, checked against the
// reducer, or the default (any, []any, map[string]any).
func (m *model) typeChannel(cm *chanModel, b *Bindings, d *diags) {
	bind, ok := b.Channels[cm.name]
	if !ok {
		switch cm.red {
		case spec.Append:
			cm.typ, cm.elem = anySlice, anyType
		case spec.Merge:
			cm.typ, cm.elem = anyMap, anyType
		default:
			cm.typ = anyType
		}
		return
	}
	t := bind.Type
	what := bindingWhat(false, cm.name, bind.Expr)
	if err := emittable(t); err != nil {
		d.errorf(cm.path, "bind a type made of named types, pointers, slices, maps and predeclared types", "%s: %v", what, err)
		return
	}
	switch cm.red {
	case spec.Append:
		cm.bound = !types.Identical(t, anySlice)
		s, ok := t.Underlying().(*types.Slice)
		if !ok {
			d.errorf(cm.path, "bind the slice it accumulates, e.g. --type "+flagName(cm.name)+"=[]"+flagName(bind.Expr),
				"%s: channel %s folds with append, so its type must be a slice, not %s", what, quote(cm.name), typeString(t))
			return
		}
		cm.typ, cm.elem = t, s.Elem()
	case spec.Merge:
		cm.bound = !types.Identical(t, anyMap)
		mp, ok := t.Underlying().(*types.Map)
		if !ok || !isStringKind(mp.Key()) {
			d.errorf(cm.path, "e.g. --type "+flagName(cm.name)+"=map[string]T",
				"%s: channel %s folds with merge, so its type must be a map with string keys, not %s", what, quote(cm.name), typeString(t))
			return
		}
		cm.typ, cm.elem = t, mp.Elem()
	default:
		cm.bound = !isEmptyInterface(t)
		cm.typ = t
	}
}

// sortByMethod sorts ts by method name, keeping the order of equal names.
func sortByMethod(ts []*typeModel) {
	slices.SortStableFunc(ts, func(a, b *typeModel) int { return strings.Compare(a.method, b.method) })
}

// decodeJSON decodes raw JSON with numbers kept as json.Number.
func decodeJSON(raw []byte) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
