package gen

import (
	"fmt"
	"go/types"
	"strconv"

	"github.com/dave/jennifer/jen"

	"github.com/ilmek-go/ilmek/spec"
)

// emitProgram writes program.gen.go: the runtime.Program the executor runs,
// with the guards, reducers and planning compiled to Go.
func (m *model) emitProgram(f *jen.File) {
	f.Comment("These constants fail to compile when this package and the runtime it")
	f.Comment("is built with differ in version: re-run `go generate` with the ilmekgen")
	f.Comment("of the same module version as the runtime.")
	f.Const().Defs(
		jen.Id("_").Op("=").Qual(runtimePath, "EnforceVersion").Call(jen.Qual(runtimePath, "GenVersion").Op("-").Lit(Version)),
		jen.Id("_").Op("=").Qual(runtimePath, "EnforceVersion").Call(jen.Lit(Version).Op("-").Qual(runtimePath, "MinGenVersion")),
	)
	f.Line()
	f.Comment("program is the graph-specific half of a run; the runtime's executor is")
	f.Comment("the other half.")
	f.Type().Id("program").Struct(jen.Id("nodes").Index(jen.Lit(len(m.nodes))).Id("Node"))
	f.Line()
	f.Var().Id("_").Qual(runtimePath, "Program").Types(jen.Id("State"), jen.Id("Update")).Op("=").Parens(jen.Op("*").Id("program")).Parens(jen.Nil())
	f.Line()
	m.emitShape(f)
	f.Line()
	f.Comment("Describe returns the graph's static shape.")
	f.Func().Params(jen.Id("p").Op("*").Id("program")).Id("Describe").Params().Op("*").Qual(runtimePath, "Shape").Block(jen.Return(jen.Id("shape")))
	f.Line()
	f.Comment("Zero returns the state of a thread on which nothing was written.")
	f.Func().Params(jen.Id("p").Op("*").Id("program")).Id("Zero").Params().Id("State").Block(jen.Return(jen.Id("State").Values()))
	f.Line()
	f.Comment("Reduce folds the updates in order into prev. Appends grow prev's slices")
	f.Comment("in place past their length (a state's holders never see past it); merge")
	f.Comment("maps are copied once per Reduce before they are written.")
	f.Func().Params(jen.Id("p").Op("*").Id("program")).Id("Reduce").Params(jen.Id("prev").Id("State"), jen.Id("updates").Index().Id("Update")).Params(jen.Id("State"), jen.Int(), jen.Error()).Block(
		jen.Id("next").Op(":=").Id("prev"),
		m.ownDecl(),
		jen.For(jen.Id("i").Op(":=").Range().Id("updates")).Block(
			jen.Id("u").Op(":=").Op("&").Id("updates").Index(jen.Id("i")),
			jen.If(jen.Id("u").Dot("bad").Op("!=").Nil()).Block(jen.Return(jen.Id("prev"), jen.Id("i"), jen.Id("u").Dot("bad"))),
			jen.Id("next").Dot("apply").Call(append([]jen.Code{jen.Id("u")}, m.applyArgs(true)...)...),
		),
		jen.Return(jen.Id("next"), jen.Lit(0), jen.Nil()),
	)
	f.Line()
	m.emitPlan(f)
	f.Line()
	m.emitRun(f)
	f.Line()
	f.Comment("EncodeState writes s as the JSON object of its channels.")
	f.Func().Params(jen.Id("p").Op("*").Id("program")).Id("EncodeState").Params(jen.Id("s").Id("State")).Params(jen.Index().Byte(), jen.Error()).Block(jen.Return(jen.Id("s").Dot("MarshalJSON").Call()))
	f.Line()
	m.emitEncodeWrites(f)
	f.Line()
	f.Comment("DecodeState reads a state written by EncodeState.")
	f.Func().Params(jen.Id("p").Op("*").Id("program")).Id("DecodeState").Params(jen.Id("data").Index().Byte()).Params(jen.Id("State"), jen.Error()).Block(
		jen.Var().Id("s").Id("State"),
		jen.Id("err").Op(":=").Id("s").Dot("UnmarshalJSON").Call(jen.Id("data")),
		jen.Return(jen.Id("s"), jen.Id("err")),
	)
	f.Line()
	f.Comment("Spec returns a copy of the document the package was generated from.")
	f.Func().Params(jen.Id("p").Op("*").Id("program")).Id("Spec").Params().Params(jen.Op("*").Qual(specPath, "Graph"), jen.Error()).Block(
		jen.List(jen.Id("g"), jen.Id("err")).Op(":=").Id("specDoc").Call(),
		jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Id("err"))),
		jen.Return(jen.Id("g").Dot("Clone").Call(), jen.Nil()),
	)
	m.emitGuardVars(f)
}

