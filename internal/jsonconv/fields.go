package jsonconv

import (
	"reflect"
	"strings"
)

// The members of a struct as JSON sees them, by one rule for the
// generator (go/types: bound configs and their schemas), the runtime's
// config decoding and its interrupt answers (reflect): exported fields
// named by their json tag or their Go name, "-" skipped, the fields of
// embedded structs promoted (the shallower name wins), and a member
// required unless its tag says omitempty or omitzero.

// Field is one JSON member of a struct.
type Field struct {
	Name     string // the member's name, as written in JSON
	Index    []int  // the field's index path, through embedded structs
	Tagged   bool   // the json tag names the member
	Quoted   bool   // the tag says ",string"
	Required bool   // the tag says neither omitempty nor omitzero
}

// StructField is what the rule reads of one Go struct field.
type StructField struct {
	Name     string // the Go name
	Tag      string // the field's whole struct tag
	Exported bool
	Embedded bool
}

// Fields lists the JSON members of struct s, whose fields n(s) counts and
// at(s, i) describes; at also returns, for an embedded field whose fields
// are promoted, the struct to promote them from and true.
func Fields[S any](s S, n func(S) int, at func(S, int) (StructField, S, bool)) []Field {
	var out []Field
	seen := map[string]int{} // name → depth of the field that holds it
	var walk func(s S, prefix []int, depth int)
	walk = func(s S, prefix []int, depth int) {
		var embedded []func()
		for i := range n(s) {
			f, inner, promote := at(s, i)
			tag := reflect.StructTag(f.Tag).Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			idx := append(append([]int(nil), prefix...), i)
			if f.Embedded && name == "" && promote {
				embedded = append(embedded, func() { walk(inner, idx, depth+1) })
				continue
			}
			if !f.Exported {
				continue
			}
			tagged := name != ""
			if name == "" {
				name = f.Name
			}
			if d, ok := seen[name]; ok && d <= depth {
				continue
			}
			seen[name] = depth
			out = append(out, Field{Name: name, Index: idx, Tagged: tagged,
				Quoted: hasOption(opts, "string"), Required: !hasOption(opts, "omitempty") && !hasOption(opts, "omitzero")})
		}
		for _, e := range embedded {
			e()
		}
	}
	walk(s, nil, 0)
	return out
}

func hasOption(opts, name string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == name {
			return true
		}
	}
	return false
}

// ReflectFields lists the JSON members of struct type t by Fields' rule.
// Embedded structs are promoted, and so are embedded pointers to structs
// when pointers is true (encoding/json does; the generator, which writes
// literals, does not).
func ReflectFields(t reflect.Type, pointers bool) []Field {
	return Fields(t, reflect.Type.NumField, func(t reflect.Type, i int) (StructField, reflect.Type, bool) {
		f := t.Field(i)
		sf := StructField{Name: f.Name, Tag: string(f.Tag), Exported: f.IsExported(), Embedded: f.Anonymous}
		et := f.Type
		if pointers && et.Kind() == reflect.Pointer {
			et = et.Elem()
		}
		return sf, et, et.Kind() == reflect.Struct
	})
}
