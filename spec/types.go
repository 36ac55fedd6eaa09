package spec

import (
	"encoding/json"
	"sort"
	"strconv"
)

// Start and End are the reserved ids of the virtual entry and exit of every
// graph. Edges leave Start and reach End; neither may be a node id.
const (
	Start = "__start__"
	End   = "__end__"
)

// Reducer names one of the built-in ways a channel folds an incoming write.
type Reducer string

// The built-in reducers. A channel whose reducer is absent uses LastWrite.
const (
	LastWrite Reducer = "last_write" // incoming value wins
	Append    Reducer = "append"     // list concat; a non-list incoming is one element
	Merge     Reducer = "merge"      // shallow object merge, incoming wins per key
)

// Reducers lists the built-in reducers in their documented order.
var Reducers = []Reducer{LastWrite, Append, Merge}

// Presence says whether an optional member of the document was absent, null
// or set, so that encoding a decoded document keeps it exactly as it was.
type Presence uint8

// The three states of an optional member.
const (
	Absent Presence = iota
	Null
	Set
)

// Graph is one graph document: the whole, serializable description of a
// graph. Its zero value is an empty document; Decode fills one from JSON and
// Encode writes it back in canonical form.
type Graph struct {
	// Name is the graph's name; "" when NameKind is Absent or Null. Encode
	// writes a non-empty Name whatever NameKind says, so a graph built in Go
	// may leave NameKind unset.
	Name     string
	NameKind Presence
	// Channels are the declared channels, sorted by name (JSON object key
	// order carries no meaning). Nil means the document has no "channels"
	// member; a non-nil empty slice is written as "channels": {}. The same
	// holds for Nodes and Edges, so that absent stays absent.
	Channels []Channel
	// Nodes are in document order, which is the reduce order.
	Nodes []Node
	// Edges are in document order.
	Edges []Edge
	// Extra holds top-level members this version does not know, kept so a
	// newer document survives a round trip through an older reader.
	Extra Extra

	src *source // where each JSON path came from; nil for graphs built in Go
}

// Channel is one declared channel of state.
type Channel struct {
	Name string
	// Reducer is the reducer as written; "" when the member was absent (the
	// channel then folds with LastWrite; see Kind).
	Reducer Reducer
	Extra   Extra
}

// Kind returns the reducer the channel folds with: Reducer, or LastWrite when
// the document left it out.
func (c Channel) Kind() Reducer {
	if c.Reducer == "" {
		return LastWrite
	}
	return c.Reducer
}

// Node is one node of the graph: an id unique in the graph, a registry type
// and that type's configuration.
type Node struct {
	ID   string
	Type string
	// Config is the node's configuration as raw JSON: nil when absent,
	// otherwise a JSON object or the four bytes null. Decode stores a copy of
	// the document's exact bytes (its key order, whitespace, escapes and
	// number text); Encode re-indents them canonically. Paths into it, such
	// as nodes[0].config.tools[1], work with Graph.Pos.
	Config json.RawMessage
	// Goto declares where the node's command may route at run time: the
	// node ids (or End) its goto and sends may name. nil when the document
	// leaves the member out, which declares nothing and restricts nothing.
	// A declared list counts for reachability, is drawn as dashed edges,
	// and a run refuses a goto or send to a node outside it. Goto does not
	// add edges: a node without a command's goto still follows its static
	// edges only.
	Goto  []string
	Extra Extra
}

// Edge connects From (a node id or Start) to To (a node id or End). When,
// if set, guards it: the edge is followed only when the predicate holds.
type Edge struct {
	From  string
	To    string
	When  *Predicate
	Extra Extra
}

// Op is a predicate operator.
type Op string

// The predicate operators of a declarative guard.
const (
	OpEq     Op = "eq"     // channel equals a scalar literal
	OpNeq    Op = "neq"    // channel does not equal a scalar literal
	OpIn     Op = "in"     // channel equals one of a list of scalar literals
	OpGt     Op = "gt"     // channel is a number greater than the literal
	OpLt     Op = "lt"     // channel is a number less than the literal
	OpTruthy Op = "truthy" // channel's truthiness equals the boolean literal
)

// Ops lists every operator in documented order.
var Ops = []Op{OpEq, OpNeq, OpIn, OpGt, OpLt, OpTruthy}

// Predicate is a declarative guard: {"channel": C, OP: literal}. A stored
// document never carries code, so this is the only way to guard an edge.
type Predicate struct {
	Channel string
	Op      Op
	// Value is the operand of every operator but OpIn.
	Value Literal
	// Values is the operand of OpIn.
	Values []Literal
	// Extra holds the predicate's extension members ("x-…").
	Extra Extra
}

// LitKind is the JSON kind of a predicate literal.
type LitKind uint8

// The scalar kinds a literal can have.
const (
	LitNull LitKind = iota
	LitString
	LitNumber
	LitBool
)

// Literal is a JSON scalar operand of a predicate. Numbers keep the exact
// text of the document (Num) so encoding never reformats them.
type Literal struct {
	Kind LitKind
	Str  string // LitString
	Num  string // LitNumber: the JSON number text, e.g. "1.0" or "1e3"
	Bool bool   // LitBool
}

// Float returns a number literal's value as an IEEE double, the precision
// predicates compare at: the nearest double, ±Inf beyond the double range
// (1e400), ±0 below it.
func (l Literal) Float() float64 {
	f, _ := strconv.ParseFloat(l.Num, 64)
	return f
}

// Extra holds members of a JSON object that this version of the document
// format does not know, by key, as raw JSON (Decode stores the document's
// exact bytes). They are kept, not dropped, and re-encoded after the known
// members in key order.
type Extra map[string]json.RawMessage

// Keys returns the keys of e in sorted order.
func (e Extra) Keys() []string {
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Channel returns the declared channel called name.
func (g *Graph) Channel(name string) (Channel, bool) {
	i := sort.Search(len(g.Channels), func(i int) bool { return g.Channels[i].Name >= name })
	if i < len(g.Channels) && g.Channels[i].Name == name {
		return g.Channels[i], true
	}
	return Channel{}, false
}

// NodeIndex returns the index of the node with the given id in g.Nodes, or
// -1 when there is none.
func (g *Graph) NodeIndex(id string) int {
	for i := range g.Nodes {
		if g.Nodes[i].ID == id {
			return i
		}
	}
	return -1
}