func (m *model) emitShape(f *jen.File) {
	nodes, t := m.table(inComposite)
	for _, n := range m.nodes {
		t.line(2, "{ID: ", strconv.Quote(n.id), ", Type: ", strconv.Quote(n.typ.name), "},")
	}
	chans := make([]jen.Code, len(m.chans))
	for i, c := range m.chans {
		chans[i] = jen.Values(jen.Id("Name").Op(":").Lit(c.name), jen.Id("Reducer").Op(":").Lit(string(c.red)))
	}
	name := ""
	if m.g.NameKind == spec.Set {
		name = m.g.Name
	}
	f.Comment("shape is the static description nodes see through Ctx.Graph.")
	f.Var().Id("shape").Op("=").Op("&").Qual(runtimePath, "Shape").Values(lines([]jen.Code{
		jen.Id("Name").Op(":").Lit(name),
		jen.Id("Nodes").Op(":").Index().Qual(runtimePath, "NodeShape").Values(t.elements(nodes)...),
		jen.Id("Channels").Op(":").Index().Qual(runtimePath, "ChannelShape").Values(lines(chans)...),
	})...)
}

// lines puts every element on its own line.
func lines(items []jen.Code) []jen.Code {
	if len(items) == 0 {
		return nil
	}
	out := make([]jen.Code, len(items))
	for i, it := range items {
		out[i] = jen.Line().Add(it)
	}
	out[len(out)-1] = jen.Line().Add(items[len(items)-1]).Op(",").Line()
	return out
}

func (m *model) emitPlan(f *jen.File) {
	f.Comment("Plan adds the targets of the static edges leaving node from whose guards")
	f.Comment("hold on s, in edge order.")
	x := mixed{m: m, where: inBlock}
	for from := -1; from < len(m.nodes); from++ {
		if from >= 0 && m.planText(x.text, from) {
			continue
		}
		var body []jen.Code
		for _, e := range m.edges[from+1] {
			body = append(body, m.edgeCode(e)...)
		}
		if len(body) == 0 {
			continue
		}
		label := jen.Qual(runtimePath, "StartNode")
		if from >= 0 {
			label = jen.Int().Call(jen.Id(m.nodes[from].konst))
		}
		x.code(jen.Case(label).Block(body...))
	}
	var body []jen.Code
	if len(x.items) > 0 {
		body = append(body, jen.Switch(jen.Id("from")).Block(x.items...))
	}
	body = append(body, jen.Return(jen.Nil()))
	f.Func().Params(jen.Id("p").Op("*").Id("program")).Id("Plan").Params(jen.Id("s").Op("*").Id("State"), jen.Id("from").Int(), jen.Id("pl").Op("*").Qual(runtimePath, "Planner").Types(jen.Id("State"))).Error().Block(body...)
}

// edgeCode plans one edge.
// planText writes the Plan case of node from as table text when every
// edge leaving it is plain (no guard) and leads to a node — the case
// edgeCode would write as a comment and a pl.Node call per edge — and
// reports whether it did; a node without edges needs no case.
func (m *model) planText(text func() *table, from int) bool {
	edges := m.edges[from+1]
	for _, e := range edges {
		if e.when != nil || e.to < 0 {
			return false
		}
	}
	if len(edges) == 0 {
		return true
	}
	t := text()
	t.line(1, "case int(", m.nodes[from].konst, "):")
	for _, e := range edges {
		t.line(2, sanitizeLine(fmt.Sprintf("// edges[%d]: %s -> %s", e.index, quote(m.nodes[from].id), quote(m.nodes[e.to].id))))
		t.line(2, "pl.Node(int(", m.nodes[e.to].konst, "))")
	}
	return true
}

func (m *model) edgeCode(e *edgeModel) []jen.Code {
	src := spec.Start
	if e.from >= 0 {
		src = m.nodes[e.from].id
	}
	dst := spec.End
	if e.to >= 0 {
		dst = m.nodes[e.to].id
	}
	desc := fmt.Sprintf("edges[%d]: %s -> %s", e.index, quote(src), quote(dst))
	if e.when != nil {
		desc += " when " + predicateText(e.when)
	}
	comment := jen.Comment(sanitizeLine("// " + desc))
	if e.to < 0 {
		return []jen.Code{jen.Comment(sanitizeLine("// " + desc + ": nothing to plan"))}
	}
	plan := jen.Id("pl").Dot("Node").Call(jen.Int().Call(jen.Id(m.nodes[e.to].konst)))
	if e.when == nil {
		return []jen.Code{comment, plan}
	}
	g, _ := compileGuard(e)
	switch {
	case g.always:
		return []jen.Code{comment, jen.Comment(sanitizeLine("// always: " + g.note)), plan}
	case g.never:
		return []jen.Code{comment, jen.Comment(sanitizeLine("// never: " + g.note))}
	}
	return []jen.Code{comment, jen.If(g.code).Block(plan)}
}

