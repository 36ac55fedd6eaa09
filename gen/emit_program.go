package gen

import (
	"fmt"
	"go/types"

	"github.com/dave/jennifer/jen"

	"github.com/ilmek-go/ilmek/spec"
)

// emitProgram writes program.gen.go: the genimpl.Program the executor runs,
// with the guards, reducers and planning compiled to Go.
func (m *model) emitProgram(f *jen.File) {
	f.Comment("This fails to compile when runtime/genimpl is not of this package's version: run go generate.")
	enforce := func(x jen.Code) jen.Code { return jen.Qual(genimplPath, "EnforceVersion").Call(x) }
	f.Const().List(jen.Id("_"), jen.Id("_")).Op("=").List(
		enforce(jen.Qual(genimplPath, "GenVersion").Op("-").Lit(Version)),
		enforce(jen.Lit(Version).Op("-").Qual(genimplPath, "MinGenVersion")),
	)
	f.Line()
	f.Comment("program is the graph-specific half of a run (genimpl.Static has its fixed")
	f.Comment("methods); the runtime's executor is the other half.")
	f.Type().Id("program").Struct(
		jen.Qual(genimplPath, "Static").Types(jen.Id("State"), jen.Op("*").Id("State")),
		jen.Id("nodes").Index(jen.Lit(len(m.nodes))).Id("Node"),
	)
	f.Line()
	// next is the caller's state passed by value: folding into it changes
	// nothing the caller holds but what apply grows in place, and a copy
	// of it would cost a superstep a copy of the state (a failed fold's
	// result is discarded).
	f.Comment("Reduce folds the updates in order into next, its copy of the state, growing")
	f.Comment("its append slices in place; on failure the executor discards what it returns.")
	f.Func().Params(jen.Id("p").Op("*").Id("program")).Id("Reduce").Params(jen.Id("next").Id("State"), jen.Id("updates").Index().Id("Update")).Params(jen.Id("State"), jen.Int(), jen.Error()).Block(
		m.ownDecl(),
		jen.For(jen.Id("i").Op(":=").Range().Id("updates")).Block(
			jen.Id("u").Op(":=").Op("&").Id("updates").Index(jen.Id("i")),
			jen.If(jen.Id("u").Dot("bad").Op("!=").Nil()).Block(jen.Return(jen.Id("next"), jen.Id("i"), jen.Id("u").Dot("bad"))),
			jen.Id("next").Dot("apply").Call(append([]jen.Code{jen.Id("u")}, m.applyArgs(true)...)...),
		),
		jen.Return(jen.Id("next"), jen.Lit(0), jen.Nil()),
	)
	f.Line()
	m.emitPlan(f)
	f.Line()
	m.emitRun(f)
	f.Line()
	m.emitEncodeWrites(f)
	m.emitGuardVars(f)
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
	f.Comment("Plan adds the targets of the edges leaving node from whose guards hold on s.")
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
		label := jen.Qual(genimplPath, "StartNode")
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
	f.Func().Params(jen.Id("p").Op("*").Id("program")).Id("Plan").Params(jen.Id("s").Op("*").Id("State"), jen.Id("from").Int(), jen.Id("pl").Op("*").Qual(genimplPath, "Planner").Types(jen.Id("State"))).Error().Block(body...)
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
	f.Comment("Run runs node's body; a command's Goto goes to the executor.")
	f.Func().Params(jen.Id("p").Op("*").Id("program")).Id("Run").Params(jen.Id("ctx").Op("*").Qual(runtimePath, "Ctx"), jen.Id("node").Int(), jen.Id("s").Id("State")).Params(jen.Id("Update"), jen.Index().Id("Target"), jen.Error()).Block(
		jen.List(jen.Id("u"), jen.Id("err")).Op(":=").Id("p").Dot("nodes").Index(jen.Id("node")).Call(jen.Id("ctx"), jen.Id("s")),
		jen.Return(jen.Id("u"), jen.Id("u").Dot("Goto"), jen.Id("err")),
	)
}

// emitGuardVars writes the predicates that spec.Predicate.Holds evaluates.
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
	f.Comment("spec.Predicate.Holds exactly as the spec-built program evaluates them.")
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

// emitEncodeWrites writes the program's EncodeWrites (genimpl.WriteEncoder):
// for each channel, in the encoding's order, what the updates changed, so
// that a checkpoint stored as a delta encodes the updates and not the
// state.
func (m *model) emitEncodeWrites(f *jen.File) {
	f.Add(doc("EncodeWrites encodes what updates changed from prev to next (genimpl.WriteEncoder)."))
	wr := func(c *chanModel) jen.Code {
		test := "u." + c.field + " != nil"
		if c.pointer() {
			test += fmt.Sprintf(" || u.null[%d]&(1<<%d) != 0", c.bit/64, c.bit%64)
		}
		return jen.Qual(genimplPath, "Wrote").Call(jen.Id("updates"), jen.Op("func(u *Update) bool { return "+test+" }"))
	}
	body := []jen.Code{jen.Id("w").Op(":=").Qual(genimplPath, "NewWrites").Call(jen.Id("dst"))}
	for _, c := range m.chans {
		key := jen.Lit(writeKey(c.name))
		prev, next := jen.Id("prev").Dot(c.field), jen.Id("next").Dot(c.field)
		switch {
		case c.red == spec.LastWrite:
			body = append(body, jen.If(jen.Op("!").Qual(genimplPath, "LastWrite").Call(jen.Op("&").Id("w"), key, wr(c), jen.Id("prev").Dot(c.has).Call(), jen.Op("&").Add(next))).Block(
				jen.Return(jen.Id("dst"), jen.False(), jen.Nil())))
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
