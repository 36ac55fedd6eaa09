package gen

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/dave/jennifer/jen"

	"github.com/ilmek-go/ilmek/spec"
)

// emitCodec writes codec.gen.go: the JSON form of State and Update, used at
// the checkpoint boundary and by event consumers.
func (m *model) emitCodec(f *jen.File) {
	m.emitMarshal(f)
	m.emitUnmarshal(f)
}

// emitRegistry writes registry.gen.go: the adapter for untyped registry
// nodes and its conversions between State, Update and runtime.Values.
func (m *model) emitRegistry(f *jen.File) {
	m.emitAdapter(f)
	m.emitConversions(f)
}

// jsonKey is the channel name as a JSON member name with its colon.
func jsonKey(name string) string {
	b, _ := json.Marshal(name)
	return string(b) + ":"
}

func (m *model) emitMarshal(f *jen.File) {
	f.Add(doc("MarshalJSON writes s as the JSON object of its channels: every append and",
		"merge channel ([] and {} when empty) and every last_write channel that was",
		"written (null included), as checkpoints store it."))
	body := []jen.Code{jen.Var().Id("w").Qual(genimplPath, "ObjectWriter")}
	for _, c := range m.chans {
		key := jen.Lit(jsonKey(c.name))
		fld := jen.Id("s").Dot(c.field)
		switch c.red {
		case spec.LastWrite:
			body = append(body, jen.If(jen.Id("s").Dot(c.has).Call()).Block(jen.Id("w").Dot("Member").Call(key, fld)))
		default:
			empty := "[]"
			if c.red == spec.Merge {
				empty = "{}"
			}
			body = append(body, jen.If(fld.Clone().Op("==").Nil()).Block(jen.Id("w").Dot("Raw").Call(key, jen.Lit(empty))).Else().Block(jen.Id("w").Dot("Member").Call(key, fld.Clone())))
		}
	}
	body = append(body, jen.Return(jen.Id("w").Dot("Done").Call()))
	f.Func().Params(jen.Id("s").Id("State")).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).Block(body...)
	f.Line()
	f.Add(doc("MarshalJSON writes the channels u writes as a JSON object (not its Goto)."))
	body = []jen.Code{jen.Var().Id("w").Qual(genimplPath, "ObjectWriter")}
	for _, c := range m.chans {
		key := jen.Lit(jsonKey(c.name))
		fld := jen.Id("u").Dot(c.field)
		val := fld.Clone()
		if c.red == spec.LastWrite && !c.pointer() {
			val = jen.Op("*").Add(fld.Clone())
		}
		body = append(body, jen.If(writes("u", c)).Block(jen.Id("w").Dot("Member").Call(key, val)))
	}
	body = append(body, jen.Return(jen.Id("w").Dot("Done").Call()))
	f.Func().Params(jen.Id("u").Id("Update")).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).Block(body...)
}

func (m *model) emitUnmarshal(f *jen.File) {
	f.Line()
	f.Add(doc("UnmarshalJSON reads a state written by MarshalJSON. A member that names",
		"no channel of the graph is an error."))
	var cases []jen.Code
	for _, c := range m.chans {
		stmts := []jen.Code{jen.Id("err").Op("=").Qual("encoding/json", "Unmarshal").Call(jen.Id("mb").Dot("Value"), jen.Op("&").Id("t").Dot(c.field))}
		if c.lastWrite() {
			stmts = append(stmts, jen.Id("t").Dot("set").Index(jen.Lit(c.bit/64)).Op("|=").Lit(1).Op("<<").Lit(c.bit%64))
		}
		cases = append(cases, jen.Case(jen.Lit(c.name)).Block(stmts...))
	}
	cases = append(cases, jen.Default().Block(jen.Return(jen.Qual(genimplPath, "UndeclaredInState").Call(jen.Id("mb").Dot("Key"), jen.Lit(m.graphName())))))
	loop := []jen.Code{jen.Switch(jen.Id("mb").Dot("Key")).Block(cases...)}
	if len(m.chans) > 0 {
		loop = []jen.Code{
			jen.Var().Id("err").Error(),
			loop[0],
			jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Qual(genimplPath, "StateChannelError").Call(jen.Id("mb").Dot("Key"), jen.Id("err")))),
		}
	}
	f.Func().Params(jen.Id("s").Op("*").Id("State")).Id("UnmarshalJSON").Params(jen.Id("data").Index().Byte()).Error().Block(
		jen.List(jen.Id("members"), jen.Id("err")).Op(":=").Qual(genimplPath, "StateMembers").Call(jen.Id("data")),
		jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Id("err"))),
		jen.Var().Id("t").Id("State"),
		jen.For(jen.Id("_").Op(",").Id("mb").Op(":=").Range().Id("members")).Block(loop...),
		jen.Op("*").Id("s").Op("=").Id("t"),
		jen.Return(jen.Nil()),
	)
}