func (m *model) emitRun(f *jen.File) {
	f.Comment("Run runs node's body and hands a command's targets to the executor.")
	f.Func().Params(jen.Id("p").Op("*").Id("program")).Id("Run").Params(jen.Id("ctx").Op("*").Qual(runtimePath, "Ctx"), jen.Id("node").Int(), jen.Id("s").Id("State")).Params(jen.Id("Update"), jen.Error()).Block(
		jen.List(jen.Id("u"), jen.Id("err")).Op(":=").Id("p").Dot("nodes").Index(jen.Id("node")).Call(jen.Id("ctx"), jen.Id("s")),
		jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Id("Update").Values(), jen.Id("err"))),
		jen.If(jen.Id("u").Dot("Goto").Op("!=").Nil()).Block(
			jen.Id("targets").Op(":=").Make(jen.Index().Qual(runtimePath, "Target").Types(jen.Id("State")), jen.Lit(0), jen.Len(jen.Id("u").Dot("Goto"))),
			jen.For(jen.List(jen.Id("_"), jen.Id("t")).Op(":=").Range().Id("u").Dot("Goto")).Block(
				jen.If(jen.Id("t").Dot("node").Op("<").Id("End").Op("||").Int().Call(jen.Id("t").Dot("node")).Op(">=").Len(jen.Id("nodeIDs")).Op("||").Id("t").Dot("send").Op("&&").Id("t").Dot("node").Op("==").Id("End")).Block(
					jen.Return(jen.Id("Update").Values(), jen.Op("&").Qual(runtimePath, "UnknownTargetError").Values(jen.Id("Target").Op(":").Id("t").Dot("node").Dot("String").Call())),
				),
				jen.Id("targets").Op("=").Append(jen.Id("targets"), jen.Qual(runtimePath, "Target").Types(jen.Id("State")).Values(jen.Id("Node").Op(":").Int().Call(jen.Id("t").Dot("node")), jen.Id("Send").Op(":").Id("t").Dot("send"), jen.Id("Input").Op(":").Id("t").Dot("input"))),
			),
			jen.Qual(runtimePath, "SetGoto").Call(jen.Id("ctx"), jen.Id("targets")),
		),
		jen.Return(jen.Id("u"), jen.Nil()),
	)
}

// emitGuardVars writes the predicates that runtime.Holds evaluates.
func (m *model) emitGuardVars(f *jen.File) {
	var defs []jen.Code
	for _, es := range m.edges {
		for _, e := range es {
			if e.when == nil {
				continue
			}
			if g, _ := compileGuard(e); !g.holds {
				continue
			}
			defs = append(defs, jen.Add(doc(fmt.Sprintf("%s is the guard of edges[%d]: %s.", guardVar(e), e.index, predicateText(e.when)))).Line().
				Id(guardVar(e)).Op("=").Op("&").Qual(specPath, "Predicate").Values(predicateFields(e.when)...))
		}
	}
	if len(defs) == 0 {
		return
	}
	f.Line()
	f.Comment("The predicates of the guards on channels typed any, evaluated by")
	f.Comment("runtime.Holds exactly as the spec-built program evaluates them.")
	f.Var().Defs(defs...)
}

func predicateFields(p *spec.Predicate) []jen.Code {
	out := []jen.Code{
		jen.Id("Channel").Op(":").Lit(p.Channel),
		jen.Id("Op").Op(":").Qual(specPath, opConst(p.Op)),
	}
	if p.Op == spec.OpIn {
		vals := make([]jen.Code, len(p.Values))
		for i, l := range p.Values {
			vals[i] = literalCode(l)
		}
		out = append(out, jen.Id("Values").Op(":").Index().Qual(specPath, "Literal").Values(vals...))
	} else {
		out = append(out, jen.Id("Value").Op(":").Qual(specPath, "Literal").Add(literalFields(p.Value)))
	}
	return out
}

func literalCode(l spec.Literal) jen.Code { return literalFields(l) }

func literalFields(l spec.Literal) *jen.Statement {
	switch l.Kind {
	case spec.LitString:
		return jen.Values(jen.Id("Kind").Op(":").Qual(specPath, "LitString"), jen.Id("Str").Op(":").Lit(l.Str))
	case spec.LitNumber:
		return jen.Values(jen.Id("Kind").Op(":").Qual(specPath, "LitNumber"), jen.Id("Num").Op(":").Lit(l.Num))
	case spec.LitBool:
		return jen.Values(jen.Id("Kind").Op(":").Qual(specPath, "LitBool"), jen.Id("Bool").Op(":").Lit(l.Bool))
	}
	return jen.Values(jen.Id("Kind").Op(":").Qual(specPath, "LitNull"))
}

