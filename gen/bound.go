package gen

import (
	"encoding/json"
	"fmt"
	"go/types"
	"strconv"
	"strings"
	"time"

	"github.com/dave/jennifer/jen"

	"github.com/ilmek-go/ilmek/internal/jsonconv"
	"github.com/ilmek-go/ilmek/spec"
)

// Bound config types. With --config TYPE=GOTYPE, every stored config of a
// node of TYPE is checked against GOTYPE the way encoding/json would decode
// it (keys match json tags, else field names, case-insensitively; embedded
// structs promote their fields), and written as a Go composite literal of
// GOTYPE. Refused: a key no field accepts, a value of the wrong JSON kind
// (a string for an int, an object for a slice...), a number that does not
// fit its integer or float type, and a value of a type that decodes itself
// (UnmarshalJSON, UnmarshalText), whose literal the generator cannot write.

// problem is one refusal of a stored config, at a JSON path.
type problem struct {
	path string
	msg  string
}

// checkBoundConfigs checks every stored config of tm against its bound type.
func (m *model) checkBoundConfigs(tm *typeModel, d *diags) {
	if err := emittable(tm.bound); err != nil {
		d.errorf(tm.path, "", "%s: %v", bindingWhat(true, tm.name, typeString(tm.bound)), err)
		tm.bound = nil
		return
	}
	for _, n := range tm.nodes {
		var probs []problem
		boundLitInto(tm.bound, n.config, spec.PathKey(spec.PathIndex("nodes", n.index), "config"), &probs)
		for _, p := range probs {
			d.errorf(p.path, fmt.Sprintf("fix the stored config or the Go type %s", typeString(tm.bound)), "%s", p.msg)
		}
	}
}

// boundLit writes v as a literal of t, or nil when v leaves t's zero value.
func boundLit(t types.Type, v any, path string) (jen.Code, []problem) {
	var probs []problem
	c := boundLitInto(t, v, path, &probs)
	return c, probs
}

func boundLitInto(t types.Type, v any, path string, probs *[]problem) jen.Code {
	fail := func(format string, args ...any) jen.Code {
		*probs = append(*probs, problem{path: path, msg: fmt.Sprintf(format, args...)})
		return nil
	}
	if isTime(t) {
		return timeLit(v, fail)
	}
	if name := selfDecoding(t); name != "" {
		return fail("type %s decodes itself with %s; ilmekgen cannot write its stored value as a Go literal (use a plain field type)", typeString(t), name)
	}
	if v == nil {
		switch t.Underlying().(type) {
		case *types.Pointer, *types.Slice, *types.Map, *types.Interface:
			return jen.Nil()
		}
		return nil // encoding/json leaves a non-nilable value as it is
	}
	switch u := t.Underlying().(type) {
	case *types.Interface:
		if !u.Empty() {
			return fail("cannot decode %s into interface type %s", jsonKind(v), typeString(t))
		}
		var out []jsonconv.Problem
		jsonconv.CheckUntyped(v, path, &out)
		for _, p := range out {
			*probs = append(*probs, problem{path: p.Path, msg: p.Msg})
		}
		if len(out) > 0 {
			return nil
		}
		return anyLit(v)
	case *types.Pointer:
		inner := boundLitInto(u.Elem(), v, path, probs)
		if inner == nil {
			return nil
		}
		if isTime(u.Elem()) {
			return jen.New(inner) // new(time.Date(...)): a call has no address
		}
		switch u.Elem().(type) {
		case *types.Basic:
			// new(int64(5)): a bare constant would make new(5) an *int.
			return jen.New(jen.Add(typeCode(u.Elem())).Call(inner))
		}
		if _, ok := u.Elem().Underlying().(*types.Struct); ok {
			return jen.Op("&").Add(inner)
		}
		return jen.New(inner)
	case *types.Basic:
		return basicLit(t, u, v, fail)
	case *types.Slice:
		arr, ok := v.([]any)
		if !ok {
			return fail("%s", jsonconv.WantKind("an array", typeString(t), v))
		}
		codes := make([]jen.Code, 0, len(arr))
		for i, it := range arr {
			c := boundLitInto(u.Elem(), it, spec.PathIndex(path, i), probs)
			if c == nil {
				c = zeroLit(u.Elem())
			}
			codes = append(codes, c)
		}
		return jen.Add(typeCode(t)).Values(codes...)
	case *types.Array:
		arr, ok := v.([]any)
		if !ok {
			return fail("%s", jsonconv.WantKind("an array", typeString(t), v))
		}
		if int64(len(arr)) > u.Len() {
			return fail("array of %d elements does not fit %s", len(arr), typeString(t))
		}
		codes := make([]jen.Code, 0, len(arr))
		for i, it := range arr {
			c := boundLitInto(u.Elem(), it, spec.PathIndex(path, i), probs)
			if c == nil {
				c = zeroLit(u.Elem())
			}
			codes = append(codes, c)
		}
		return jen.Add(typeCode(t)).Values(codes...)
	case *types.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return fail("%s", jsonconv.WantKind("an object", typeString(t), v))
		}
		if !isStringKind(u.Key()) {
			return fail("map type %s has non-string keys; ilmekgen writes only string-keyed maps", typeString(t))
		}
		var codes []jen.Code
		for _, k := range sortedKeys(obj) {
			c := boundLitInto(u.Elem(), obj[k], spec.PathKey(path, k), probs)
			if c == nil {
				c = zeroLit(u.Elem())
			}
			codes = append(codes, jen.Lit(k).Op(":").Add(c))
		}
		return jen.Add(typeCode(t)).Values(codes...)
	case *types.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return fail("%s", jsonconv.WantKind("an object", typeString(t), v))
		}
		fields := jsonFields(u)
		var sets []fieldSet
		for _, k := range sortedKeys(obj) {
			f := matchField(fields, k)
			if f == nil {
				names := make([]string, len(fields))
				for i, f := range fields {
					names[i] = f.name
				}
				*probs = append(*probs, problem{path: spec.PathKey(path, k), msg: jsonconv.NotAField(k, typeString(t), names)})
				continue
			}
			c := boundLitInto(f.typ, obj[k], spec.PathKey(path, k), probs)
			if c != nil {
				sets = append(sets, fieldSet{index: f.index, code: c})
			}
		}
		if lit := structLit(t, sets, path, probs); lit != nil {
			return lit
		}
		return nil
	}
	return fail("type %s cannot hold a stored config value", typeString(t))
}

