package spec

import (
	"strings"
	"testing"
)

func TestJSONEqual(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{`1`, `1.0`, true},
		{`1`, `1e0`, true},
		{`1.0`, `10e-1`, true},
		{`100`, `1E+2`, true},
		{`0.1e1`, `1`, true},
		{`0`, `-0`, true},
		{`0`, `0.000e-10`, true},
		{`0`, `0e999999999999999999999`, true},
		{`-1`, `1`, false},
		{`1.5`, `15e-1`, true},
		{`1`, `1.0000000000000000000000001`, false},
		{`9007199254740993`, `9007199254740992`, false}, // equal as float64
		{`12345678901234567890123`, `12345678901234567890124`, false},
		{`12345678901234567890123`, `1.2345678901234567890123e22`, true},
		{`1e400`, `1E400`, true},
		{`1e400`, `1e401`, false},
		{`1e400`, `10e399`, true},
		{`1e-400`, `0`, false},
		{`1e99999999999999999999999`, `1e99999999999999999999998`, false},
		{`1e99999999999999999999999`, `10e99999999999999999999998`, true},
		{`"A"`, `"\u0041"`, true},
		{`"\ud83d\ude00"`, `"😀"`, true},
		{`"\/"`, `"/"`, true},
		{`"a"`, `"a "`, false},
		{`{"a": 1, "b": [1, 2]}`, `{"b": [1.0, 2], "a": 1}`, true},
		{`{"a": 1}`, `{"a": 1, "b": null}`, false},
		{`[1, 2]`, `[2, 1]`, false},
		{`[]`, `{}`, false},
		{`null`, `false`, false},
		{`"1"`, `1`, false},
		{` {"a" : [ ] } `, `{"a":[]}`, true},
		{`{"x": {"z": 1, "y": 2}}`, `{"x": {"y": 2, "z": 1}}`, true},
	}
	for _, c := range cases {
		got, err := JSONEqual([]byte(c.a), []byte(c.b))
		if err != nil || got != c.want {
			t.Errorf("JSONEqual(%s, %s) = %v, %v; want %v", c.a, c.b, got, err, c.want)
		}
		if got, _ := JSONEqual([]byte(c.b), []byte(c.a)); got != c.want {
			t.Errorf("JSONEqual is not symmetric for %s, %s", c.a, c.b)
		}
	}
	for _, bad := range []string{``, `{`, `{"a": 1, "a": 1}`, `1 2`, `01`, `"\ud800"`, "\"\xff\"", `nul`, strings.Repeat("[", 20000) + strings.Repeat("]", 20000)} {
		if _, err := JSONEqual([]byte(bad), []byte(`1`)); err == nil {
			t.Errorf("JSONEqual(%.20q, 1) gave no error", bad)
		}
		if _, err := JSONEqual([]byte(`1`), []byte(bad)); err == nil || !strings.Contains(err.Error(), "second text") {
			t.Errorf("JSONEqual(1, %.20q) = %v, want an error about the second text", bad, err)
		}
	}
}

func TestNormNumber(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "-0.0e5": "0", "1": "0.1e1", "-1": "-0.1e1", "120": "0.12e3", "0.012": "0.12e-1",
		"1.50": "0.15e1", "1e400": "0.1e401", "12345678901234567890123": "0.12345678901234567890123e23",
		"5E-3": "0.5e-2", "1e+2": "0.1e3",
	} {
		if got := normNumber(in); got != want {
			t.Errorf("normNumber(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestEqualGraphs(t *testing.T) {
	a, ds := Decode("a.json", []byte(`{"channels": {"x": {}, "y": {"reducer": "append"}}, "nodes": [{"id": "n", "type": "t", "config": {"a": 1, "b": 2.0}}],
"edges": [{"from": "__start__", "to": "n", "when": {"channel": "x", "eq": 1}}]}`))
	if a == nil {
		t.Fatal(dump(ds))
	}
	b, ds := Decode("b.json", []byte(`{"edges": [{"when": {"eq": 1.0, "channel": "x"}, "to": "n", "from": "__start__"}],
"nodes": [{"config": {"b": 2, "a": 1e0}, "type": "t", "id": "n"}], "channels": {"y": {"reducer": "append"}, "x": {}}}`))
	if b == nil {
		t.Fatal(dump(ds))
	}
	if !Equal(a, b) {
		t.Errorf("Equal = false for documents that differ only in key order and number spelling")
	}
	c := a.Clone()
	c.Nodes[0].Config = []byte(`{"a": 1, "b": 3}`)
	if Equal(a, c) {
		t.Errorf("Equal = true after changing a config value")
	}
	if string(a.Nodes[0].Config) == string(c.Nodes[0].Config) {
		t.Errorf("Clone shares Config")
	}
	c = a.Clone()
	c.Channels[0].Reducer = LastWrite // explicit last_write is not an absent reducer
	if Equal(a, c) {
		t.Errorf("Equal = true for an absent and an explicit reducer")
	}
	if !Equal(nil, nil) || Equal(a, nil) || Equal(nil, a) {
		t.Errorf("Equal mishandles nil")
	}
	if (*Graph)(nil).Clone() != nil {
		t.Errorf("Clone(nil) != nil")
	}
}

// Clone shares nothing mutable.
func TestCloneIsDeep(t *testing.T) {
	g := &Graph{
		Channels: []Channel{{Name: "c", Extra: Extra{"x": []byte("1")}}},
		Nodes:    []Node{{ID: "n", Type: "t", Config: []byte(`{}`), Extra: Extra{"y": []byte("2")}}},
		Edges:    []Edge{{From: Start, To: "n", When: &Predicate{Channel: "c", Op: OpIn, Values: []Literal{{Kind: LitString, Str: "a"}}}}},
		Extra:    Extra{"z": []byte("3")},
	}
	before := string(g.Encode())
	c := g.Clone()
	c.Channels[0].Extra["x"][0] = '9'
	c.Nodes[0].Config[0] = '['
	c.Nodes[0].Extra["y"] = []byte("8")
	c.Edges[0].When.Values[0].Str = "b"
	c.Edges[0].When.Channel = "d"
	c.Extra["w"] = []byte("4")
	if after := string(g.Encode()); after != before {
		t.Errorf("changing the clone changed the original:\n%s\n---\n%s", before, after)
	}
	var empty Graph
	empty.Nodes = []Node{}
	if c := empty.Clone(); c.Nodes == nil || c.Edges != nil {
		t.Errorf("Clone lost nil-ness: %#v", c)
	}
}
