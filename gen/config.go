package gen

import (
	"encoding/json"
	"fmt"
	"go/types"
	"strconv"
	"strings"
	"unicode"

	"github.com/dave/jennifer/jen"

	"github.com/ilmek-go/ilmek/internal/jsonconv"
	"github.com/ilmek-go/ilmek/spec"
)

// Generated config types. For a node type without a --config binding, the
// generator writes a struct <Method>Config from the configs the document
// stores for that type, by these rules:
//
//   - One field per key that appears in the config of any node of the type,
//     in key order; the field name is GoName(key) and its json tag the key.
//   - The field's type follows the JSON kinds of the key's values across
//     all those nodes: all strings → string; all booleans → bool; all
//     numbers → int64 when every one is written as an integer that fits,
//     else float64; all arrays → a slice whose element type follows the same
//     rules over all their elements ([]any when they are all empty); all
//     objects → map[string]any; anything else (mixed kinds, or null in any
//     node) → any.
//   - Inside any, map[string]any and []any, values are what encoding/json
//     decodes: string, bool, float64, nil, []any and map[string]any.
//   - A node whose config is absent or null, or lacks a key, gets the zero
//     value for it.
//
// A key that GoName cannot convert, two keys converting to the same field,
// or a key that cannot be a json tag is an error; bind the type to your own
// struct with --config to get a different shape.

// inferConfig builds the generated config struct of tm.
func (m *model) inferConfig(tm *typeModel, d *diags) {
	type occ struct {
		v    any
		path string
	}
	byKey := map[string][]occ{}
	for _, n := range tm.nodes {
		cpath := spec.PathKey(spec.PathIndex("nodes", n.index), "config")
		var probs []jsonconv.Problem
		jsonconv.CheckUntyped(n.config, cpath, &probs)
		for _, p := range probs {
			d.errorf(p.Path, "write the number in that range, or bind the config with --config "+flagName(tm.name)+"=importpath.Type", "%s", p.Msg)
		}
		obj, ok := n.config.(map[string]any)
		if !ok {
			continue
		}
		for k, v := range obj {
			byKey[k] = append(byKey[k], occ{v, spec.PathKey(cpath, k)})
		}
	}
	fields := newScope(tm.config)
	for _, key := range sortedKeys(byKey) {
		occs := byKey[key]
		path := occs[0].path
		name, err := GoName(key)
		if err != nil {
			d.errorf(path, "rename the key, or bind the config to your own struct with --config "+flagName(tm.name)+"=importpath.Type", "config key %v", err)
			continue
		}
		if !validTag(key) {
			d.errorf(path, "rename the key, or bind the config to your own struct with --config "+flagName(tm.name)+"=importpath.Type", "config key %s cannot be a json struct tag", quote(key))
			continue
		}
		if prev, clash := fields.claim(name, origin{desc: "config key " + quote(key), path: path}); clash {
			d.errorf(path, "rename one of the keys, or bind the config with --config", "config key %s converts to field %s of %s, as does %s (%s)", quote(key), name, tm.config, prev.desc, d.at(prev.path))
			continue
		}
		vals := make([]any, len(occs))
		for i, o := range occs {
			vals[i] = o.v
		}
		tm.fields = append(tm.fields, &configField{key: key, field: name, typ: inferType(vals), path: path})
	}
}

// inferType is the Go type of a config key by the rules above.
func inferType(vals []any) types.Type {
	if len(vals) == 0 {
		return anyType
	}
	kind := ""
	integers := true
	var elems []any
	for _, v := range vals {
		k := ""
		switch v := v.(type) {
		case string:
			k = "string"
		case bool:
			k = "bool"
		case json.Number:
			k = "number"
			if _, err := strconv.ParseInt(string(v), 10, 64); err != nil {
				integers = false
			}
		case []any:
			k = "array"
			elems = append(elems, v...)
		case map[string]any:
			k = "object"
		default:
			return anyType // null
		}
		if kind != "" && k != kind {
			return anyType
		}
		kind = k
	}
	switch kind {
	case "string":
		return stringType
	case "bool":
		return boolType
	case "number":
		if integers {
			return int64Type
		}
		return float64Type
	case "array":
		return types.NewSlice(inferType(elems))
	}
	return anyMap
}

