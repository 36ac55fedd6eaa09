package spec

import (
	"bytes"
	"reflect"
	"testing"
)

// checkRoundTrip asserts the fidelity properties of an accepted document:
// its encoding is JSON-value-equal to it, encoding is a fixed point, the
// re-decoded graph equals the first, a clone encodes the same, and Validate
// agrees with Decode.
func checkRoundTrip(t testing.TB, name string, doc []byte, g *Graph, ds Diagnostics) {
	t.Helper()
	enc := g.Encode()
	eq, err := JSONEqual(doc, enc)
	if err != nil {
		t.Fatalf("%s: JSONEqual: %v", name, err)
	}
	if !eq {
		t.Fatalf("%s: encoding is not value-equal to the document:\n%s\n---\n%s", name, doc, enc)
	}
	g2, ds2 := Decode(name, enc)
	if g2 == nil {
		t.Fatalf("%s: the encoding is refused:\n%s\n%s", name, dump(ds2), enc)
	}
	if enc2 := g2.Encode(); !bytes.Equal(enc, enc2) {
		t.Fatalf("%s: encoding is not a fixed point:\n%s\n---\n%s", name, enc, enc2)
	}
	if !Equal(g, g2) {
		t.Fatalf("%s: Equal(decoded, re-decoded) is false", name)
	}
	c := g.Clone()
	if !bytes.Equal(c.Encode(), enc) || !Equal(g, c) {
		t.Fatalf("%s: the clone encodes differently", name)
	}
	if !reflect.DeepEqual(stripSrc(c), stripSrc(g)) {
		t.Fatalf("%s: the clone differs from the graph", name)
	}
	if vs := g.Validate(); !reflect.DeepEqual(vs, ds) {
		t.Fatalf("%s: Validate gives\n%s\nbut Decode gave\n%s", name, dump(vs), dump(ds))
	}
	if len(ds) != len(ds2) {
		t.Fatalf("%s: the encoding gets %d diagnostics, the document %d:\n%s---\n%s", name, len(ds2), len(ds), dump(ds2), dump(ds))
	}
}

func stripSrc(g *Graph) Graph {
	c := *g
	c.src = nil
	return c
}

func TestRoundTripValidDocuments(t *testing.T) {
	files := readDir(t, "valid")
	if len(files) < 10 {
		t.Fatalf("only %d valid documents", len(files))
	}
	for _, name := range sortedKeys(files) {
		t.Run(name, func(t *testing.T) {
			doc := files[name]
			g, ds := Decode(name+".json", doc)
			if g == nil {
				t.Fatalf("refused:\n%s", dump(ds))
			}
			checkRoundTrip(t, name, doc, g, ds)
		})
	}
}

// The presence of optional members survives decoding.
func TestPresenceIsKept(t *testing.T) {
	cases := []struct {
		doc  string
		want string // the canonical encoding
	}{
		{`{"edges":[{"from":"__start__","to":"__end__"}]}`,
			"{\n  \"edges\": [\n    {\n      \"from\": \"__start__\",\n      \"to\": \"__end__\"\n    }\n  ]\n}\n"},
		{`{"name":null,"channels":{},"nodes":[],"edges":[{"from":"__start__","to":"__end__"}]}`,
			"{\n  \"name\": null,\n  \"channels\": {},\n  \"nodes\": [],\n  \"edges\": [\n    {\n      \"from\": \"__start__\",\n      \"to\": \"__end__\"\n    }\n  ]\n}\n"},
		{`{"name":"","channels":{"c":{}},"edges":[{"to":"__end__","from":"__start__","when":{"eq":1.50,"channel":"c"}}]}`,
			"{\n  \"name\": \"\",\n  \"channels\": {\n    \"c\": {}\n  },\n  \"edges\": [\n    {\n      \"from\": \"__start__\",\n      \"to\": \"__end__\",\n      \"when\": {\n        \"channel\": \"c\",\n        \"eq\": 1.50\n      }\n    }\n  ]\n}\n"},
		{`{"nodes":[{"id":"a","type":"t","config":null},{"id":"b","type":"t"},{"id":"c","type":"t","config":{}}],"edges":[{"from":"__start__","to":"a"},{"from":"__start__","to":"b"},{"from":"__start__","to":"c"}]}`,
			"{\n  \"nodes\": [\n    {\n      \"id\": \"a\",\n      \"type\": \"t\",\n      \"config\": null\n    },\n    {\n      \"id\": \"b\",\n      \"type\": \"t\"\n    },\n    {\n      \"id\": \"c\",\n      \"type\": \"t\",\n      \"config\": {}\n    }\n  ],\n  \"edges\": [\n    {\n      \"from\": \"__start__\",\n      \"to\": \"a\"\n    },\n    {\n      \"from\": \"__start__\",\n      \"to\": \"b\"\n    },\n    {\n      \"from\": \"__start__\",\n      \"to\": \"c\"\n    }\n  ]\n}\n"},
	}
	for _, c := range cases {
		g, ds := Decode("p.json", []byte(c.doc))
		if g == nil {
			t.Fatalf("refused %s:\n%s", c.doc, dump(ds))
		}
		if got := string(g.Encode()); got != c.want {
			t.Errorf("Encode(%s) =\n%s\nwant\n%s", c.doc, got, c.want)
		}
	}
	g, _ := Decode("p.json", []byte(`{"name":null,"nodes":[{"id":"a","type":"t","config":null},{"id":"b","type":"t"}],"edges":[{"from":"__start__","to":"a"},{"from":"__start__","to":"b"}]}`))
	if g.NameKind != Null || g.Channels != nil || string(g.Nodes[0].Config) != "null" || g.Nodes[1].Config != nil {
		t.Errorf("presence lost: NameKind %v, Channels %#v, configs %q %q", g.NameKind, g.Channels, g.Nodes[0].Config, g.Nodes[1].Config)
	}
}

