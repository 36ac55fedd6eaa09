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
	vals := []jen.Code{jen.Id("v").Op(":=").Qual(genimplPath, "NewValues").Call(jen.Lit(len(m.chans)))}
	set := func(c *chanModel, method string, x jen.Code) *jen.Statement {
		return jen.Id("v").Dot(method).Call(jen.Lit(c.name), x)
	}
	for _, c := range m.chans {
		fld := jen.Id("s").Dot(c.field)
		switch c.conv() {
		case convAny, convIface:
			vals = append(vals, jen.If(jen.Id("s").Dot(c.has).Call()).Block(set(c, "Set", fld)))
		case convValue:
			vals = append(vals, jen.If(jen.Id("s").Dot(c.has).Call()).Block(set(c, "JSON", fld)))
		case convAppendAny, convMergeAny, convList, convObject:
			empty := jen.Index().Any().Values()
			if c.red == spec.Merge {
				empty = jen.Map(jen.String()).Any().Values()
			}
			method := "Set"
			if c.conv() == convList || c.conv() == convObject {
				method = "JSON"
			}
			vals = append(vals, jen.If(fld.Clone().Op("==").Nil()).Block(set(c, "Set", empty)).Else().Block(set(c, method, fld.Clone())))
		}
	}
	vals = append(vals, jen.Return(jen.Id("v").Dot("Done").Call()))
	f.Line()
	f.Comment("values converts s to the untyped state a registry node reads.")
	f.Func().Params(jen.Id("s").Id("State")).Id("values").Params().Params(rt("Values"), jen.Error()).Block(vals...)

	// UpdateOf converts each channel; stateOf folds the result into an
	// empty state, as Send does.
	convert := func(c *chanModel) jen.Code {
		dst := jen.Id("u").Dot(c.field)
		name := jen.Lit(c.name)
		tn := jen.Lit(typeString(c.typ))
		var call jen.Code
		switch c.conv() {
		case convAny:
			return dst.Clone().Op("=").New(jen.Id("v"))
		case convAppendAny:
			return dst.Clone().Op("=").Qual(genimplPath, "AppendItems").Call(jen.Id("v"))
		case convMergeAny:
			call = jen.Qual(genimplPath, "MergeItems").Call(name, jen.Id("v"))
		case convIface:
			call = jen.Qual(genimplPath, "AssertRef").Types(typeCode(c.typ)).Call(name, jen.Id("v"), tn)
		case convValue:
			call = jen.Qual(genimplPath, "DecodeRef").Types(typeCode(c.typ)).Call(name, jen.Id("v"), tn)
		case convList:
			call = jen.Qual(genimplPath, "DecodeList").Types(typeCode(c.elem)).Call(name, jen.Id("v"), tn)
		case convObject:
			call = jen.Qual(genimplPath, "DecodeObject").Types(typeCode(c.elem)).Call(name, jen.Id("v"), tn)
		}
		if c.pointer() {
			// The pointer itself is the Update's field; a null write
			// (nil without failure) sets the channel's null bit.
			call = jen.Qual(genimplPath, "DecodeValue").Types(typeCode(c.typ)).Call(name, jen.Id("v"), tn)
			return jen.List(dst.Clone(), jen.Id("u").Dot("bad")).Op("=").Add(call).Line().
				If(dst.Clone().Op("==").Nil().Op("&&").Id("u").Dot("bad").Op("==").Nil()).Block(
				jen.Id("u").Dot("null").Index(jen.Lit(c.bit / 64)).Op("|=").Lit(1).Op("<<").Lit(c.bit % 64))
		}
		return jen.List(dst.Clone(), jen.Id("u").Dot("bad")).Op("=").Add(call)
	}
	var ucases []jen.Code
	for _, c := range m.chans {
		ucases = append(ucases, jen.Case(jen.Lit(c.name)).Block(convert(c)))
	}
	ucases = append(ucases, jen.Default().Block(jen.Id("u").Dot("bad").Op("=").Qual(genimplPath, "Undeclared").Call(jen.Id("k"), jen.Id("shape"))))
	loop := func(cases []jen.Code) jen.Code {
		body := []jen.Code{jen.Switch(jen.Id("k")).Block(cases...), jen.If(jen.Id("u").Dot("bad").Op("!=").Nil()).Block(jen.Return(jen.Id("u")))}
		if len(m.chans) > 0 {
			body = append([]jen.Code{jen.Id("v").Op(":=").Id("vals").Index(jen.Id("k"))}, body...)
		}
		return jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Qual(genimplPath, "Keys").Call(jen.Id("vals"))).Block(body...)
	}
	f.Line()
	f.Add(doc("UpdateOf converts an untyped update (a run input or node result of the spec-built",
		"program) into an Update, as Adapt does. A write the graph cannot hold stays in the",
		"Update and fails the fold with a reduce error, where the spec-built program fails."))
	f.Func().Id("UpdateOf").Params(jen.Id("vals").Add(rt("Values"))).Id("Update").Block(
		jen.Var().Id("u").Id("Update"),
		loop(ucases),
		jen.Return(jen.Id("u")),
	)
	f.Line()
	f.Add(doc("UnmarshalJSON reads a run's input, a JSON object of channel values, as UpdateOf",
		"converts it, so an input means the same sent to Invoke, a server or the queue's",
		"workers: a member that names no channel, or a value its channel cannot hold,",
		"stays in the Update and fails the fold with a reduce error."))
	f.Func().Params(jen.Id("u").Op("*").Id("Update")).Id("UnmarshalJSON").Params(jen.Id("data").Index().Byte()).Error().Block(
		jen.Var().Id("vals").Add(rt("Values")),
		jen.If(jen.Err().Op(":=").Qual("encoding/json", "Unmarshal").Call(jen.Id("data"), jen.Op("&").Id("vals")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Op("*").Id("u").Op("=").Id("UpdateOf").Call(jen.Id("vals")),
		jen.Return(jen.Nil()),
	)
}
