package gen

import (
	"encoding/json"
	"fmt"
	"go/token"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ilmek-go/ilmek/spec"
)

// SubgraphPackage is the generated package of a child graph that the
// document's "subgraph" nodes name (Options.Subgraphs). With it, Generate
// wires the child in: the parent's Nodes gains a method returning the
// child's Nodes (so a node type added to the child fails the parent's
// build until it is implemented), New builds the child with it, and each
// subgraph node runs the child with runtime.RunSubgraph, its channel maps
// written as assignments between the parent's and the child's State and
// Update fields, one line each, so that channels whose Go types differ
// fail `go build` at that line.
type SubgraphPackage struct {
	// Path is the import path of the child's generated package.
	Path string
	// Doc is the child's document: its channels name the fields of the
	// child's State and Update, its reducers their shape.
	Doc *spec.Graph
}

// subgraphModel is what the emitters need of the resolved subgraph nodes.
type subgraphModel struct {
	nodes    []*subNode              // document order
	children []*childModel           // sorted by method
	byNode   map[*nodeModel]*subNode // the node models of subgraph nodes
}

// subNode is one subgraph node whose child has a generated package.
type subNode struct {
	node  *nodeModel
	cfg   spec.SubgraphConfig
	child *childModel
	fn    string // the unexported function that builds the node
}

// childModel is one child graph with a generated package.
type childModel struct {
	name   string // document name
	path   string // import path
	method string // Nodes method returning the child's Nodes
	nodes  []string
	chans  map[string]childChan
}

// childChan is one channel of a child: its field and its reducer.
type childChan struct {
	field string
	red   spec.Reducer
}

// subgraphType is the node type model of resolved subgraph nodes: it has
// no Nodes method of its own.
var subgraphType = &typeModel{name: spec.SubgraphType}

// subgraphNode takes node nm (type "subgraph") when Options.Subgraphs
// resolves subgraph nodes, and reports whether it did; claim claims a
// method of Nodes.
func (m *model) subgraphNode(nm *nodeModel, n spec.Node, d *diags, claim func(id string, o origin) bool) bool {
	if m.opts.Subgraphs == nil || n.Type != spec.SubgraphType {
		return false
	}
	if m.sub == nil {
		m.sub = &subgraphModel{byNode: map[*nodeModel]*subNode{}}
	}
	nm.typ = subgraphType
	cfgPath := spec.PathKey(spec.PathIndex("nodes", nm.index), "config")
	var cfg spec.SubgraphConfig
	if err := json.Unmarshal(n.Config, &cfg); err != nil || cfg.Graph == "" {
		d.errorf(cfgPath, `write {"graph": "<child document name>", "in": {...}, "out": {...}}`, "subgraph node %s: config does not name its graph", quote(n.ID))
		return true
	}
	pkg, ok := m.opts.Subgraphs[cfg.Graph]
	if !ok || pkg.Doc == nil || pkg.Path == "" {
		d.errorf(spec.PathKey(cfgPath, "graph"), "give --subgraph "+cfg.Graph+"=SPEC,IMPORTPATH or a \"subgraphs\" bindings entry",
			"subgraph node %s: graph %s has no generated package", quote(n.ID), quote(cfg.Graph))
		return true
	}
	var child *childModel
	for _, c := range m.sub.children {
		if c.name == cfg.Graph {
			child = c
		}
	}
	if child == nil {
		child = &childModel{name: cfg.Graph, path: pkg.Path, chans: map[string]childChan{}}
		for _, c := range pkg.Doc.Channels {
			if f, err := GoName(c.Name); err == nil {
				child.chans[c.Name] = childChan{field: f, red: c.Kind()}
			}
		}
		name, err := GoName(cfg.Graph)
		if err != nil {
			d.errorf(spec.PathKey(cfgPath, "graph"), "rename the child graph", "subgraph node %s: graph name %v", quote(n.ID), err)
			return true
		}
		child.method = "Subgraph" + name
		claim(child.method, origin{desc: "graph " + quote(cfg.Graph) + " (the Nodes method of its subgraph nodes)", path: spec.PathKey(cfgPath, "graph")})
		m.sub.children = append(m.sub.children, child)
		slices.SortFunc(m.sub.children, func(a, b *childModel) int { return strings.Compare(a.method, b.method) })
	}
	child.nodes = append(child.nodes, n.ID)
	for _, mp := range []struct {
		name string
		m    map[string]string
	}{{"in", cfg.In}, {"out", cfg.Out}} {
		for _, k := range slices.Sorted(maps.Keys(mp.m)) {
			cc, pc := k, mp.m[k]
			if mp.name == "out" {
				cc, pc = pc, k
			}
			if _, ok := child.chans[cc]; !ok {
				d.errorf(spec.PathKey(spec.PathKey(cfgPath, mp.name), k), "map a channel graph "+quote(cfg.Graph)+" declares", "subgraph node %s: graph %s has no channel %s", quote(n.ID), quote(cfg.Graph), quote(cc))
			}
			if m.chanByName(pc) == nil {
				d.errorf(spec.PathKey(spec.PathKey(cfgPath, mp.name), k), "map a channel the graph declares", "subgraph node %s: no channel %s", quote(n.ID), quote(pc))
			}
		}
	}
	sn := &subNode{node: nm, cfg: cfg, child: child}
	if nm.konst != "" {
		sn.fn = "subgraph" + strings.TrimPrefix(nm.konst, "Node")
	}
	m.sub.nodes = append(m.sub.nodes, sn)
	m.sub.byNode[nm] = sn
	return true
}

