// Package jsonconv holds the conversions of JSON-like Go values that the
// runtime, the generator and generated code share, so that each rule and
// each message exists once: what an append or merge write adds, the JSON
// kind of a value for an error, and the
// decoding of a value into a Go type through its JSON form.
package jsonconv

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/ilmek-go/ilmek/internal/num"
)

// Describe names the JSON kind of a write for an error: "null", "a
// string", "a boolean", "a list", "a number", or the Go type.
func Describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	}
	if _, ok := num.AsFloat(v); ok {
		return "a number"
	}
	return reflect.TypeOf(v).String()
}

// NotAnObject is the message of a merge write that is not an object.
func NotAnObject(v any) string {
	return "a merge channel takes a JSON object, got " + Describe(v)
}

// AppendTo appends to dst what an append write of v adds: the elements of
// a list (a Go slice of any element type but byte), or v itself.
func AppendTo(dst []any, v any) []any {
	switch x := v.(type) {
	case []any:
		return append(dst, x...)
	case nil:
		return append(dst, nil)
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() != reflect.Uint8 {
		for i := range rv.Len() {
			dst = append(dst, rv.Index(i).Interface())
		}
		return dst
	}
	return append(dst, v)
}

// AppendItems is what an append write of v adds, never nil: a []any as it
// is, the elements of another slice, or v alone.
func AppendItems(v any) []any {
	if x, ok := v.([]any); ok {
		if x == nil {
			return []any{}
		}
		return x
	}
	return AppendTo(nil, v)
}

// ToAny converts v to the untyped value encoding/json decodes its JSON to.
func ToAny(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(data, &out)
	return out, err
}

// Into converts v to T through its JSON form, as a write to a channel of
// type T is read. The error is the message of a *runtime.ChannelError.
func Into[T any](v any, typ string) (out T, msg string) {
	data, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(data, &out)
	}
	if err != nil {
		return out, cannotHold(typ, err)
	}
	return out, ""
}

// ListInto converts an append write to []E: a list's elements, or one
// element.
func ListInto[E any](v any, typ string) (out []E, msg string) {
	data, err := json.Marshal(v)
	if err == nil {
		if len(data) == 0 || data[0] != '[' {
			var e E
			if err = json.Unmarshal(data, &e); err == nil {
				return []E{e}, ""
			}
			return nil, fmt.Sprintf("cannot hold the written value as an element of %s: %v", typ, err)
		}
		err = json.Unmarshal(data, &out)
	}
	if err != nil {
		return out, cannotHold(typ, err)
	}
	return out, ""
}

// ObjectInto converts a merge write, which must be an object, to
// map[string]V.
func ObjectInto[V any](v any, typ string) (out map[string]V, msg string) {
	data, err := json.Marshal(v)
	if err == nil {
		if len(data) == 0 || data[0] != '{' {
			return nil, NotAnObject(v)
		}
		err = json.Unmarshal(data, &out)
	}
	if err != nil {
		return out, cannotHold(typ, err)
	}
	return out, ""
}

func cannotHold(typ string, err error) string {
	return fmt.Sprintf("cannot hold the written value as %s: %v", typ, err)
}
