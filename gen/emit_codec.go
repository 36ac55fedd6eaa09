package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
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
		if c.red == spec.LastWrite {
			val = jen.Op("*").Add(fld.Clone())
		}
		body = append(body, jen.If(fld.Clone().Op("!=").Nil()).Block(jen.Id("w").Dot("Member").Call(key, val)))
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
	f.Add(doc("Adapt serves this graph with an untyped node, the kind a runtime.Registry",
		"builds for runtime.FromSpec. It converts the state to runtime.Values and the",
		"returned values to an Update at the boundary (through JSON for channels",
		"with bound types), runs fn with the real *runtime.Ctx (steps, interrupts",
		"and events work), and turns a command recorded with ctx.Command into Goto.",
		"A write the graph cannot hold (an undeclared channel, a non-object on a",
		"merge channel, a value its Go type cannot decode) fails the superstep's",
		"reduce, as it does in the spec-built program."))
	f.Func().Id("Adapt").Params(jen.Id("fn").Qual(runtimePath, "NodeFunc")).Id("Node").Block(
		jen.Return(jen.Func().Params(jen.Id("ctx").Op("*").Qual(runtimePath, "Ctx"), jen.Id("s").Id("State")).Params(jen.Id("Update"), jen.Error()).Block(
			jen.List(jen.Id("in"), jen.Id("err")).Op(":=").Id("s").Dot("values").Call(),
			jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Id("Update").Values(), jen.Id("err"))),
			jen.List(jen.Id("out"), jen.Id("err")).Op(":=").Id("fn").Call(jen.Id("ctx"), jen.Id("in")),
			jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Id("Update").Values(), jen.Id("err"))),
			jen.Id("u").Op(":=").Id("UpdateOf").Call(jen.Id("out")),
			jen.If(jen.List(jen.Id("u").Dot("Goto"), jen.Id("err")).Op("=").Qual(genimplPath, "Command").Call(jen.Id("ctx"), jen.Id("targetOf")), jen.Id("err").Op("!=").Nil()).Block(
				jen.Return(jen.Id("Update").Values(), jen.Id("err"))),
			jen.Return(jen.Id("u"), jen.Nil()),
		)),
	)
	f.Line()
	f.Add(doc("FromRegistry returns Nodes that build every node with the factory reg has",
		"for its type, given the node exactly as the spec stores it (raw config",
		"included), and serve it through Adapt: New(FromRegistry(reg)) runs the",
		"graph as runtime.FromSpec(spec, reg) would. A type missing from reg fails",
		"New."))
	f.Func().Id("FromRegistry").Params(jen.Id("reg").Qual(runtimePath, "Registry")).Id("Nodes").Block(jen.Return(jen.Id("registryNodes").Values(jen.Id("reg").Op(":").Id("reg"))))
	f.Line()
	f.Comment("registryNodes implements Nodes with a registry.")
	f.Type().Id("registryNodes").Struct(jen.Id("reg").Qual(runtimePath, "Registry"))
	for _, t := range m.types {
		f.Line()
		f.Add(doc(fmt.Sprintf("%s builds a node of type %s from the registry.", t.method, quote(t.name))))
		f.Func().Params(jen.Id("r").Id("registryNodes")).Id(t.method).Params(jen.Id("id").Id("NodeID"), jen.Id("_").Add(t.configTypeCode())).Params(jen.Id("Node"), jen.Error()).Block(
			jen.Return(jen.Id("r").Dot("build").Call(jen.Id("id"))))
	}
	f.Line()
	f.Comment("build builds node id with its type's factory.")
	f.Func().Params(jen.Id("r").Id("registryNodes")).Id("build").Params(jen.Id("id").Id("NodeID")).Params(jen.Id("Node"), jen.Error()).Block(
		jen.List(jen.Id("fn"), jen.Id("err")).Op(":=").Qual(genimplPath, "RegistryNode").Call(jen.Id("r").Dot("reg"), jen.Id("specDoc"), jen.Int().Call(jen.Id("id"))),
		jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Id("err"))),
		jen.Return(jen.Id("Adapt").Call(jen.Id("fn")), jen.Nil()),
	)
	f.Line()
	f.Comment("nodeByID returns the NodeID of a spec node id (or __end__).")
	cases, t := m.table(inBlock)
	for _, n := range m.nodes {
		t.line(1, "case ", strconv.Quote(n.id), ":")
		t.line(2, "return ", n.konst, ", true")
	}
	f.Func().Id("nodeByID").Params(jen.Id("id").String()).Params(jen.Id("NodeID"), jen.Bool()).Block(
		jen.Switch(jen.Id("id")).Block(jen.Case(jen.Qual(specPath, "End")).Block(jen.Return(jen.Id("End"), jen.True())), cases),
		jen.Return(jen.Lit(0), jen.False()),
	)
	f.Line()
	f.Comment("targetOf converts an untyped goto target.")
	f.Func().Id("targetOf").Params(jen.Id("g").Qual(runtimePath, "Goto")).Params(jen.Id("Target"), jen.Error()).Block(
		jen.List(jen.Id("id"), jen.Id("ok")).Op(":=").Id("nodeByID").Call(jen.Id("g").Dot("Node")),
		jen.If(jen.Op("!").Id("ok").Op("||").Id("g").Dot("Send").Op("&&").Id("id").Op("==").Id("End")).Block(
			jen.Return(jen.Id("Target").Values(), jen.Op("&").Qual(runtimePath, "UnknownTargetError").Values(jen.Id("Target").Op(":").Id("g").Dot("Node")))),
		jen.If(jen.Op("!").Id("g").Dot("Send")).Block(jen.Return(jen.Id("To").Call(jen.Id("id")), jen.Nil())),
		jen.List(jen.Id("s"), jen.Id("err")).Op(":=").Id("stateOf").Call(jen.Id("g").Dot("Input")),
		jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Id("Target").Values(), jen.Qual("fmt", "Errorf").Call(jen.Lit("send to %q: %w"), jen.Id("g").Dot("Node"), jen.Id("err")))),
		jen.Return(jen.Id("SendState").Call(jen.Id("id"), jen.Id("s")), jen.Nil()),
	)
}

// emitSpec writes spec.gen.go: the canonical document, embedded as a
// multi-line raw string so that a change of the document is a change of
// the lines it touches (see specLiteral).
func (m *model) emitSpec(f *jen.File) {
	f.Comment("specJSON is the spec this package was generated from, in canonical form.")
	if text := m.g.Encode(); rawSpec(text) {
		// The document as a raw string, written as text: it is most of
		// the file, and gofmt leaves a raw string as it is.
		ph, t := m.lineTable("const specJSON = ")
		t.Grow(len(text) + 20)
		t.WriteString("const specJSON = `")
		t.Write(text)
		t.WriteString("`\n")
		f.Const().Id("specJSON").Op("=").Add(ph)
	} else {
		f.Const().Id("specJSON").Op("=").Add(specLiteral(string(text)))
	}
	f.Line()
	f.Comment("specDoc decodes specJSON once.")
	f.Var().Id("specDoc").Op("=").Qual(genimplPath, "SpecDoc").Call(jen.Lit(m.opts.Source), jen.Id("specJSON"))
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