// basicLit writes a JSON scalar as a value of the basic type u (t may name
// it).
func basicLit(t types.Type, u *types.Basic, v any, fail func(string, ...any) jen.Code) jen.Code {
	wrap := func(c jen.Code) jen.Code {
		if _, unnamed := t.(*types.Basic); unnamed {
			return c
		}
		return jen.Add(typeCode(t)).Call(c)
	}
	info := u.Info()
	switch {
	case info&types.IsString != 0:
		s, ok := v.(string)
		if !ok {
			return fail("%s", jsonconv.WantKind("a string", typeString(t), v))
		}
		return wrap(jen.Lit(s))
	case info&types.IsBoolean != 0:
		b, ok := v.(bool)
		if !ok {
			return fail("%s", jsonconv.WantKind("a boolean", typeString(t), v))
		}
		return wrap(jen.Lit(b))
	case info&types.IsInteger != 0:
		n, ok := v.(json.Number)
		if !ok {
			return fail("%s", jsonconv.WantKind("a number", typeString(t), v))
		}
		bits, unsigned := intBits(u.Kind())
		if unsigned {
			if msg := jsonconv.FitInt(n, bits, true, typeString(t)); msg != "" {
				return fail("%s", msg)
			}
			x, _ := strconv.ParseUint(string(n), 10, bits)
			// An untyped constant: an int literal cannot hold values above
			// the int64 range, and the digits are all the text there is.
			return wrap(jen.Op(strconv.FormatUint(x, 10)))
		}
		if msg := jsonconv.FitInt(n, bits, false, typeString(t)); msg != "" {
			return fail("%s", msg)
		}
		x, _ := strconv.ParseInt(string(n), 10, bits)
		return wrap(jen.Lit(int(x)))
	case info&types.IsFloat != 0:
		n, ok := v.(json.Number)
		if !ok {
			return fail("%s", jsonconv.WantKind("a number", typeString(t), v))
		}
		bits := 64
		if u.Kind() == types.Float32 {
			bits = 32
		}
		if msg := jsonconv.FitFloat(n, bits, typeString(t)); msg != "" {
			return fail("%s", msg)
		}
		f, _ := strconv.ParseFloat(string(n), bits)
		return wrap(jen.Lit(f))
	}
	return fail("type %s cannot hold a stored config value", typeString(t))
}

// fieldSet is one field assignment of a struct literal, by field index path.
type fieldSet struct {
	index []int
	code  jen.Code
}