// Decoded values are what the document says: strings decoded, number text
// verbatim, raw JSON the document's bytes.
func TestDecodedValues(t *testing.T) {
	doc := `{"name": "q\" b\\ n\u0000 l\u2028 s\ud83d\ude00 <&>",
"channels": {"z": {"reducer": "merge"}, "a": {}},
"nodes": [{"id": "n", "type": "t", "config": {"b": 1.0, "a": [1e3]}, "x-y": [ 1 ]}],
"edges": [{"from": "__start__", "to": "n", "when": {"channel": "a", "in": ["s", 1E+2, true, null]}},
{"from": "n", "to": "__end__", "when": {"channel": "z", "gt": 12345678901234567890123}}]}`
	g, ds := Decode("v.json", []byte(doc))
	if g == nil {
		t.Fatalf("refused:\n%s", dump(ds))
	}
	if want := "q\" b\\ n\x00 l\u2028 s😀 <&>"; g.Name != want || g.NameKind != Set {
		t.Errorf("Name = %q, want %q", g.Name, want)
	}
	if g.Channels[0].Name != "a" || g.Channels[1].Name != "z" || g.Channels[1].Reducer != Merge || g.Channels[0].Kind() != LastWrite {
		t.Errorf("Channels = %+v", g.Channels)
	}
	if c, ok := g.Channel("z"); !ok || c.Reducer != Merge {
		t.Errorf("Channel(z) = %+v, %v", c, ok)
	}
	if got := string(g.Nodes[0].Config); got != `{"b": 1.0, "a": [1e3]}` {
		t.Errorf("Config = %s", got)
	}
	if got := string(g.Nodes[0].Extra["x-y"]); got != `[ 1 ]` {
		t.Errorf("Extra = %s", got)
	}
	want := []Literal{{Kind: LitString, Str: "s"}, {Kind: LitNumber, Num: "1E+2"}, {Kind: LitBool, Bool: true}, {Kind: LitNull}}
	if p := g.Edges[0].When; p.Op != OpIn || !reflect.DeepEqual(p.Values, want) {
		t.Errorf("When = %+v", p)
	}
	if p := g.Edges[1].When; p.Op != OpGt || p.Value.Num != "12345678901234567890123" || p.Value.Float() != 1.2345678901234568e22 {
		t.Errorf("When = %+v", p)
	}
	enc := string(g.Encode())
	for _, s := range []string{`"name": "q\" b\\ n\u0000 l\u2028 s😀 <&>"`, `"b": 1.0`, `1E+2`, `12345678901234567890123`} {
		if !bytes.Contains([]byte(enc), []byte(s)) {
			t.Errorf("encoding lacks %s:\n%s", s, enc)
		}
	}
}

// Strings that need escaping come back exactly, through Go-built graphs too.
func TestStringsRoundTrip(t *testing.T) {
	for _, s := range []string{"", `"`, `\`, "\x00", "\x01\x1f\x7f", "\b\f\n\r\t", "\u2028\u2029", "<script>&amp;</script>", "😀", "\ufeff", "\uffff", "é\u0301", `\u0041`} {
		g := &Graph{Name: s, NameKind: Set, Edges: []Edge{{From: Start, To: "n" + s}},
			Channels: []Channel{{Name: "c" + s}},
			Nodes:    []Node{{ID: "n" + s, Type: s + "t", Config: []byte(`{"k":` + string(appendQuoted(nil, s)) + `}`)}}}
		enc := g.Encode()
		d, ds := Decode("s.json", enc)
		if d == nil {
			t.Fatalf("%q: refused:\n%s\n%s", s, dump(ds), enc)
		}
		if d.Name != s || d.Channels[0].Name != "c"+s || d.Nodes[0].ID != "n"+s || d.Nodes[0].Type != s+"t" {
			t.Errorf("%q: decoded %q %q %q %q", s, d.Name, d.Channels[0].Name, d.Nodes[0].ID, d.Nodes[0].Type)
		}
		if !bytes.Equal(d.Encode(), enc) {
			t.Errorf("%q: not a fixed point", s)
		}
	}
}

func TestEncodeMemberOrder(t *testing.T) {
	doc := `{"x-zeta": 1, "edges": [{"when": {"eq": 1, "channel": "c"}, "x-b": 2, "to": "n", "x-a": 1, "from": "__start__"}],
"x-alpha": {"y": 1, "x": [2, {"d": 1, "c": 2}]}, "nodes": [{"config": {"b": 1, "a": 2}, "type": "t", "x-m": 1, "id": "n"}],
"channels": {"c": {"x-z": 1, "reducer": "append"}, "b": {}}, "name": "order"}`
	g, ds := Decode("o.json", []byte(doc))
	if g == nil {
		t.Fatalf("refused:\n%s", dump(ds))
	}
	want := `{
  "name": "order",
  "channels": {
    "b": {},
    "c": {
      "reducer": "append",
      "x-z": 1
    }
  },
  "nodes": [
    {
      "id": "n",
      "type": "t",
      "config": {
        "a": 2,
        "b": 1
      },
      "x-m": 1
    }
  ],
  "edges": [
    {
      "from": "__start__",
      "to": "n",
      "when": {
        "channel": "c",
        "eq": 1
      },
      "x-a": 1,
      "x-b": 2
    }
  ],
  "x-alpha": {
    "x": [
      2,
      {
        "c": 2,
        "d": 1
      }
    ],
    "y": 1
  },
  "x-zeta": 1
}
`
	if got := string(g.Encode()); got != want {
		t.Errorf("Encode =\n%s\nwant\n%s", got, want)
	}
}