func (m *model) emitAdapter(f *jen.File) {
	f.Line()
	f.Add(doc("Adapt serves this graph with an untyped node, the kind a runtime.Registry builds",
		"for runtime.FromSpec, with State and Update converted at the boundary (see",
		"genimpl.Adapter); a write the graph cannot hold fails the superstep's reduce."))
	f.Func().Id("Adapt").Params(jen.Id("fn").Qual(runtimePath, "NodeFunc")).Id("Node").Block(jen.Return(jen.Id("adapter").Dot("Node").Call(jen.Id("fn"))))
	f.Line()
	f.Comment("adapter converts between State, Update and runtime.Values for Adapt.")
	f.Var().Id("adapter").Op("=").Op("&").Qual(genimplPath, "Adapter").Types(jen.Id("State"), jen.Id("Update")).Values(lines([]jen.Code{
		jen.Id("Shape").Op(":").Id("shape"),
		jen.Id("Doc").Op(":").Id("specDoc"),
		jen.Id("Values").Op(":").Id("State").Dot("values"),
		jen.Id("Update").Op(":").Id("UpdateOf"),
		jen.Id("Fold").Op(":").Id("State").Dot("With"),
		jen.Id("Failed").Op(":").Op("func(u *Update) *").Qual(runtimePath, "ChannelError").Op("{ return u.bad }"),
		jen.Id("SetGoto").Op(":").Op("func(u *Update, to []Target) { u.Goto = to }"),
	})...)
	f.Line()
	f.Add(doc("FromRegistry returns Nodes that build every node with reg's factory for its type,",
		"given the node as the spec stores it, served through Adapt: New(FromRegistry(reg))",
		"runs the graph as runtime.FromSpec(spec, reg) would."))
	f.Func().Id("FromRegistry").Params(jen.Id("reg").Qual(runtimePath, "Registry")).Id("Nodes").Block(jen.Return(jen.Id("registryNodes").Call(jen.Id("reg"))))
	f.Line()
	f.Comment("registryNodes implements Nodes with a registry.")
	f.Type().Id("registryNodes").Qual(runtimePath, "Registry")
	if m.hasBuiltins() {
		f.Line()
		f.Func().Params(jen.Id("r").Id("registryNodes")).Add(builtinsMethod()).Block(jen.Return(jen.Qual(runtimePath, "Registry").Call(jen.Id("r"))))
	}
	for _, t := range m.types {
		if t.builtin {
			continue
		}
		f.Line()
		f.Func().Params(jen.Id("r").Id("registryNodes")).Id(t.method).Params(jen.Id("id").Id("NodeID"), jen.Id("_").Add(t.configTypeCode())).Params(jen.Id("Node"), jen.Error()).Block(
			jen.Return(jen.Id("r").Dot("build").Call(jen.Id("id"))))
	}
	m.emitSubgraphRegistry(f)
	f.Line()
	f.Comment("build builds node id with its type's factory.")
	f.Func().Params(jen.Id("r").Id("registryNodes")).Id("build").Params(jen.Id("id").Id("NodeID")).Params(jen.Id("Node"), jen.Error()).Block(
		jen.Return(jen.Id("adapter").Dot("Registry").Call(jen.Qual(runtimePath, "Registry").Call(jen.Id("r")), jen.Int().Call(jen.Id("id")))),
	)
}

// emitSpec writes spec.gen.go: the canonical document, embedded as a
// multi-line raw string so that a change of the document is a change of
// the lines it touches (see specLiteral).
func (m *model) emitSpec(f *jen.File) {
	f.Comment("specJSON is the spec this package was generated from: its canonical form, laid out compactly.")
	if text := specText(string(m.g.Encode())); rawSpec([]byte(text)) {
		// The document as a raw string, written as text: it is most of
		// the file, and gofmt leaves a raw string as it is, so it need
		// not go through jennifer and go/format.
		ph, t := m.table(inBlock)
		t.Grow(len(text) + len("const specJSON = ``\n"))
		t.WriteString("const specJSON = `")
		t.WriteString(text)
		t.WriteString("`\n")
		f.Add(ph)
	} else {
		f.Const().Id("specJSON").Op("=").Add(specLiteral(text))
	}
	f.Line()
	f.Comment("specDoc decodes specJSON once.")
	f.Var().Id("specDoc").Op("=").Qual(genimplPath, "SpecDoc").Call(jen.Lit(m.opts.Source), jen.Id("specJSON"))
	f.Line()
	f.Comment("shape is the static description nodes see through Ctx.Graph.")
	f.Var().Id("shape").Op("=").Qual(genimplPath, "ShapeOf").Call(jen.Id("specDoc"))
}

// specLiteral writes text as a raw string literal, one line of the document
// per line of code, or as an interpreted string on one line when text holds
// what a raw string cannot: a backtick, a carriage return (dropped from raw
// strings), NUL, a byte-order mark or invalid UTF-8 (refused in Go
// source). The canonical form indents every line but the first and the
// last, so no line of the literal starts with a //go: directive that go
// generate would read.
func specLiteral(text string) jen.Code {
	if !rawSpec([]byte(text)) {
		return jen.Lit(text)
	}
	return jen.Op("`" + text + "`")
}

// rawSpec reports whether specLiteral writes text as a raw string.
func rawSpec(text []byte) bool {
	return !bytes.ContainsAny(text, "`\r\x00\ufeff") && utf8.Valid(text)
}