// structLit writes a struct literal of t from its field assignments,
// building a literal of each embedded struct whose promoted fields are set.
func structLit(t types.Type, sets []fieldSet, path string, probs *[]problem) jen.Code {
	s := t.Underlying().(*types.Struct)
	if err := emittable(t); err != nil {
		*probs = append(*probs, problem{path: path, msg: fmt.Sprintf("cannot write a literal of %s: %v", typeString(t), err)})
		return nil
	}
	var items []jen.Code
	for i := 0; i < s.NumFields(); i++ {
		var direct jen.Code
		var nested []fieldSet
		for _, fs := range sets {
			if fs.index[0] != i {
				continue
			}
			if len(fs.index) == 1 {
				direct = fs.code
			} else {
				nested = append(nested, fieldSet{index: fs.index[1:], code: fs.code})
			}
		}
		f := s.Field(i)
		switch {
		case direct != nil:
			items = append(items, jen.Id(f.Name()).Op(":").Add(direct))
		case len(nested) > 0:
			inner := structLit(f.Type(), nested, path, probs)
			if inner != nil {
				items = append(items, jen.Id(f.Name()).Op(":").Add(inner))
			}
		}
	}
	return jen.Add(typeCode(t)).Values(items...)
}

// jsonField is one field of a struct as encoding/json sees it.
type jsonField struct {
	name     string
	index    []int
	typ      types.Type
	tagged   bool
	required bool // its tag says neither omitempty nor omitzero
}

// jsonFields lists the fields encoding/json decodes into for s, by the
// rule the runtime applies to reflect types (jsonconv.Fields): exported
// fields named by their json tag or their name, with the fields of
// embedded (non-pointer) structs promoted, the shallower name winning.
func jsonFields(s *types.Struct) []jsonField {
	fs := jsonconv.Fields(s, (*types.Struct).NumFields, func(s *types.Struct, i int) (jsonconv.StructField, *types.Struct, bool) {
		f := s.Field(i)
		sf := jsonconv.StructField{Name: f.Name(), Tag: s.Tag(i), Exported: f.Exported(), Embedded: f.Embedded()}
		if _, isPtr := f.Type().(*types.Pointer); isPtr {
			return sf, nil, false
		}
		st, ok := f.Type().Underlying().(*types.Struct)
		return sf, st, ok
	})
	out := make([]jsonField, len(fs))
	for i, f := range fs {
		st := s
		var typ types.Type
		for _, k := range f.Index {
			typ = st.Field(k).Type()
			st, _ = typ.Underlying().(*types.Struct)
		}
		out[i] = jsonField{name: f.Name, index: f.Index, typ: typ, tagged: f.Tagged, required: f.Required}
	}
	return out
}

// matchField finds the field a JSON key decodes into: an exact name first,
// then a case-insensitive one, as encoding/json does.
func matchField(fields []jsonField, key string) *jsonField {
	for i := range fields {
		if fields[i].name == key {
			return &fields[i]
		}
	}
	for i := range fields {
		if strings.EqualFold(fields[i].name, key) {
			return &fields[i]
		}
	}
	return nil
}

// timeLit writes a stored time.Time value: the config holds it as
// encoding/json does (an RFC 3339 string, decoded here by time.Time's own
// UnmarshalJSON, so the same strings are accepted), and the literal is a
// time.Date call in UTC or, for a stored offset, in a fixed zone of that
// offset (never time.Local, so the output does not depend on the machine's
// zone). null leaves the zero time, as encoding/json does.
func timeLit(v any, fail func(string, ...any) jen.Code) jen.Code {
	if v == nil {
		return nil
	}
	s, ok := v.(string)
	if !ok {
		return fail("want an RFC 3339 string for time.Time, got %s", jsonKind(v))
	}
	raw, _ := json.Marshal(s)
	var tm time.Time
	if err := tm.UnmarshalJSON(raw); err != nil {
		return fail("%s is not a time.Time: %v; write it in RFC 3339, e.g. \"2024-05-01T10:00:00Z\"", quote(s), err)
	}
	loc := jen.Qual("time", "UTC")
	if _, off := tm.Zone(); off != 0 || !strings.HasSuffix(strings.ToUpper(s), "Z") {
		loc = jen.Qual("time", "FixedZone").Call(jen.Lit(""), jen.Lit(off))
	}
	return jen.Qual("time", "Date").Call(
		jen.Lit(tm.Year()), jen.Qual("time", tm.Month().String()), jen.Lit(tm.Day()),
		jen.Lit(tm.Hour()), jen.Lit(tm.Minute()), jen.Lit(tm.Second()), jen.Lit(tm.Nanosecond()), loc)
}

// selfDecoding returns the method with which *t decodes itself, or "".
func selfDecoding(t types.Type) string {
	ms := types.NewMethodSet(types.NewPointer(t))
	for _, name := range []string{"UnmarshalJSON", "UnmarshalText"} {
		if ms.Lookup(nil, name) != nil {
			return name
		}
	}
	return ""
}

// jsonKind names the JSON kind of a decoded value, for messages.
func jsonKind(v any) string { return jsonconv.Kind(v) }
