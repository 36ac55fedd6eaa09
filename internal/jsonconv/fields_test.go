package jsonconv

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type fieldsInner struct {
	Deep  string `json:"deep"`
	Outer int    `json:"outer"` // shadowed by the outer field
}

type fieldsOuter struct {
	A     string `json:"a"`
	B     int    `json:"b,omitempty"`
	C     bool   `json:"c,omitzero"`
	D     int    `json:"d,string"`
	Plain string
	Skip  string `json:"-"`
	//lint:ignore U1000 the rule must pass over an unexported member
	hidden string
	Outer  string `json:"outer"`
	fieldsInner
	Ptr *fieldsPtr
}

type fieldsPtr struct {
	P string `json:"p"`
}

// TestReflectFields: the one member rule — tags name members, omitempty
// and omitzero make them optional, embedded structs are promoted with the
// shallower name winning, and embedded pointers are promoted only when
// asked (encoding/json does, the generator does not).
func TestReflectFields(t *testing.T) {
	got := ReflectFields(reflect.TypeFor[fieldsOuter](), false)
	want := []Field{
		{Name: "a", Index: []int{0}, Tagged: true, Required: true},
		{Name: "b", Index: []int{1}, Tagged: true},
		{Name: "c", Index: []int{2}, Tagged: true},
		{Name: "d", Index: []int{3}, Tagged: true, Quoted: true, Required: true},
		{Name: "Plain", Index: []int{4}, Required: true},
		{Name: "outer", Index: []int{7}, Tagged: true, Required: true},
		{Name: "Ptr", Index: []int{9}, Required: true},
		{Name: "deep", Index: []int{8, 0}, Tagged: true, Required: true},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("fields (-want +got):\n%s", d)
	}
	type withPtr struct {
		*fieldsPtr
		X int `json:"x"`
	}
	got = ReflectFields(reflect.TypeFor[withPtr](), true)
	want = []Field{
		{Name: "x", Index: []int{1}, Tagged: true, Required: true},
		{Name: "p", Index: []int{0, 0}, Tagged: true, Required: true},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("promoted pointer (-want +got):\n%s", d)
	}
}