// chanByName is the parent channel called name, or nil.
func (m *model) chanByName(name string) *chanModel {
	for _, c := range m.chans {
		if c.name == name {
			return c
		}
	}
	return nil
}

// importSubgraphs names the imports of the children's packages.
func (m *model) importSubgraphs(f *jen.File, add func(path, name string)) {
	if m.sub == nil {
		return
	}
	for _, c := range m.sub.children {
		name := path.Base(c.path)
		switch {
		case !token.IsIdentifier(name):
			continue // jennifer guesses a name
		case name == "child":
			f.ImportAlias(c.path, name+"pkg")
		default:
			add(c.path, name)
		}
	}
}

// subgraphMethods are the Nodes methods of the children.
func (m *model) subgraphMethods() []jen.Code {
	if m.sub == nil {
		return nil
	}
	var out []jen.Code
	for _, c := range m.sub.children {
		out = append(out, jen.Add(doc(fmt.Sprintf("%s builds the nodes of graph %s, run by subgraph nodes %s.", c.method, quote(c.name), quoteList(c.nodes)))).Line().
			Id(c.method).Params().Qual(c.path, "Nodes"))
	}
	return out
}

// quoteList quotes and joins names.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	return strings.Join(q, ", ")
}

// subgraphAdd is New's statement building subgraph node n, or nil.
func (m *model) subgraphAdd(n *nodeModel) jen.Code {
	if m.sub == nil {
		return nil
	}
	sn := m.sub.byNode[n]
	if sn == nil {
		return nil
	}
	return jen.Id("b").Dot("Add").Call(jen.Int().Call(jen.Id(n.konst)), jen.Lit(sn.child.method)).Call(
		jen.Id(sn.fn).Call(jen.Id("n").Dot(sn.child.method).Call(), jen.Op("&").Id("children")))
}

