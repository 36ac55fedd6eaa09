package spec

import (
	"bytes"
	"strings"
	"testing"
)

func TestPos(t *testing.T) {
	doc := []byte(`{
  "name": "p",
  "channels": { "intent": { "reducer": "append" }, "odd.name": {} },
  "nodes": [
    { "id": "a", "type": "llm",
      "config": { "model": "m", "tools": ["search", { "deep": [1, 2] }], "a b": true } },
    { "id": "b", "type": "t", "x-extra": { "k": [null] } }
  ],
  "edges": [
    { "from": "__start__", "to": "a" },
    { "from": "a", "to": "b", "when": { "channel": "intent", "in": ["x", 2] } },
    { "from": "b", "to": "__end__" }
  ]
}`)
	g, ds := Decode("pos.json", doc)
	if g == nil {
		t.Fatal(dump(ds))
	}
	cases := []struct{ path, at, after string }{
		{"", "{", ""},
		{"name", `"p"`, ""},
		{"channels", "{ \"intent\"", ""},
		{"channels.intent", `{ "reducer"`, ""},
		{"channels.intent.reducer", `"append"`, ""},
		{`channels["odd.name"]`, "{}", `"odd.name"`},
		{"nodes", "[", `"nodes"`},
		{"nodes[0]", `{ "id": "a"`, ""},
		{"nodes[0].type", `"llm"`, ""},
		{"nodes[0].config", `{ "model"`, ""},
		{"nodes[0].config.model", `"m"`, ""},
		{"nodes[0].config.tools[1]", `{ "deep"`, ""},
		{"nodes[0].config.tools[1].deep[1]", `2`, `"deep": [1, `},
		{`nodes[0].config["a b"]`, "true", ""},
		{"nodes[1].x-extra.k[0]", "null", ""},
		{"edges[1].when", `{ "channel"`, ""},
		{"edges[1].when.in[1]", "2", `"x", `},
		{"edges[2].to", `"__end__"`, `"b", "to": `},
	}
	for _, c := range cases {
		from := 0
		if c.after != "" {
			from = bytes.Index(doc, []byte(c.after)) + len(c.after)
		}
		off := from + bytes.Index(doc[from:], []byte(c.at))
		line, col := lineCol(doc, off)
		want := Pos{File: "pos.json", Offset: off, Line: line, Col: col}
		if got := g.Pos(c.path); got != want {
			t.Errorf("Pos(%s) = %+v, want %+v", c.path, got, want)
		}
		if got := g.Clone().Pos(c.path); got != want {
			t.Errorf("Clone().Pos(%s) = %+v, want %+v", c.path, got, want)
		}
	}
	for _, unknown := range []string{"nodes[2]", "nodes[0].config.missing", "nodes[0].config.tools[9]", "nodes[0].id[0]", "name.x", "edges[1].when.in[2]", "nodes.0", "[", `x["unterminated`, "a..b", "nodes[-1]", "nodes[+1]"} {
		if got := g.Pos(unknown); got != (Pos{}) {
			t.Errorf("Pos(%s) = %+v, want the zero Pos", unknown, got)
		}
	}
	if got := (&Graph{}).Pos("name"); got != (Pos{}) {
		t.Errorf("Pos on a Go-built graph = %+v", got)
	}
	if got := (*Graph)(nil).Pos("name"); got != (Pos{}) {
		t.Errorf("Pos on nil = %+v", got)
	}
}

func TestPaths(t *testing.T) {
	cases := []struct {
		path string
		segs []seg
	}{
		{"", nil},
		{"nodes", []seg{{key: "nodes", isKey: true}}},
		{"nodes[3].type", []seg{{key: "nodes", isKey: true}, {index: 3}, {key: "type", isKey: true}}},
		{PathKey("channels", "a.b"), []seg{{key: "channels", isKey: true}, {key: "a.b", isKey: true}}},
		{PathKey(PathKey("", "x y"), `q"]`), []seg{{key: "x y", isKey: true}, {key: `q"]`, isKey: true}}},
		{PathIndex(PathKey("", ""), 0), []seg{{key: "", isKey: true}, {index: 0}}},
		{PathKey("channels", "0"), []seg{{key: "channels", isKey: true}, {key: "0", isKey: true}}},
	}
	for _, c := range cases {
		segs, ends, ok := parsePath(c.path)
		if !ok || len(segs) != len(c.segs) || len(ends) != len(segs) {
			t.Errorf("parsePath(%s) = %v, %v, %v", c.path, segs, ends, ok)
			continue
		}
		for i := range segs {
			if segs[i] != c.segs[i] {
				t.Errorf("parsePath(%s)[%d] = %+v, want %+v", c.path, i, segs[i], c.segs[i])
			}
		}
		if len(ends) > 0 && ends[len(ends)-1] != len(c.path) {
			t.Errorf("parsePath(%s) ends at %d", c.path, ends[len(ends)-1])
		}
	}
	if got := PathKey("channels", "a.b"); got != `channels["a.b"]` {
		t.Errorf("PathKey = %s", got)
	}
	if got := PathIndex(PathKey("", "nodes"), 3) + "." + "type"; got != "nodes[3].type" {
		t.Errorf("PathIndex = %s", got)
	}
}

