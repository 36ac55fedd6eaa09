package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	goruntime "runtime"
	"sync"

	"github.com/ilmek-go/ilmek/spec"
)

// ShapeFingerprintPrefix starts the fingerprint of a graph that has no
// document (see Graph.Fingerprint).
const ShapeFingerprintPrefix = "shape-sha256:"

// version is what a graph knows of its own version, computed once.
type version struct {
	once sync.Once
	fp   string
	doc  []byte // the stored form: the document's canonical encoding, or the shape form
}

// Fingerprint returns the version identity of the graph, which every
// checkpoint it writes records:
//
//   - for a graph that ToSpec can store (built from a document, a generated
//     package, or a code-built graph using only storable parts), the
//     document's spec.Graph.Fingerprint: "sha256:<64 hex digits>";
//   - for a code-built graph that ToSpec refuses (a Go guard, a router, a
//     custom reducer), "shape-sha256:" and the SHA-256 of its shape form: a
//     JSON object of the name, the channels with their reducer ("custom"
//     for a ReducerFunc), the nodes in order with id, type and config (as
//     json.Marshal writes it), and the edges in order with from, to, the
//     declarative predicate, and for a Go guard or a router the name of its
//     function as the Go runtime reports it (package path and name; a
//     closure is named after the function it is declared in and its
//     position among that function's closures). A program that is neither
//     (a hand-written Program) has the shape form of Describe: name,
//     channels and nodes, no edges.
//
// A graph whose "subgraph" nodes run children it knows (Builder.Subgraph,
// WithSubgraphs) counts each child by its fingerprint: in either form,
// every subgraph node's config pins its child (spec.PinSubgraphs), so a
// new version of a child, at any depth, is a new version of the parent and
// a changed config of the node that runs it. A document that pins every
// child already has the fingerprint of its graph.
//
// Two graphs with one fingerprint run the same way; a change of any
// counted part changes it.
func (g *Graph[S, U]) Fingerprint() string {
	g.version.init(g.p, g.childPins)
	return g.version.fp
}

// versionDocument returns the fingerprint and stored form of the graph.
func (g *Graph[S, U]) versionDocument() (string, []byte) {
	g.version.init(g.p, g.childPins)
	return g.version.fp, g.version.doc
}

// childPins returns the fingerprints of the children g's subgraph nodes
// run, by graph name; nil when g knows none.
func (g *Graph[S, U]) childPins() map[string]string {
	children := g.children
	if u, ok := any(g.p).(*untyped); ok && u.builder != nil {
		children = u.builder.children()
	}
	if len(children) == 0 {
		return nil
	}
	pins := make(map[string]string, len(children))
	for name, c := range children {
		pins[name] = c.Fingerprint()
	}
	return pins
}

func (v *version) init(p interface {
	Spec() (*spec.Graph, error)
	Describe() *Shape
}, pins func() map[string]string) {
	v.once.Do(func() {
		if doc, err := p.Spec(); err == nil && doc != nil {
			if fps := pins(); len(fps) > 0 {
				doc = spec.PinSubgraphs(doc, fps)
			}
			v.fp, v.doc = doc.Fingerprint(), doc.FingerprintForm()
			return
		}
		var form shapeForm
		if u, ok := p.(*untyped); ok && u.builder != nil {
			form = u.builder.shapeForm()
		} else {
			form = describeForm(p.Describe())
		}
		b, err := json.Marshal(form)
		if err != nil {
			// A config json.Marshal refuses: leave configs out.
			for i := range form.Nodes {
				form.Nodes[i].Config = nil
			}
			b, _ = json.Marshal(form)
		}
		sum := sha256.Sum256(b)
		v.fp, v.doc = ShapeFingerprintPrefix+hex.EncodeToString(sum[:]), b
	})
}

// shapeForm is the stored form of a graph without a document. Its JSON
// member names match the document format's where they mean the same, so
// the compatibility rule reads both forms alike.
type shapeForm struct {
	Shape    int                         `json:"shape"` // 1: marks the form
	Name     string                      `json:"name,omitempty"`
	Channels map[string]shapeFormChannel `json:"channels"`
	Nodes    []shapeFormNode             `json:"nodes"`
	Edges    []shapeFormEdge             `json:"edges,omitempty"`
}

type shapeFormChannel struct {
	Reducer string `json:"reducer"`
}

type shapeFormNode struct {
	ID     string          `json:"id"`
	Type   string          `json:"type"`
	Config json.RawMessage `json:"config,omitempty"`
}

type shapeFormEdge struct {
	From   string          `json:"from"`
	To     string          `json:"to,omitempty"`
	When   json.RawMessage `json:"when,omitempty"`
	Guard  string          `json:"guard,omitempty"`
	Router string          `json:"router,omitempty"`
}

func describeForm(s *Shape) shapeForm {
	f := shapeForm{Shape: 1, Name: s.Name, Channels: map[string]shapeFormChannel{}, Nodes: []shapeFormNode{}}
	for _, c := range s.Channels {
		f.Channels[c.Name] = shapeFormChannel{Reducer: c.Reducer}
	}
	for _, n := range s.Nodes {
		f.Nodes = append(f.Nodes, shapeFormNode{ID: n.ID, Type: n.Type})
	}
	return f
}

func (b *Builder) shapeForm() shapeForm {
	f := shapeForm{Shape: 1, Name: b.name, Channels: map[string]shapeFormChannel{}, Nodes: []shapeFormNode{}}
	for _, c := range b.channels {
		if _, dup := f.Channels[c.name]; dup {
			continue
		}
		red := string(c.reducer)
		switch {
		case c.custom != nil:
			red = "custom"
		case red == "":
			red = string(spec.LastWrite)
		}
		f.Channels[c.name] = shapeFormChannel{Reducer: red}
	}
	for _, n := range b.nodes {
		node := shapeFormNode{ID: n.id, Type: n.typ}
		if n.sub != nil {
			cfg := n.config.(spec.SubgraphConfig)
			cfg.Fingerprint = n.sub.Fingerprint()
			if raw, err := json.Marshal(cfg); err == nil {
				node.Config = raw
			}
		} else if n.config != nil {
			if raw, err := json.Marshal(n.config); err == nil {
				node.Config = raw
			}
		}
		f.Nodes = append(f.Nodes, node)
	}
	for _, e := range b.edges {
		edge := shapeFormEdge{From: e.from, To: e.to}
		switch {
		case e.router != nil:
			edge.To, edge.Router = "", funcName(e.router)
		case e.guard != nil:
			edge.Guard = funcName(e.guard)
		case e.pred != nil:
			g := spec.Graph{Edges: []spec.Edge{{From: e.from, To: e.to, When: e.pred}}}
			var doc struct {
				Edges []struct {
					When json.RawMessage `json:"when"`
				} `json:"edges"`
			}
			if json.Unmarshal(g.Encode(), &doc) == nil && len(doc.Edges) == 1 {
				edge.When = doc.Edges[0].When
			}
		}
		f.Edges = append(f.Edges, edge)
	}
	return f
}

// funcName is the name the Go runtime gives fn's code.
func funcName(fn any) string {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return ""
	}
	if f := goruntime.FuncForPC(v.Pointer()); f != nil {
		return f.Name()
	}
	return ""
}
