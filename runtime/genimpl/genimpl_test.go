package genimpl_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/genimpl"
	"github.com/ilmek-go/ilmek/spec"
)

func TestObjectWriter(t *testing.T) {
	var w genimpl.ObjectWriter
	if got, err := w.Done(); err != nil || string(got) != "{}" {
		t.Fatalf("empty: %s, %v", got, err)
	}
	w.Member(`"a":`, []int{1, 2})
	w.Raw(`"b":`, "[]")
	w.Member(`"c":`, "x")
	got, err := w.Done()
	if err != nil || string(got) != `{"a":[1,2],"b":[],"c":"x"}` {
		t.Fatalf("got %s, %v", got, err)
	}
	var bad genimpl.ObjectWriter
	bad.Member(`"f":`, func() {})
	bad.Member(`"g":`, 1)
	if _, err := bad.Done(); err == nil || !strings.Contains(err.Error(), `channel "f":`) {
		t.Fatalf("unencodable member: err = %v", err)
	}
}

func TestStateMembers(t *testing.T) {
	ms, err := genimpl.StateMembers([]byte(`{"b":1,"a":[2]}`))
	if err != nil || len(ms) != 2 || ms[0].Key != "a" || string(ms[0].Value) != "[2]" || ms[1].Key != "b" {
		t.Fatalf("got %+v, %v", ms, err)
	}
	if _, err := genimpl.StateMembers([]byte(`[1]`)); err == nil || !strings.HasPrefix(err.Error(), "state: ") {
		t.Fatalf("not an object: err = %v", err)
	}
}

func TestConversions(t *testing.T) {
	shape := &runtime.Shape{Channels: []runtime.ChannelShape{{Name: "a"}, {Name: "b"}}}
	for _, tc := range []struct {
		name string
		got  *runtime.ChannelError
		want string // "" for no error
	}{
		{"undeclared", genimpl.Undeclared("z", shape), `channel "z": write to undeclared channel "z"; declared channels are [a, b]`},
		{"merge list", second(genimpl.MergeItems("m", []any{1})), `channel "m": a merge channel takes a JSON object, got a list`},
		{"merge values", second(genimpl.MergeItems("m", runtime.Values{"k": 1})), ""},
		{"assert", second(genimpl.AssertValue[error]("e", 3, "error")), `channel "e": a int is not a error`},
		{"assert nil", second(genimpl.AssertValue[error]("e", nil, "error")), ""},
		{"value", second(genimpl.DecodeValue[int]("n", "x", "int")), `channel "n": cannot hold the written value as int: json: cannot unmarshal string into Go value of type int`},
		{"list element", second(genimpl.DecodeList[int]("l", "x", "[]int")), `channel "l": cannot hold the written value as an element of []int`},
		{"object", second(genimpl.DecodeObject[int]("o", 3, "map[string]int")), `channel "o": a merge channel takes a JSON object, got a number`},
	} {
		switch {
		case tc.want == "" && tc.got != nil:
			t.Errorf("%s: unexpected %v", tc.name, tc.got)
		case tc.want != "" && (tc.got == nil || !strings.HasPrefix(tc.got.Error(), tc.want)):
			t.Errorf("%s: got %v, want %s", tc.name, tc.got, tc.want)
		}
	}
	if l, bad := genimpl.DecodeList[int]("l", 7, "[]int"); bad != nil || len(l) != 1 || l[0] != 7 {
		t.Errorf("one element: %v, %v", l, bad)
	}
	if got := genimpl.AppendItems([]string{"a", "b"}); len(got) != 2 || got[1] != "b" {
		t.Errorf("AppendItems of a slice: %v", got)
	}
	if got := genimpl.AppendItems([]any(nil)); got == nil || len(got) != 0 {
		t.Errorf("AppendItems of a nil list: %#v", got)
	}
	if got := genimpl.AppendItems(nil); len(got) != 1 || got[0] != nil {
		t.Errorf("AppendItems of null: %#v", got)
	}
	if x, err := genimpl.ToAny("c", struct{ A int }{3}); err != nil || x.(map[string]any)["A"] != 3.0 {
		t.Errorf("ToAny: %v, %v", x, err)
	}
	if _, err := genimpl.ToAny("c", func() {}); err == nil || !strings.HasPrefix(err.Error(), `channel "c": `) {
		t.Errorf("ToAny of a func: %v", err)
	}
	if got := genimpl.Keys(runtime.Values{"b": 1, "a": 2}); strings.Join(got, ",") != "a,b" {
		t.Errorf("Keys: %v", got)
	}
	m := map[string]int{"a": 1}
	c := genimpl.CloneMap(m, 1)
	c["b"] = 2
	if len(m) != 1 || len(c) != 2 {
		t.Errorf("CloneMap shares its map: %v %v", m, c)
	}
	if got := genimpl.JSONFloat32(float32(0.1)); got != 0.1 {
		t.Errorf("JSONFloat32(0.1) = %v", got)
	}
}