// A decoded graph may be read from many goroutines at once.
func TestConcurrentReads(t *testing.T) {
	doc := readDir(t, "valid")["support-agent"]
	g, ds := Decode("support-agent.json", doc)
	if g == nil {
		t.Fatal(dump(ds))
	}
	want := g.Encode()
	done := make(chan bool)
	for range 8 {
		go func() {
			ok := g.Pos("edges[1].when.eq").Line == 14 && bytes.Equal(g.Encode(), want) && len(g.Validate()) == 0
			done <- ok
		}()
	}
	for range 8 {
		if !<-done {
			t.Error("a concurrent read saw something else")
		}
	}
}

// Long keys are abbreviated in paths, and the abbreviations resolve.
func TestLongKeyPaths(t *testing.T) {
	long := strings.Repeat("é", 40) // 80 bytes
	other := strings.Repeat("é", 16) + strings.Repeat("x", 60)
	seg := PathKey("", long)
	if !strings.HasPrefix(seg, `["`+strings.Repeat("é", 16)+`…"#`) || len(seg) > 100 {
		t.Errorf("PathKey(long) = %s", seg)
	}
	if PathKey("", other) == seg {
		t.Errorf("two long keys with one prefix get one path")
	}
	if got := PathKey("", strings.Repeat("k", 64)); got != strings.Repeat("k", 64) {
		t.Errorf("a 64-byte key is abbreviated: %s", got)
	}
	segs, _, ok := parsePath(PathKey(PathKey("channels", long), "m"))
	if !ok || len(segs) != 3 || !segs[1].matches(long) || segs[1].matches(other) || segs[2].key != "m" {
		t.Errorf("parsePath of an abbreviated path = %+v, %v", segs, ok)
	}
	for _, bad := range []string{`["a…"#123]`, `["a…"#zzzzzzzzzzzzzzzzzzzzzzzz]`, `["a…"#`} {
		if _, _, ok := parsePath(bad); ok {
			t.Errorf("parsePath(%s) accepted", bad)
		}
	}

	doc := []byte(`{"channels": {"` + long + `": {"x-y": 1}, "` + other + `": {}},
"nodes": [{"id": "a", "type": "t", "config": {"` + other + `": 0, "` + long + `": {"k": [true]}}}],
"edges": [{"from": "__start__", "to": "a", "when": {"channel": "` + long + `", "eq": 1}}, {"from": "__start__", "to": "__end__"}]}`)
	g, ds := Decode("long.json", doc)
	if g == nil || len(ds) != 0 {
		t.Fatal(dump(ds))
	}
	// A diagnostic about a member under a long key stays one readable line.
	_, ds = Decode("long.json", bytes.Replace(doc, []byte(`"x-y"`), []byte(`"y"`), 1))
	if len(ds) != 1 || ds[0].Path != PathKey(PathKey("channels", long), "y") || len(ds[0].String()) > 500 {
		t.Errorf("got:\n%s", dump(ds))
	}
	for path, at := range map[string]string{
		PathKey(PathKey("channels", long), "x-y"):                    "1}",
		PathKey("channels", other):                                   "{}",
		PathIndex(PathKey(PathKey("nodes[0].config", long), "k"), 0): "true",
		PathKey("nodes[0].config", other):                            "0,",
	} {
		off := bytes.Index(doc, []byte(at))
		if got := g.Pos(path); got.Offset != off || got.Line == 0 {
			t.Errorf("Pos(%s) = %+v, want offset %d", path, got, off)
		}
	}
}