// validTag reports whether encoding/json accepts key as a tag name.
func validTag(key string) bool {
	if key == "" {
		return false
	}
	for _, c := range key {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// generatedLit writes v as a Go value of t, a type inferType made.
func generatedLit(t types.Type, v any) jen.Code {
	switch t := t.(type) {
	case *types.Basic:
		switch t.Kind() {
		case types.String:
			return jen.Lit(v.(string))
		case types.Bool:
			return jen.Lit(v.(bool))
		case types.Int64:
			n, _ := strconv.ParseInt(string(v.(json.Number)), 10, 64)
			return jen.Lit(int(n))
		default:
			return floatCode(parseFloat(string(v.(json.Number))))
		}
	case *types.Slice:
		items := v.([]any)
		codes := make([]jen.Code, len(items))
		for i, it := range items {
			codes[i] = generatedLit(t.Elem(), it)
		}
		return jen.Index().Add(typeCode(t.Elem())).Values(codes...)
	}
	return anyLit(v)
}

// anyLit writes a decoded JSON value as the Go value encoding/json would
// decode it into an any.
func anyLit(v any) jen.Code {
	switch v := v.(type) {
	case nil:
		return jen.Nil()
	case string:
		return jen.Lit(v)
	case bool:
		return jen.Lit(v)
	case json.Number:
		return floatCode(parseFloat(string(v)))
	case []any:
		codes := make([]jen.Code, len(v))
		for i, it := range v {
			codes[i] = anyLit(it)
		}
		return jen.Index().Any().Values(codes...)
	case map[string]any:
		keys := sortedKeys(v)
		codes := make([]jen.Code, len(keys))
		for i, k := range keys {
			codes[i] = jen.Lit(k).Op(":").Add(anyLit(v[k]))
		}
		return jen.Map(jen.String()).Any().Values(codes...)
	}
	panic(fmt.Sprintf("gen: anyLit of %T", v))
}

// parseFloat parses JSON number text the way encoding/json does into a
// float64, except that out-of-range values become ±Inf instead of an error.
func parseFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// configLit writes the config literal of node n.
func (m *model) configLit(n *nodeModel) jen.Code {
	tm := n.typ
	if tm.bound != nil {
		c, _ := boundLit(tm.bound, n.config, "")
		if c == nil {
			return zeroLit(tm.bound)
		}
		return c
	}
	obj, _ := n.config.(map[string]any)
	var items []jen.Code
	for _, f := range tm.fields {
		v, ok := obj[f.key]
		if !ok || v == nil {
			continue
		}
		items = append(items, jen.Id(f.field).Op(":").Add(generatedLit(f.typ, v)))
	}
	return jen.Id(tm.config).Values(items...)
}

// emptyConfig reports whether configLit of n is the config struct of n's
// type with no field set (the literal TypeConfig{}).
func (m *model) emptyConfig(n *nodeModel) bool {
	if n.typ.bound != nil {
		return false
	}
	obj, _ := n.config.(map[string]any)
	for _, f := range n.typ.fields {
		if v, ok := obj[f.key]; ok && v != nil {
			return false
		}
	}
	return true
}

// zeroLit writes the zero value of t.
func zeroLit(t types.Type) jen.Code {
	switch u := t.Underlying().(type) {
	case *types.Struct, *types.Array:
		return jen.Add(typeCode(t)).Values()
	case *types.Basic:
		switch {
		case u.Info()&types.IsString != 0:
			return jen.Add(typeCode(t)).Call(jen.Lit(""))
		case u.Info()&types.IsBoolean != 0:
			return jen.Add(typeCode(t)).Call(jen.False())
		}
		return jen.Add(typeCode(t)).Call(jen.Lit(0))
	}
	return jen.Add(typeCode(t)).Call(jen.Nil())
}

// intBits is the size of each integer kind as encoding/json checks it.
func intBits(k types.BasicKind) (bits int, unsigned bool) {
	switch k {
	case types.Int8:
		return 8, false
	case types.Int16:
		return 16, false
	case types.Int32:
		return 32, false
	case types.Uint, types.Uint64, types.Uintptr:
		return 64, true
	case types.Uint8:
		return 8, true
	case types.Uint16:
		return 16, true
	case types.Uint32:
		return 32, true
	}
	return 64, false
}