// emitSubgraphs writes, per subgraph node, the function that builds it:
// the child's New, and a Node running the child with runtime.RunSubgraph.
// Each mapped channel is one assignment, so a mapping between channels of
// different Go types fails to compile at its line. A config's limit is
// passed as runtime.WithRecursionLimit, the child run's own limit.
func (m *model) emitSubgraphs(f *jen.File) {
	if m.sub == nil {
		return
	}
	for _, sn := range m.sub.nodes {
		c := sn.child
		var in []jen.Code
		in = append(in, jen.Var().Id("in").Qual(c.path, "Update"))
		for _, cc := range slices.Sorted(maps.Keys(sn.cfg.In)) {
			pc := m.chanByName(sn.cfg.In[cc])
			set := jen.Id("in").Dot(c.chans[cc].field).Op("=")
			switch {
			case pc.pointer():
				in = append(in, jen.If(jen.Id("s").Dot(pc.has).Call()).Block(set.Id("s").Dot(pc.field)))
			case pc.lastWrite():
				in = append(in, jen.If(jen.Id("s").Dot(pc.has).Call()).Block(set.Op("&").Id("s").Dot(pc.field)))
			default:
				in = append(in, set.Id("s").Dot(pc.field))
			}
		}
		args := []jen.Code{jen.Id("ctx"), jen.Id("child"), jen.Qual(c.path, "State").Values().Dot("With").Call(jen.Id("in"))}
		if sn.cfg.Limit > 0 {
			args = append(args, jen.Qual(runtimePath, "WithRecursionLimit").Call(jen.Lit(sn.cfg.Limit)))
		}
		in = append(in,
			jen.List(jen.Id("out"), jen.Err()).Op(":=").Qual(runtimePath, "RunSubgraph").Call(args...),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Id("Update").Values(), jen.Err())),
			jen.Var().Id("u").Id("Update"),
		)
		for _, pcName := range slices.Sorted(maps.Keys(sn.cfg.Out)) {
			pc := m.chanByName(pcName)
			cc := c.chans[sn.cfg.Out[pcName]]
			set := jen.Id("u").Dot(pc.field).Op("=")
			switch {
			case cc.red == spec.LastWrite && pc.pointer():
				in = append(in, jen.If(jen.Id("out").Dot("Has"+cc.field).Call()).Block(set.Id("out").Dot(cc.field)))
			case cc.red == spec.LastWrite:
				in = append(in, jen.If(jen.Id("out").Dot("Has"+cc.field).Call()).Block(set.Op("&").Id("out").Dot(cc.field)))
			default:
				in = append(in, set.Id("out").Dot(cc.field))
			}
		}
		in = append(in, jen.Return(jen.Id("u"), jen.Nil()))
		f.Line()
		f.Add(doc(fmt.Sprintf("%s builds subgraph node %s: it runs graph %s", sn.fn, quote(sn.node.id), quote(c.name)),
			fmt.Sprintf("(package %s) to its end with runtime.RunSubgraph, seeded from the", path.Base(c.path)),
			"channels its config maps in, and writes the channels it maps out. It adds",
			"the child to children, which New hands the runtime (runtime.WithSubgraphs)",
			"so that the graph's version pins it."))
		f.Func().Id(sn.fn).Params(jen.Id("n").Qual(c.path, "Nodes"), jen.Id("children").Op("*").Index().Qual(runtimePath, "Child")).Params(jen.Id("Node"), jen.Error()).Block(
			jen.List(jen.Id("child"), jen.Err()).Op(":=").Qual(c.path, "New").Call(jen.Id("n")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Op("*").Id("children").Op("=").Append(jen.Op("*").Id("children"), jen.Id("child")),
			jen.Return(jen.Func().Params(jen.Id("ctx").Op("*").Qual(runtimePath, "Ctx"), jen.Id("s").Id("State")).Params(jen.Id("Update"), jen.Error()).Block(in...), jen.Nil()),
		)
	}
}

// emitSubgraphRegistry writes the registry adapter's methods for the
// children: each child's own FromRegistry over the same registry.
func (m *model) emitSubgraphRegistry(f *jen.File) {
	if m.sub == nil {
		return
	}
	for _, c := range m.sub.children {
		f.Line()
		f.Func().Params(jen.Id("r").Id("registryNodes")).Id(c.method).Params().Qual(c.path, "Nodes").Block(
			jen.Return(jen.Qual(c.path, "FromRegistry").Call(jen.Qual(runtimePath, "Registry").Call(jen.Id("r")))))
	}
}