func second[T any](_ T, e *runtime.ChannelError) *runtime.ChannelError { return e }

type node func(*runtime.Ctx, int) (string, error)

func TestBuilder(t *testing.T) {
	shape := &runtime.Shape{Nodes: []runtime.NodeShape{{ID: "a", Type: "t"}, {ID: "b", Type: "u"}, {ID: "c", Type: "t"}}}
	var nodes [3]node
	b := genimpl.NewBuilder("pkg", shape, nodes[:])
	ok := node(func(*runtime.Ctx, int) (string, error) { return "", nil })
	b.Add(0, "T")(ok, nil)
	b.Add(1, "U")(nil, errors.New("boom"))
	b.Add(2, "T")(nil, nil)
	if nodes[0] == nil || nodes[1] != nil || nodes[2] != nil {
		t.Fatalf("nodes = %v", nodes)
	}
	err := b.Err()
	var se *runtime.SpecError
	if !errors.As(err, &se) {
		t.Fatalf("err = %T %v, want *runtime.SpecError", err, err)
	}
	want := "pkg: cannot build graph:\n\tnode \"b\" (type \"u\"): boom\n\tnode \"c\" (type \"t\"): Nodes.T returned a nil Node"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("err = %q, want it to hold %q", err, want)
	}
	if genimpl.NewBuilder("pkg", shape, nodes[:]).Err() != nil {
		t.Error("a builder with no failure reports one")
	}
}

func TestRegistryNode(t *testing.T) {
	doc := genimpl.SpecDoc("x.json", `{"channels": {}, "nodes": [{"id": "a", "type": "t", "config": {"k": 1}}], "edges": [{"from": "__start__", "to": "a"}]}`)
	var seen spec.Node
	reg := runtime.Registry{"t": func(n spec.Node) (runtime.NodeFunc, error) {
		seen = n
		return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }, nil
	}}
	if fn, err := genimpl.RegistryNode(reg, doc, 0); err != nil || fn == nil || seen.ID != "a" || string(seen.Config) != `{"k": 1}` {
		t.Fatalf("fn %v err %v node %+v", fn != nil, err, seen)
	}
	if _, err := genimpl.RegistryNode(runtime.Registry{"u": nil}, doc, 0); err == nil || !strings.Contains(err.Error(), `type "t" is not in the registry (registered: ["u"])`) {
		t.Errorf("missing type: %v", err)
	}
	nilFn := runtime.Registry{"t": func(spec.Node) (runtime.NodeFunc, error) { return nil, nil }}
	if _, err := genimpl.RegistryNode(nilFn, doc, 0); err == nil || !strings.Contains(err.Error(), "nil function") {
		t.Errorf("nil function: %v", err)
	}
	bad := genimpl.SpecDoc("bad.json", `{`)
	if _, err := genimpl.RegistryNode(reg, bad, 0); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("undecodable document: %v", err)
	}
}
