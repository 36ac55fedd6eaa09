package gen

import (
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ilmek-go/ilmek/spec"
)

// The adapter's conversions between the typed State/Update and the untyped
// runtime.Values. Channels of the default types keep their Go values as the
// spec-built program would (an append write of a list is its elements, of
// anything else one element; a merge write must be an object); channels of
// bound types go through JSON into their Go type.

// convKind classifies how a channel converts.
type convKind int

const (
	convAny       convKind = iota // unbound any: as is
	convIface                     // bound interface: type assertion
	convAppendAny                 // unbound append
	convMergeAny                  // unbound merge
	convValue                     // bound last_write: JSON
	convList                      // bound append: JSON
	convObject                    // bound merge: JSON
)

func (c *chanModel) conv() convKind {
	switch {
	case !c.bound && c.red == spec.Append:
		return convAppendAny
	case !c.bound && c.red == spec.Merge:
		return convMergeAny
	case !c.bound:
		return convAny
	case c.red == spec.Append:
		return convList
	case c.red == spec.Merge:
		return convObject
	case isInterface(c.typ):
		return convIface
	}
	return convValue
}

func (m *model) uses(k convKind) bool {
	for _, c := range m.chans {
		if c.conv() == k {
			return true
		}
	}
	return false
}

func (m *model) emitConversions(f *jen.File) {
	rt := func(name string) *jen.Statement { return jen.Qual(runtimePath, name) }
	chErr := jen.Op("*").Add(rt("ChannelError"))

	// values
	var vals []jen.Code
	vals = append(vals, jen.Id("v").Op(":=").Make(rt("Values"), jen.Lit(len(m.chans))))
	jsonInto := func(c *chanModel, src jen.Code) jen.Code {
		return jen.Block(
			jen.List(jen.Id("x"), jen.Id("err")).Op(":=").Id("jsonValue").Call(src),
			jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit("channel %q: %w"), jen.Lit(c.name), jen.Id("err")))),
			jen.Id("v").Index(jen.Lit(c.name)).Op("=").Id("x"),
		)
	}
	usesJSONValue := false
	for _, c := range m.chans {
		fld := jen.Id("s").Dot(c.field)
		key := jen.Id("v").Index(jen.Lit(c.name))
		switch c.conv() {
		case convAny, convIface:
			vals = append(vals, jen.If(jen.Id("s").Dot(c.has).Call()).Block(key.Clone().Op("=").Add(fld)))
		case convValue:
			usesJSONValue = true
			vals = append(vals, jen.If(jen.Id("s").Dot(c.has).Call()).Add(jsonInto(c, fld)))
		case convAppendAny, convMergeAny:
			empty := jen.Index().Any().Values()
			if c.red == spec.Merge {
				empty = jen.Map(jen.String()).Any().Values()
			}
			vals = append(vals, jen.If(fld.Clone().Op("==").Nil()).Block(key.Clone().Op("=").Add(empty)).Else().Block(key.Clone().Op("=").Add(fld.Clone())))
		case convList, convObject:
			usesJSONValue = true
			empty := jen.Index().Any().Values()
			if c.red == spec.Merge {
				empty = jen.Map(jen.String()).Any().Values()
			}
			vals = append(vals, jen.If(fld.Clone().Op("==").Nil()).Block(key.Clone().Op("=").Add(empty)).Else().Add(jsonInto(c, fld.Clone())))
		}
	}
	vals = append(vals, jen.Return(jen.Id("v"), jen.Nil()))
	f.Line()
	f.Comment("values converts s to the untyped state a registry node reads.")
	f.Func().Params(jen.Id("s").Id("State")).Id("values").Params().Params(rt("Values"), jen.Error()).Block(vals...)

	// updateOf and stateOf share the per-channel conversion.
	convert := func(c *chanModel, state bool) []jen.Code {
		dst := jen.Id("u").Dot(c.field)
		fail := jen.Block(jen.Id("u").Dot("bad").Op("=").Id("bad"), jen.Return(jen.Id("u")))
		if state {
			dst = jen.Id("t").Dot(c.field)
			fail = jen.Block(jen.Return(jen.Id("t"), jen.Id("bad")))
		}
		mark := jen.Null()
		if state && c.lastWrite() {
			mark = jen.Id("t").Dot("set").Index(jen.Lit(c.bit / 64)).Op("|=").Lit(1).Op("<<").Lit(c.bit % 64)
		}
		name := jen.Lit(c.name)
		tn := jen.Lit(typeString(c.typ))
		switch c.conv() {
		case convAny:
			if state {
				return []jen.Code{dst.Clone().Op("=").Id("v"), mark}
			}
			return []jen.Code{dst.Clone().Op("=").New(jen.Id("v"))}
		case convAppendAny:
			return []jen.Code{dst.Clone().Op("=").Id("appendItems").Call(jen.Id("v"))}
		case convMergeAny:
			return []jen.Code{
				jen.List(jen.Id("x"), jen.Id("bad")).Op(":=").Id("mergeItems").Call(name, jen.Id("v")),
				jen.If(jen.Id("bad").Op("!=").Nil()).Add(fail),
				dst.Clone().Op("=").Id("x"),
			}
		}
		var call jen.Code
		switch c.conv() {
		case convIface:
			call = jen.Id("assertValue").Types(typeCode(c.typ)).Call(name, jen.Id("v"), tn)
		case convValue:
			call = jen.Id("decodeValue").Types(typeCode(c.typ)).Call(name, jen.Id("v"), tn)
		case convList:
			call = jen.Id("decodeList").Types(typeCode(c.elem)).Call(name, jen.Id("v"), tn)
		case convObject:
			call = jen.Id("decodeObject").Types(typeCode(c.elem)).Call(name, jen.Id("v"), tn)
		}
		assign := dst.Clone().Op("=").Id("x")
		if c.lastWrite() && !state {
			assign = dst.Clone().Op("=").Op("&").Id("x")
		}
		return []jen.Code{
			jen.List(jen.Id("x"), jen.Id("bad")).Op(":=").Add(call),
			jen.If(jen.Id("bad").Op("!=").Nil()).Add(fail),
			assign, mark,
		}
	}
	var ucases, scases []jen.Code
	for _, c := range m.chans {
		ucases = append(ucases, jen.Case(jen.Lit(c.name)).Block(convert(c, false)...))
		scases = append(scases, jen.Case(jen.Lit(c.name)).Block(convert(c, true)...))
	}
	ucases = append(ucases, jen.Default().Block(jen.Id("u").Dot("bad").Op("=").Id("undeclared").Call(jen.Id("k")), jen.Return(jen.Id("u"))))
	scases = append(scases, jen.Default().Block(jen.Return(jen.Id("t"), jen.Id("undeclared").Call(jen.Id("k")))))
	loop := func(cases []jen.Code) jen.Code {
		body := []jen.Code{jen.Switch(jen.Id("k")).Block(cases...)}
		if len(m.chans) > 0 {
			body = append([]jen.Code{jen.Id("v").Op(":=").Id("vals").Index(jen.Id("k"))}, body...)
		}
		return jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Qual("slices", "Sorted").Call(jen.Qual("maps", "Keys").Call(jen.Id("vals")))).Block(body...)
	}
	f.Line()
	f.Add(doc("UpdateOf converts an untyped update (the run input or node result of the",
		"spec-built program) into an Update, as Adapt does. A write the graph cannot",
		"hold (an undeclared channel, a non-object on a merge channel, a value a",
		"bound type cannot decode) is kept in the Update and fails the fold, with a",
		"reduce error, exactly where the spec-built program fails."))
	f.Func().Id("UpdateOf").Params(jen.Id("vals").Add(rt("Values"))).Id("Update").Block(
		jen.Var().Id("u").Id("Update"),
		loop(ucases),
		jen.Return(jen.Id("u")),
	)
	f.Line()
	f.Comment("stateOf converts an untyped send input into the task's state.")
	f.Func().Id("stateOf").Params(jen.Id("vals").Add(rt("Values"))).Params(jen.Id("State"), jen.Error()).Block(
		jen.Var().Id("t").Id("State"),
		loop(scases),
		jen.Return(jen.Id("t"), jen.Nil()),
	)
	f.Line()
	f.Comment("undeclared is the error of a write to a channel the graph does not declare.")
	f.Func().Id("undeclared").Params(jen.Id("name").String()).Add(chErr).Block(
		jen.Return(jen.Op("&").Add(rt("ChannelError")).Values(jen.Id("Channel").Op(":").Id("name"), jen.Id("Msg").Op(":").Qual("fmt", "Sprintf").Call(jen.Lit("write to undeclared channel %q; declared channels are ["+formatText(channelNames(m))+"]"), jen.Id("name")))))
	m.emitConvHelpers(f, usesJSONValue)
}

