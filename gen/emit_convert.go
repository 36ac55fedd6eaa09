package gen

import (
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

func (m *model) emitConversions(f *jen.File) {
	rt := func(name string) *jen.Statement { return jen.Qual(runtimePath, name) }
	// values
	var vals []jen.Code
	vals = append(vals, jen.Id("v").Op(":=").Make(rt("Values"), jen.Lit(len(m.chans))))
	jsonInto := func(c *chanModel, src jen.Code) jen.Code {
		return jen.Block(
			jen.List(jen.Id("x"), jen.Id("err")).Op(":=").Qual(genimplPath, "ToAny").Call(jen.Lit(c.name), src),
			jen.If(jen.Id("err").Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Id("err"))),
			jen.Id("v").Index(jen.Lit(c.name)).Op("=").Id("x"),
		)
	}
	for _, c := range m.chans {
		fld := jen.Id("s").Dot(c.field)
		key := jen.Id("v").Index(jen.Lit(c.name))
		switch c.conv() {
		case convAny, convIface:
			vals = append(vals, jen.If(jen.Id("s").Dot(c.has).Call()).Block(key.Clone().Op("=").Add(fld)))
		case convValue:
			vals = append(vals, jen.If(jen.Id("s").Dot(c.has).Call()).Add(jsonInto(c, fld)))
		case convAppendAny, convMergeAny:
			empty := jen.Index().Any().Values()
			if c.red == spec.Merge {
				empty = jen.Map(jen.String()).Any().Values()
			}
			vals = append(vals, jen.If(fld.Clone().Op("==").Nil()).Block(key.Clone().Op("=").Add(empty)).Else().Block(key.Clone().Op("=").Add(fld.Clone())))
		case convList, convObject:
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

	// UpdateOf converts each channel; stateOf folds the result into an
	// empty state, as Send does.
	convert := func(c *chanModel) []jen.Code {
		dst := jen.Id("u").Dot(c.field)
		fail := jen.Block(jen.Id("u").Dot("bad").Op("=").Id("bad"), jen.Return(jen.Id("u")))
		name := jen.Lit(c.name)
		tn := jen.Lit(typeString(c.typ))
		switch c.conv() {
		case convAny:
			return []jen.Code{dst.Clone().Op("=").New(jen.Id("v"))}
		case convAppendAny:
			return []jen.Code{dst.Clone().Op("=").Qual(genimplPath, "AppendItems").Call(jen.Id("v"))}
		case convMergeAny:
			return []jen.Code{
				jen.List(jen.Id("x"), jen.Id("bad")).Op(":=").Qual(genimplPath, "MergeItems").Call(name, jen.Id("v")),
				jen.If(jen.Id("bad").Op("!=").Nil()).Add(fail),
				dst.Clone().Op("=").Id("x"),
			}
		}
		var call jen.Code
		switch c.conv() {
		case convIface:
			call = jen.Qual(genimplPath, "AssertValue").Types(typeCode(c.typ)).Call(name, jen.Id("v"), tn)
		case convValue:
			call = jen.Qual(genimplPath, "DecodeValue").Types(typeCode(c.typ)).Call(name, jen.Id("v"), tn)
		case convList:
			call = jen.Qual(genimplPath, "DecodeList").Types(typeCode(c.elem)).Call(name, jen.Id("v"), tn)
		case convObject:
			call = jen.Qual(genimplPath, "DecodeObject").Types(typeCode(c.elem)).Call(name, jen.Id("v"), tn)
		}
		assign := dst.Clone().Op("=").Id("x")
		if c.lastWrite() {
			assign = dst.Clone().Op("=").Op("&").Id("x")
		}
		return []jen.Code{
			jen.List(jen.Id("x"), jen.Id("bad")).Op(":=").Add(call),
			jen.If(jen.Id("bad").Op("!=").Nil()).Add(fail),
			assign,
		}
	}
	var ucases []jen.Code
	for _, c := range m.chans {
		ucases = append(ucases, jen.Case(jen.Lit(c.name)).Block(convert(c)...))
	}
	ucases = append(ucases, jen.Default().Block(jen.Id("u").Dot("bad").Op("=").Qual(genimplPath, "Undeclared").Call(jen.Id("k"), jen.Id("shape")), jen.Return(jen.Id("u"))))
	loop := func(cases []jen.Code) jen.Code {
		body := []jen.Code{jen.Switch(jen.Id("k")).Block(cases...)}
		if len(m.chans) > 0 {
			body = append([]jen.Code{jen.Id("v").Op(":=").Id("vals").Index(jen.Id("k"))}, body...)
		}
		return jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Qual(genimplPath, "Keys").Call(jen.Id("vals"))).Block(body...)
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
		jen.Id("u").Op(":=").Id("UpdateOf").Call(jen.Id("vals")),
		jen.If(jen.Id("u").Dot("bad").Op("!=").Nil()).Block(jen.Return(jen.Id("State").Values(), jen.Id("u").Dot("bad"))),
		jen.Return(jen.Id("State").Values().Dot("With").Call(jen.Id("u")), jen.Nil()),
	)
}