func opConst(op spec.Op) string {
	switch op {
	case spec.OpEq:
		return "OpEq"
	case spec.OpNeq:
		return "OpNeq"
	case spec.OpIn:
		return "OpIn"
	case spec.OpGt:
		return "OpGt"
	case spec.OpLt:
		return "OpLt"
	}
	return "OpTruthy"
}

// emitEncodeWrites writes the program's EncodeWrites (runtime.WriteEncoder):
// for each channel, in the encoding's order, what the updates changed, so
// that a checkpoint stored as a delta encodes the updates and not the
// state.
func (m *model) emitEncodeWrites(f *jen.File) {
	f.Add(doc("EncodeWrites encodes what updates changed from prev to next, channel by",
		"channel: a last_write channel's new value, an append channel's new",
		"elements, a merge channel's merged keys (runtime.WriteEncoder)."))
	wr := func(c *chanModel) jen.Code {
		return jen.Qual(genimplPath, "Wrote").Call(jen.Id("updates"), jen.Func().Params(jen.Id("u").Op("*").Id("Update")).Bool().Block(
			jen.Return(jen.Id("u").Dot(c.field).Op("!=").Nil())))
	}
	body := []jen.Code{jen.Id("w").Op(":=").Qual(genimplPath, "NewWrites").Call(jen.Id("dst"))}
	for _, c := range m.chans {
		key := jen.Lit(writeKey(c.name))
		prev, next := jen.Id("prev").Dot(c.field), jen.Id("next").Dot(c.field)
		switch {
		case c.red == spec.LastWrite:
			body = append(body, jen.If(wr(c)).Block(
				jen.If(jen.Op("!").Id("prev").Dot(c.has).Call()).Block(jen.Return(jen.Id("dst"), jen.False(), jen.Nil())),
				jen.Id("w").Dot("Value").Call(key, next),
			))
		case c.red == spec.Append && appendsByElement(c.typ):
			body = append(body, jen.Qual(genimplPath, "Append").Call(jen.Op("&").Id("w"), key, prev, next))
		case c.red == spec.Append:
			body = append(body, jen.If(jen.Len(next.Clone()).Op("!=").Len(prev.Clone())).Block(jen.Id("w").Dot("Value").Call(key, next.Clone())))
		case c.red == spec.Merge && mergesByKey(c.typ):
			body = append(body, jen.Qual(genimplPath, "Merge").Call(jen.Op("&").Id("w"), key, prev, next, jen.Id("updates"),
				jen.Func().Params(jen.Id("u").Op("*").Id("Update")).Add(typeCode(c.typ)).Block(jen.Return(jen.Id("u").Dot(c.field)))))
		default: // a merge channel of a named map type
			body = append(body, jen.If(wr(c)).Block(
				jen.If(next.Clone().Op("==").Nil()).Block(jen.Id("w").Dot("Raw").Call(key, jen.Lit("{}"))).Else().Block(jen.Id("w").Dot("Value").Call(key, next.Clone())),
			))
		}
	}
	body = append(body, jen.Return(jen.Id("w").Dot("Done").Call()))
	f.Func().Params(jen.Id("p").Op("*").Id("program")).Id("EncodeWrites").Params(
		jen.Id("dst").Index().Qual(runtimePath, "ChannelWrite"), jen.List(jen.Id("prev"), jen.Id("next")).Op("*").Id("State"), jen.Id("updates").Index().Id("Update"),
	).Params(jen.Index().Qual(runtimePath, "ChannelWrite"), jen.Bool(), jen.Error()).Block(body...)
}

// writeKey is a channel's name as a runtime.ChannelWrite names it: its JSON
// key without the quotes.
func writeKey(name string) string {
	k := jsonKey(name)
	return k[1 : len(k)-2]
}

// appendsByElement reports whether an append channel of type t encodes as
// the JSON array of its elements, each encoded alone, so that a write can
// hold only the new ones: an unnamed slice whose elements are not bytes
// (encoding/json writes a []byte as one base64 string).
func appendsByElement(t types.Type) bool {
	s, ok := t.(*types.Slice)
	if !ok {
		return false
	}
	b, ok := s.Elem().Underlying().(*types.Basic)
	return !ok || b.Kind() != types.Uint8
}

// mergesByKey reports whether a merge channel of type t encodes as the
// JSON object of its entries, each encoded alone: an unnamed map.
func mergesByKey(t types.Type) bool {
	_, ok := t.(*types.Map)
	return ok
}