func channelNames(m *model) string {
	names := make([]string, len(m.chans))
	for i, c := range m.chans {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

func (m *model) emitConvHelpers(f *jen.File, usesJSONValue bool) {
	rt := func(name string) *jen.Statement { return jen.Qual(runtimePath, name) }
	chErr := jen.Op("*").Add(rt("ChannelError"))
	bad := func(msg jen.Code) jen.Code {
		return jen.Op("&").Add(rt("ChannelError")).Values(jen.Id("Channel").Op(":").Id("name"), jen.Id("Msg").Op(":").Add(msg))
	}
	if usesJSONValue {
		f.Line()
		f.Comment("jsonValue converts v to the untyped value encoding/json decodes its JSON to.")
		f.Func().Id("jsonValue").Params(jen.Id("v").Any()).Params(jen.Any(), jen.Error()).Block(
			jen.List(jen.Id("data"), jen.Id("err")).Op(":=").Qual("encoding/json", "Marshal").Call(jen.Id("v")),
			jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Id("err"))),
			jen.Var().Id("out").Any(),
			jen.Id("err").Op("=").Qual("encoding/json", "Unmarshal").Call(jen.Id("data"), jen.Op("&").Id("out")),
			jen.Return(jen.Id("out"), jen.Id("err")),
		)
	}
	if m.uses(convAppendAny) {
		f.Line()
		f.Comment("appendItems is what an append write of v adds: a list's elements, or v.")
		f.Func().Id("appendItems").Params(jen.Id("v").Any()).Index().Any().Block(
			jen.Switch(jen.Id("x").Op(":=").Id("v").Assert(jen.Type())).Block(
				jen.Case(jen.Index().Any()).Block(
					jen.If(jen.Id("x").Op("==").Nil()).Block(jen.Return(jen.Index().Any().Values())),
					jen.Return(jen.Id("x"))),
				jen.Case(jen.Nil()).Block(jen.Return(jen.Index().Any().Values(jen.Nil()))),
			),
			jen.Id("rv").Op(":=").Qual("reflect", "ValueOf").Call(jen.Id("v")),
			jen.If(jen.Id("rv").Dot("Kind").Call().Op("==").Qual("reflect", "Slice").Op("&&").Id("rv").Dot("Type").Call().Dot("Elem").Call().Dot("Kind").Call().Op("!=").Qual("reflect", "Uint8")).Block(
				jen.Id("out").Op(":=").Make(jen.Index().Any(), jen.Id("rv").Dot("Len").Call()),
				jen.For(jen.Id("i").Op(":=").Range().Id("out")).Block(jen.Id("out").Index(jen.Id("i")).Op("=").Id("rv").Dot("Index").Call(jen.Id("i")).Dot("Interface").Call()),
				jen.Return(jen.Id("out")),
			),
			jen.Return(jen.Index().Any().Values(jen.Id("v"))),
		)
	}
	if m.uses(convMergeAny) || m.uses(convObject) {
		f.Line()
		f.Comment("describe names the JSON kind of v for an error.")
		f.Func().Id("describe").Params(jen.Id("v").Any()).String().Block(
			jen.Switch(jen.Id("v").Assert(jen.Type())).Block(
				jen.Case(jen.Nil()).Block(jen.Return(jen.Lit("null"))),
				jen.Case(jen.String()).Block(jen.Return(jen.Lit("a string"))),
				jen.Case(jen.Bool()).Block(jen.Return(jen.Lit("a boolean"))),
				jen.Case(jen.Index().Any()).Block(jen.Return(jen.Lit("a list"))),
			),
			jen.If(jen.List(jen.Id("_"), jen.Id("ok")).Op(":=").Add(rt("AsFloat")).Call(jen.Id("v")), jen.Id("ok")).Block(jen.Return(jen.Lit("a number"))),
			jen.Return(jen.Qual("fmt", "Sprintf").Call(jen.Lit("%T"), jen.Id("v"))),
		)
	}
	if m.uses(convMergeAny) {
		f.Line()
		f.Comment("mergeItems is what a merge write of v merges: an object's members.")
		f.Func().Id("mergeItems").Params(jen.Id("name").String(), jen.Id("v").Any()).Params(jen.Map(jen.String()).Any(), chErr.Clone()).Block(
			jen.Switch(jen.Id("x").Op(":=").Id("v").Assert(jen.Type())).Block(
				jen.Case(jen.Map(jen.String()).Any()).Block(jen.Return(jen.Id("x"), jen.Nil())),
				jen.Case(rt("Values")).Block(jen.Return(jen.Map(jen.String()).Any().Parens(jen.Id("x")), jen.Nil())),
			),
			jen.Return(jen.Nil(), bad(jen.Lit("a merge channel takes a JSON object, got ").Op("+").Id("describe").Call(jen.Id("v")))),
		)
	}
	if m.uses(convIface) {
		f.Line()
		f.Comment("assertValue converts a write to an interface-typed channel.")
		f.Func().Id("assertValue").Types(jen.Id("T").Any()).Params(jen.Id("name").String(), jen.Id("v").Any(), jen.Id("typ").String()).Params(jen.Id("T"), chErr.Clone()).Block(
			jen.List(jen.Id("x"), jen.Id("ok")).Op(":=").Id("v").Assert(jen.Id("T")),
			jen.If(jen.Op("!").Id("ok").Op("&&").Id("v").Op("!=").Nil()).Block(jen.Return(jen.Id("x"), bad(jen.Qual("fmt", "Sprintf").Call(jen.Lit("a %T is not a %s"), jen.Id("v"), jen.Id("typ"))))),
			jen.Return(jen.Id("x"), jen.Nil()),
		)
	}
	decodeBody := func(target jen.Code, check jen.Code) []jen.Code {
		return []jen.Code{
			jen.List(jen.Id("data"), jen.Id("err")).Op(":=").Qual("encoding/json", "Marshal").Call(jen.Id("v")),
			jen.If(jen.Id("err").Op("==").Nil()).Block(check, jen.Id("err").Op("=").Qual("encoding/json", "Unmarshal").Call(jen.Id("data"), target)),
			jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Id("out"), bad(jen.Qual("fmt", "Sprintf").Call(jen.Lit("cannot hold the written value as %s: %v"), jen.Id("typ"), jen.Id("err"))))),
			jen.Return(jen.Id("out"), jen.Nil()),
		}
	}
	if m.uses(convValue) {
		f.Line()
		f.Comment("decodeValue converts a write to a channel of a bound type through JSON.")
		f.Func().Id("decodeValue").Types(jen.Id("T").Any()).Params(jen.Id("name").String(), jen.Id("v").Any(), jen.Id("typ").String()).Params(jen.Id("out").Id("T"), jen.Id("_").Add(chErr.Clone())).Block(
			decodeBody(jen.Op("&").Id("out"), jen.Null())...)
	}
	if m.uses(convList) {
		f.Line()
		f.Comment("decodeList converts an append write: a list's elements, or one element.")
		f.Func().Id("decodeList").Types(jen.Id("E").Any()).Params(jen.Id("name").String(), jen.Id("v").Any(), jen.Id("typ").String()).Params(jen.Id("out").Index().Id("E"), jen.Id("_").Add(chErr.Clone())).Block(
			decodeBody(jen.Op("&").Id("out"), jen.If(jen.Len(jen.Id("data")).Op("==").Lit(0).Op("||").Id("data").Index(jen.Lit(0)).Op("!=").LitRune('[')).Block(
				jen.Var().Id("e").Id("E"),
				jen.If(jen.Id("err").Op("=").Qual("encoding/json", "Unmarshal").Call(jen.Id("data"), jen.Op("&").Id("e")), jen.Id("err").Op("==").Nil()).Block(jen.Return(jen.Index().Id("E").Values(jen.Id("e")), jen.Nil())),
				jen.Return(jen.Nil(), bad(jen.Qual("fmt", "Sprintf").Call(jen.Lit("cannot hold the written value as an element of %s: %v"), jen.Id("typ"), jen.Id("err")))),
			))...)
	}
	if m.uses(convObject) {
		f.Line()
		f.Comment("decodeObject converts a merge write, which must be an object.")
		f.Func().Id("decodeObject").Types(jen.Id("V").Any()).Params(jen.Id("name").String(), jen.Id("v").Any(), jen.Id("typ").String()).Params(jen.Id("out").Map(jen.String()).Id("V"), jen.Id("_").Add(chErr.Clone())).Block(
			decodeBody(jen.Op("&").Id("out"), jen.If(jen.Len(jen.Id("data")).Op("==").Lit(0).Op("||").Id("data").Index(jen.Lit(0)).Op("!=").LitRune('{')).Block(
				jen.Return(jen.Nil(), bad(jen.Lit("a merge channel takes a JSON object, got ").Op("+").Id("describe").Call(jen.Id("v")))),
			))...)
	}
}
