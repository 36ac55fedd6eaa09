package studio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/server"
	"github.com/ilmek-go/ilmek/spec"
	"github.com/ilmek-go/ilmek/studio"
	"github.com/ilmek-go/ilmek/studio/sqlite"
)

func TestNewRefuses(t *testing.T) {
	base := func() studio.Config {
		return studio.Config{Repository: studio.NewMemory(), Registry: registry(), Authenticate: server.Anonymous}
	}
	cases := []struct {
		name string
		edit func(*studio.Config)
		want string
	}{
		{"no Authenticate", func(c *studio.Config) { c.Authenticate = nil }, "Authenticate"},
		{"no Repository", func(c *studio.Config) { c.Repository = nil }, "Repository"},
		{"no Registry", func(c *studio.Config) { c.Registry = nil }, "Registry"},
		{"a type not registered", func(c *studio.Config) { c.NodeTypes = []studio.NodeType{{Type: "llm"}} }, `"llm"`},
		{"a type twice", func(c *studio.Config) { c.NodeTypes = []studio.NodeType{{Type: "say"}, {Type: "say"}} }, "twice"},
		{"a schema that is not JSON", func(c *studio.Config) { c.NodeTypes = []studio.NodeType{{Type: "say", ConfigSchema: []byte("{")}} }, "ConfigSchema"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.edit(&c)
			_, err := studio.New(c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want an error naming %s", err, tc.want)
			}
		})
	}
	c := base()
	c.Authenticate = nil
	if _, err := studio.New(c); !errors.Is(err, studio.ErrNoAuthenticate) {
		t.Errorf("New without Authenticate: %v, want ErrNoAuthenticate", err)
	}
}

func TestNodeTypes(t *testing.T) {
	s := newStudio(t, func(c *studio.Config) {
		c.Registry["subgraph"] = c.Registry["say"]
		c.NodeTypes = append(c.NodeTypes, studio.NodeType{Type: "subgraph", Category: "flow", Builtin: true})
		c.Registry["plain"] = c.Registry["say"]
	})
	var got struct {
		NodeTypes []studio.NodeType `json:"node_types"`
	}
	s.must("ann", "GET", "/api/node-types", nil, 200).json(t, &got)
	var order []string
	for _, nt := range got.NodeTypes {
		order = append(order, nt.Type)
	}
	// Undescribed types first (no category), then by category, built-ins last.
	if want := "plain output:say people:ask"; strings.Join(order, " ") != "plain say ask subgraph" {
		t.Fatalf("node types %v, want the order of %s then subgraph", order, want)
	}
	if !json.Valid(got.NodeTypes[1].ConfigSchema) || !bytes.Contains(got.NodeTypes[1].ConfigSchema, []byte(`"text"`)) || got.NodeTypes[1].Description == "" {
		t.Errorf("say: %+v", got.NodeTypes[1])
	}
	if !got.NodeTypes[3].Builtin {
		t.Errorf("subgraph is not marked built-in: %+v", got.NodeTypes[3])
	}

	// The engine's node types are recognized by name, with their schemas,
	// after the application's; "subgraph", which the runtime provides, is
	// listed without being registered, with spec's config schema.
	s = newStudio(t, func(c *studio.Config) { c.Registry["a2a_call"] = c.Registry["say"] })
	s.must("ann", "GET", "/api/node-types", nil, 200).json(t, &got)
	order = order[:0]
	for _, nt := range got.NodeTypes {
		order = append(order, nt.Type)
	}
	if got := strings.Join(order, " "); got != "say ask a2a_call subgraph" {
		t.Fatalf("node types %s, want say ask a2a_call subgraph", got)
	}
	a2a, sub := got.NodeTypes[2], got.NodeTypes[3]
	if !a2a.Builtin || a2a.Category != "a2a" || !bytes.Contains(a2a.ConfigSchema, []byte("nodes/a2a.CallConfig")) {
		t.Errorf("a2a_call: %+v", a2a)
	}
	var schema bytes.Buffer
	if err := json.Compact(&schema, spec.SubgraphConfigSchema()); err != nil {
		t.Fatal(err)
	}
	if !sub.Builtin || sub.Category != "subgraphs" || !bytes.Equal(sub.ConfigSchema, schema.Bytes()) || sub.Description == "" {
		t.Errorf("subgraph: %s %s %q %s", sub.Type, sub.Category, sub.Description, sub.ConfigSchema)
	}
}

// TestCheck: every kind of problem comes back placed on the node or edge
// it is about, with the hint.
func TestCheck(t *testing.T) {
	s := newStudio(t, nil)
	cases := []struct {
		name, src      string
		errors         int
		severity, path string
		node           string
		edge           int
		hint           string
	}{
		{"valid", chain, 0, "", "", "", -1, ""},
		{"a literal of the wrong kind", strings.Replace(chain, `{"from":"a","to":"b"}`, `{"from":"a","to":"b","when":{"channel":"n","gt":"five"}}`, 1),
			1, "error", "edges[1].when.gt", "", 1, ""},
		{"an unknown member", strings.Replace(chain, `{"from":"a","to":"b"}`, `{"from":"a","to":"b","wehn":{}}`, 1),
			1, "error", "edges[1].wehn", "", 1, "when"},
		{"an unregistered type", strings.Replace(chain, `"type":"say","config":{"text":"bye"}`, `"type":"sey"`, 1),
			1, "error", "nodes[1].type", "b", -1, `"say"`},
		{"a config the factory refuses", strings.Replace(chain, `{"text":"bye"}`, `{"txt":"bye"}`, 1),
			1, "error", "nodes[1].config", "b", -1, "form"},
		{"a config of the wrong kind", strings.Replace(chain, `{"text":"bye"}`, `{"text":"bye","times":"two"}`, 1),
			1, "error", "nodes[1].config", "b", -1, ""},
		{"an unreachable node", strings.Replace(chain, `{"from":"a","to":"b"},`, `{"from":"a","to":"__end__"},`, 1),
			0, "warning", "nodes[1]", "b", -1, ""},
		{"not JSON", `{"name":`, 1, "error", "", "", -1, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var rep studio.Report
			s.must("ann", "POST", "/api/check", map[string]any{"source": tc.src}, 200).json(t, &rep)
			for _, d := range rep.Diagnostics {
				noInternalWords(t, "a diagnostic", d.Message+" ("+d.Hint+")")
			}
			if rep.Errors != tc.errors {
				t.Fatalf("%d errors, want %d: %+v", rep.Errors, tc.errors, rep.Diagnostics)
			}
			if tc.severity == "" {
				if len(rep.Diagnostics) != 0 || rep.Fingerprint == "" || !strings.Contains(rep.Mermaid, "a --> b") || rep.Canonical == "" {
					t.Fatalf("valid document: %+v", rep)
				}
				return
			}
			for _, d := range rep.Diagnostics {
				if d.Severity == tc.severity && strings.HasPrefix(d.Path, tc.path) && d.Node == tc.node && d.Edge == tc.edge && strings.Contains(d.Hint, tc.hint) && d.Line > 0 {
					return
				}
			}
			t.Fatalf("no %s at %s (node %q, edge %d, hint %q) in %+v", tc.severity, tc.path, tc.node, tc.edge, tc.hint, rep.Diagnostics)
		})
	}
}

// TestConfigWords: a config the node type's factory refuses (through
// runtime.DecodeConfig) is one diagnostic per refused value, at its path,
// saying what the value must be in the words of the form, not of the Go
// type it decodes into.
func TestConfigWords(t *testing.T) {
	s := newStudio(t, nil)
	for _, c := range []struct {
		name, config string
		want         []studio.Diagnostic // Path, Message and Hint (a part of it)
	}{
		{"a value of the wrong kind", `{"text":"bye","times":"two"}`, []studio.Diagnostic{
			{Path: "nodes[1].config.times", Message: `node "b": config.times must be a whole number, not a string`, Hint: "fix it in the node's config form"}}},
		{"a string that is a number", `{"text":5}`, []studio.Diagnostic{
			{Path: "nodes[1].config.text", Message: `node "b": config.text must be a string, not a number`, Hint: "config form"}}},
		{"a misspelt setting", `{"txt":"bye"}`, []studio.Diagnostic{
			{Path: "nodes[1].config.txt", Message: `node "b": config has a setting "txt", which the node's type does not take`, Hint: `did you mean "text"? Rename it in the node's config form`}}},
		{"a setting of another type", `{"text":"bye","model":"x"}`, []studio.Diagnostic{
			{Path: "nodes[1].config.model", Message: `node "b": config has a setting "model", which the node's type does not take`, Hint: `remove it in the node's config form; the type takes "text" and "times"`}}},
		{"a number out of range", `{"text":"bye","times":99999999999999999999}`, []studio.Diagnostic{
			{Path: "nodes[1].config.times", Message: `node "b": config.times must be a whole number from -9223372036854775808 to 9223372036854775807, not 99999999999999999999`}}},
		{"two problems", `{"text":1,"times":"two"}`, []studio.Diagnostic{
			{Path: "nodes[1].config.text", Message: `node "b": config.text must be a string, not a number`},
			{Path: "nodes[1].config.times", Message: `node "b": config.times must be a whole number, not a string`}}},
		{"the factory's own words", `{"times":2}`, []studio.Diagnostic{
			{Path: "nodes[1].config", Message: `node "b": config.text is required: give the text to say`, Hint: "config form"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rep studio.Report
			src := strings.Replace(chain, `{"text":"bye"}`, c.config, 1)
			s.must("ann", "POST", "/api/check", map[string]any{"source": src}, 200).json(t, &rep)
			if rep.Errors != len(c.want) {
				t.Fatalf("%d errors, want %d: %+v", rep.Errors, len(c.want), rep.Diagnostics)
			}
			for i, w := range c.want {
				d := rep.Diagnostics[i]
				if d.Path != w.Path || d.Message != w.Message || !strings.Contains(d.Hint, w.Hint) || d.Node != "b" || d.Line != 4 {
					t.Errorf("diagnostic %d: %+v\nwant %+v at line 4 on node b", i, d, w)
				}
				noInternalWords(t, "a diagnostic", d.Message+" ("+d.Hint+")")
			}
		})
	}
}

// volume is a named integer type of a config field (tuneConfig).
type volume int8

// tuneConfig is the config of the "tune" node type of TestConfigWordsOfNamedTypes.
type tuneConfig struct {
	Volume volume `json:"volume"`
}

// TestConfigWordsOfNamedTypes: a config field of a named integer type
// (type volume int8) is worded as one of int8 is: a whole number, and
// its range. The studio used to read the runtime's sentence back with
// patterns that knew only Go's own integer types, so an out-of-range
// value reached the form as "300 does not fit volume: encoding/json
// wants an integer in its range".
func TestConfigWordsOfNamedTypes(t *testing.T) {
	s := newStudio(t, func(c *studio.Config) {
		c.Registry["tune"] = func(n spec.Node) (runtime.NodeFunc, error) {
			var c tuneConfig
			if err := runtime.DecodeConfig(n, &c); err != nil {
				return nil, err
			}
			return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }, nil
		}
		c.NodeTypes = append(c.NodeTypes, studio.NodeType{Type: "tune", Category: "output", Description: "Sets the volume"})
	})
	for _, c := range []struct{ config, want string }{
		{`{"volume":300}`, `node "b": config.volume must be a whole number from -128 to 127, not 300`},
		{`{"volume":"loud"}`, `node "b": config.volume must be a whole number, not a string`},
		{`{"volume":1,"volum":2}`, `node "b": config has a setting "volum", which the node's type does not take`},
	} {
		t.Run(c.config, func(t *testing.T) {
			var rep studio.Report
			src := strings.Replace(chain, `"type":"say","config":{"text":"bye"}`, `"type":"tune","config":`+c.config, 1)
			s.must("ann", "POST", "/api/check", map[string]any{"source": src}, 200).json(t, &rep)
			if rep.Errors != 1 || rep.Diagnostics[0].Message != c.want {
				t.Fatalf("diagnostics %+v, want one saying %q", rep.Diagnostics, c.want)
			}
			noInternalWords(t, "a diagnostic", rep.Diagnostics[0].Message+" ("+rep.Diagnostics[0].Hint+")")
		})
	}
}

// TestDocuments: create, open, save drafts (a stale base refused),
// rename, list, delete, with the access rule.
func TestDocuments(t *testing.T) {
	s := newStudio(t, nil)
	d := s.create("ann", "chain", chain)
	if d.Revision != 1 || d.Owner != "ann" || d.Report.Errors != 0 {
		t.Fatalf("created %+v", d)
	}
	problem(t, s.do("ann", "POST", "/api/documents", map[string]any{"name": "chain"}), 409, "name-taken")
	problem(t, s.do("ann", "POST", "/api/documents", map[string]any{"name": "no spaces"}), 400, "bad-name")
	problem(t, s.do("ann", "POST", "/api/documents", map[string]any{"name": "x", "sauce": "{}"}), 400, "bad-request")
	empty := s.create("ann", "empty", "")
	if !strings.Contains(empty.Source, `"name": "empty"`) {
		t.Errorf("an empty document: %s", empty.Source)
	}

	d2 := s.save("ann", d, strings.Replace(chain, "hello", "hi", 1))
	if d2.Revision != 2 || !strings.Contains(d2.Source, `"hi"`) {
		t.Fatalf("saved %+v", d2)
	}
	problem(t, s.do("ann", "PUT", "/api/documents/"+d.ID+"/draft", map[string]any{"base": 1, "source": chain}), 409, "stale")
	// A draft with errors is kept as written.
	bad := `{"name": "chain", "nodes": [}`
	d3 := s.save("ann", d2, bad)
	if d3.Source != bad || d3.Report.Errors == 0 {
		t.Fatalf("a draft with errors: %+v", d3)
	}
	var revs struct{ Revisions []studio.Revision }
	s.must("ann", "GET", "/api/documents/"+d.ID+"/revisions", nil, 200).json(t, &revs)
	if len(revs.Revisions) != 3 || revs.Revisions[0].Fingerprint == "" || revs.Revisions[2].Fingerprint != "" {
		t.Fatalf("revisions %+v", revs.Revisions)
	}
	var r1 struct{ Source string }
	s.must("ann", "GET", "/api/documents/"+d.ID+"/revisions/1", nil, 200).json(t, &r1)
	if r1.Source != d.Source {
		t.Errorf("revision 1 is %s, want %s", r1.Source, d.Source)
	}
	problem(t, s.do("ann", "GET", "/api/documents/"+d.ID+"/revisions/9", nil), 404, "not-found")
	problem(t, s.do("ann", "GET", "/api/documents/"+d.ID+"/revisions/x", nil), 400, "bad-request")

	// Bob sees none of ann's documents, and cannot tell them from missing ones.
	var list struct{ Documents []studio.Document }
	s.must("bob", "GET", "/api/documents", nil, 200).json(t, &list)
	if len(list.Documents) != 0 {
		t.Errorf("bob lists %+v", list.Documents)
	}
	for _, c := range []struct{ method, path string }{{"GET", ""}, {"DELETE", ""}, {"GET", "/revisions"}, {"GET", "/review"}} {
		problem(t, s.do("bob", c.method, "/api/documents/"+d.ID+c.path, nil), 404, "not-found")
	}
	problem(t, s.do("bob", "GET", "/api/documents/nope", nil), 404, "not-found")

	var renamed studio.Document
	s.must("ann", "PATCH", "/api/documents/"+d.ID, map[string]any{"name": "chain2"}, 200).json(t, &renamed)
	if renamed.Name != "chain2" {
		t.Errorf("renamed %+v", renamed)
	}
	problem(t, s.do("ann", "PATCH", "/api/documents/"+d.ID, map[string]any{"name": "empty"}), 409, "name-taken")
	s.must("ann", "GET", "/api/documents", nil, 200).json(t, &list)
	if len(list.Documents) != 2 || list.Documents[0].Name != "chain2" || list.Documents[1].Name != "empty" {
		t.Errorf("ann lists %+v", list.Documents)
	}
	s.must("ann", "DELETE", "/api/documents/"+d.ID, nil, 204)
	problem(t, s.do("ann", "GET", "/api/documents/"+d.ID, nil), 404, "not-found")
}

// TestUnreadableDrafts: a draft whose nodes, edges or channels are of
// another kind than the document's (the page cannot draw it) is kept
// byte for byte as written, created or saved, and its report places the
// error on the member, saying what it must be and how to write it;
// reviewing it lists the error, and publishing it is refused.
func TestUnreadableDrafts(t *testing.T) {
	for _, c := range []struct {
		name, src, path, want string
	}{
		{"nodes that are an object", `{"name":"d","channels":{},"nodes":{"a":{"id":"a","type":"say"}},"edges":[]}`, "nodes", `"nodes" must be an array of nodes, not an object`},
		{"nodes that are a string", `{"name":"d","channels":{},"nodes":"a","edges":[]}`, "nodes", `"nodes" must be an array of nodes, not a string`},
		{"nodes that are null", `{"name":"d","channels":{},"nodes":null,"edges":[]}`, "nodes", `"nodes" must be an array of nodes, not null`},
		{"edges that are an object", `{"name":"d","channels":{},"nodes":[],"edges":{"from":"__start__"}}`, "edges", `"edges" must be an array of edges, not an object`},
		{"channels that are a list", `{"name":"d","channels":["log"],"nodes":[],"edges":[]}`, "channels", `"channels" must be an object of channel name to channel, not an array`},
		{"a node that is a number", `{"name":"d","channels":{},"nodes":[5,{"id":"b","type":"say"}],"edges":[]}`, "nodes[0]", `a node must be an object, not a number`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStudio(t, nil)
			var rep studio.Report
			s.must("ann", "POST", "/api/check", map[string]any{"source": c.src}, 200).json(t, &rep)
			found := false
			for _, d := range rep.Diagnostics {
				noInternalWords(t, "a diagnostic", d.Message+" ("+d.Hint+")")
				if d.Path == c.path && d.Severity == "error" && strings.Contains(d.Message, c.want) && d.Line == 1 && d.Col > 0 &&
					strings.HasPrefix(d.Hint, "write ") && d.Node == "" && d.Edge == -1 {
					found = true
				}
			}
			if !found || rep.Canonical != "" || rep.Fingerprint != "" {
				t.Fatalf("no error at %s saying %q with a hint (canonical %q): %+v", c.path, c.want, rep.Canonical, rep.Diagnostics)
			}

			d := s.create("ann", "d", c.src)
			if d.Source != c.src || d.Report.Errors != rep.Errors {
				t.Fatalf("created as %q with %d errors, want %q with %d", d.Source, d.Report.Errors, c.src, rep.Errors)
			}
			edited := strings.Replace(c.src, `"name":"d"`, `"name":"d","x-note":"kept"`, 1)
			d2 := s.save("ann", d, edited)
			var got studio.DocumentView
			s.must("ann", "GET", "/api/documents/"+d.ID, nil, 200).json(t, &got)
			if d2.Source != edited || got.Source != edited || got.Revision != 2 {
				t.Fatalf("saved as %q, read back as revision %d %q, want %q", d2.Source, got.Revision, got.Source, edited)
			}
			var rv studio.Review
			s.must("ann", "GET", "/api/documents/"+d.ID+"/review", nil, 200).json(t, &rv)
			if len(rv.Errors) != rep.Errors {
				t.Errorf("the review lists %d errors, want %d: %+v", len(rv.Errors), rep.Errors, rv.Errors)
			}
			p := problem(t, s.do("ann", "POST", "/api/documents/"+d.ID+"/publish", map[string]any{"revision": 2, "published": 0}), 422, "document-invalid")
			if len(p.Diagnostics) != rep.Errors || p.Diagnostics[0].Path == "" {
				t.Errorf("publishing it: %+v", p)
			}
		})
	}
}

// TestAccessHook: a custom Access sees each action; a principal that may
// view but not publish gets 403.
func TestAccessHook(t *testing.T) {
	var seen []studio.Action
	s := newStudio(t, func(c *studio.Config) {
		c.Access = func(_ context.Context, p server.Principal, d studio.DocumentRef, a studio.Action) error {
			seen = append(seen, a)
			if p.ID == "viewer" && a != studio.ActionView {
				return errors.New("viewers only view")
			}
			return nil
		}
	})
	d := s.create("ann", "chain", chain)
	s.must("viewer", "GET", "/api/documents/"+d.ID, nil, 200)
	problem(t, s.do("viewer", "POST", "/api/documents/"+d.ID+"/publish", map[string]any{"revision": 1, "published": 0}), 403, "forbidden")
	problem(t, s.do("viewer", "PUT", "/api/documents/"+d.ID+"/draft", map[string]any{"base": 1, "source": chain}), 403, "forbidden")
	s.must("ann", "POST", "/api/documents/"+d.ID+"/publish", map[string]any{"revision": 1, "published": 0}, 200)
	s.must("viewer", "GET", "/api/published/chain", nil, 200)
	has := map[studio.Action]bool{}
	for _, a := range seen {
		has[a] = true
	}
	if !has[studio.ActionView] || !has[studio.ActionEdit] || !has[studio.ActionPublish] {
		t.Errorf("Access saw %v", seen)
	}
}

// TestRoundTrip: a document opened and saved without edits is
// byte-identical in canonical form, "x-" members at every level are kept,
// and moving a node (its x-studio member) keeps the fingerprint.
func TestRoundTrip(t *testing.T) {
	s := newStudio(t, nil)
	d := s.create("ann", "chain", chain)
	for _, m := range []string{`"x-tool"`, `"x-note"`, `"x-studio"`, `"x-label"`} {
		if !strings.Contains(d.Source, m) {
			t.Errorf("member %s lost: %s", m, d.Source)
		}
	}
	g, diags := spec.Decode("chain.json", []byte(chain))
	if diags.HasErrors() || d.Source != string(g.Encode()) {
		t.Fatalf("stored source is not the canonical form:\n%s", d.Source)
	}
	again := s.save("ann", d, d.Source)
	if again.Source != d.Source {
		t.Fatalf("saved unchanged, the source changed:\n%s\nwas\n%s", again.Source, d.Source)
	}
	moved := s.save("ann", again, strings.Replace(d.Source, `"x": 10`, `"x": 300`, 1))
	if moved.Source == again.Source || moved.Report.Fingerprint != d.Report.Fingerprint {
		t.Fatalf("moving a node: fingerprint %s, was %s", moved.Report.Fingerprint, d.Report.Fingerprint)
	}
}

// TestPublish: a draft with errors cannot be published; a valid one
// becomes version 1, which a service fetches by name, builds with
// runtime.Load and round-trips with ToSpec; publishing it again is refused.
func TestPublish(t *testing.T) {
	s := newStudio(t, nil)
	d := s.create("ann", "chain", `{"name": "chain", "nodes": [{"id": "a", "type": "sey"}]}`)
	p := problem(t, s.do("ann", "POST", "/api/documents/"+d.ID+"/publish", map[string]any{"revision": 1, "published": 0}), 422, "document-invalid")
	if len(p.Diagnostics) == 0 || p.Diagnostics[0].Severity != "error" {
		t.Errorf("diagnostics %+v", p.Diagnostics)
	}
	problem(t, s.do("ann", "GET", "/api/published/chain", nil), 404, "not-found")
	d = s.save("ann", d, chain)
	var rv studio.Review
	s.must("ann", "GET", "/api/documents/"+d.ID+"/review", nil, 200).json(t, &rv)
	if rv.Published != 0 || rv.Revision != 2 || rv.Unsafe || len(rv.Errors) != 0 {
		t.Fatalf("review of a first publish: %+v", rv)
	}
	var pub struct{ Version studio.Version }
	s.must("ann", "POST", "/api/documents/"+d.ID+"/publish", map[string]any{"revision": 2, "published": 0}, 200).json(t, &pub)
	if pub.Version.Number != 1 || pub.Version.Fingerprint != d.Report.Fingerprint {
		t.Fatalf("published %+v", pub.Version)
	}
	r := s.must("ann", "GET", "/api/published/chain", nil, 200)
	if string(r.body) != d.Source || r.header.Get("Ilmek-Fingerprint") != d.Report.Fingerprint || r.header.Get("Ilmek-Version") != "1" {
		t.Fatalf("published bytes or headers wrong: %v\n%s", r.header, r.body)
	}
	problem(t, s.do("bob", "GET", "/api/published/chain", nil), 404, "not-found")
	req, _ := http.NewRequest("GET", s.ts.URL+"/api/published/chain", nil)
	req.Header.Set("X-User", "ann")
	req.Header.Set("If-None-Match", r.header.Get("ETag"))
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 304 {
		t.Fatalf("If-None-Match: %v %v", res, err)
	}
	g, err := runtime.Load("chain.json", r.body, registry())
	if err != nil {
		t.Fatal(err)
	}
	if g.Fingerprint() != d.Report.Fingerprint {
		t.Errorf("loaded fingerprint %s, want %s", g.Fingerprint(), d.Report.Fingerprint)
	}
	back, err := runtime.ToSpec(g)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Encode(), r.body) {
		t.Errorf("ToSpec round trip:\n%s\nwant\n%s", back.Encode(), r.body)
	}
	res, err := g.Invoke(context.Background(), runtime.Values{})
	if err != nil || res.Status != runtime.StatusDone {
		t.Fatalf("running the published version: %v %v", res.Status, err)
	}
	problem(t, s.do("ann", "POST", "/api/documents/"+d.ID+"/publish", map[string]any{"revision": 2, "published": 1}), 409, "unchanged")
	problem(t, s.do("ann", "POST", "/api/documents/"+d.ID+"/publish", map[string]any{"revision": 2, "published": 0}), 409, "stale")
	// Without a checkpointer a change unsafe for paused threads needs
	// confirming: the studio cannot tell that none is paused.
	d = s.save("ann", d, strings.Replace(d.Source, `"bye"`, `"ciao"`, 1))
	problem(t, s.do("ann", "POST", "/api/documents/"+d.ID+"/publish", map[string]any{"revision": 3, "published": 1}), 409, "unsafe-change")
	s.must("ann", "POST", "/api/documents/"+d.ID+"/publish", map[string]any{"revision": 3, "published": 1, "confirm_unsafe": true}, 200)
	var vs struct{ Versions []studio.Version }
	s.must("ann", "GET", "/api/documents/"+d.ID+"/versions", nil, 200).json(t, &vs)
	if len(vs.Versions) != 2 || vs.Versions[0].Revision != 2 || vs.Versions[1].Revision != 3 {
		t.Errorf("versions %+v", vs.Versions)
	}
}

// TestPublishReview: a thread paused in "ask" under version 1; removing
// "ask" is unsafe and touches the thread, so publishing is refused with
// the review until the request confirms it. A safe change that touches
// no thread publishes without confirmation.
func TestPublishReview(t *testing.T) {
	ctx := context.Background()
	cp := checkpoint.NewMemory()
	s := newStudio(t, func(c *studio.Config) { c.Checkpointer = cp })
	d := s.create("ann", "paused", paused)
	s.must("ann", "POST", "/api/documents/"+d.ID+"/publish", map[string]any{"revision": 1, "published": 0}, 200)
	body := s.must("ann", "GET", "/api/published/paused", nil, 200).body
	g, err := runtime.Load("paused.json", body, registry())
	if err != nil {
		t.Fatal(err)
	}
	if res, err := g.Thread(cp, "t1").Invoke(ctx, runtime.Values{}); err != nil || res.Status != runtime.StatusInterrupted {
		t.Fatalf("pausing t1: %v %v", res.Status, err)
	}

	removed := `{"name":"paused","channels":{"log":{"reducer":"append"},"answer":{}},
 "nodes":[{"id":"say","type":"say","config":{"text":"done"}}],
 "edges":[{"from":"__start__","to":"say"},{"from":"say","to":"__end__"}]}`
	d2 := s.save("ann", d, removed)
	var rv studio.Review
	s.must("ann", "GET", "/api/documents/"+d.ID+"/review", nil, 200).json(t, &rv)
	if !rv.Unsafe || rv.Published != 1 || rv.From == rv.To {
		t.Fatalf("review %+v", rv)
	}
	var removal *studio.Change
	for i, c := range rv.Changes {
		if c.Subject == "ask" && c.UnsafePaused {
			removal = &rv.Changes[i]
		}
	}
	if removal == nil || removal.Reason == "" {
		t.Fatalf("no unsafe change of ask in %+v", rv.Changes)
	}
	if len(rv.Affected) != 1 || rv.Affected[0].Thread != "t1" || rv.Affected[0].Continues || len(rv.Affected[0].Reasons) == 0 || rv.Affected[0].Reasons[0].Fix == "" {
		t.Fatalf("affected %+v", rv.Affected)
	}
	p := problem(t, s.do("ann", "POST", "/api/documents/"+d.ID+"/publish", map[string]any{"revision": d2.Revision, "published": 1}), 409, "unsafe-change")
	if p.Review == nil || len(p.Review.Affected) != 1 {
		t.Fatalf("the refusal carries no review: %+v", p)
	}
	var pub struct{ Version studio.Version }
	s.must("ann", "POST", "/api/documents/"+d.ID+"/publish", map[string]any{"revision": d2.Revision, "published": 1, "confirm_unsafe": true}, 200).json(t, &pub)
	if pub.Version.Number != 2 {
		t.Fatalf("published %+v", pub.Version)
	}

	// A new channel: safe, no confirmation.
	d3 := s.save("ann", d2, strings.Replace(removed, `"answer":{}`, `"answer":{},"extra":{}`, 1))
	s.must("ann", "GET", "/api/documents/"+d.ID+"/review", nil, 200).json(t, &rv)
	if rv.Unsafe || len(rv.Affected) != 0 || len(rv.Changes) == 0 {
		t.Fatalf("review of a safe change: %+v", rv)
	}
	s.must("ann", "POST", "/api/documents/"+d.ID+"/publish", map[string]any{"revision": d3.Revision, "published": 2}, 200)

	// A new config of "say", unsafe for threads paused in it, where no
	// thread is: the checkpointer tells, so no confirmation either.
	d4 := s.save("ann", d3, strings.Replace(strings.Replace(removed, `"answer":{}`, `"answer":{},"extra":{}`, 1), `"done"`, `"finished"`, 1))
	s.must("ann", "GET", "/api/documents/"+d.ID+"/review", nil, 200).json(t, &rv)
	if rv.Unsafe || len(rv.Changes) == 0 || !rv.Changes[0].UnsafePaused {
		t.Fatalf("review of a config change no thread meets: %+v", rv)
	}
	s.must("ann", "POST", "/api/documents/"+d.ID+"/publish", map[string]any{"revision": d4.Revision, "published": 3}, 200)
}

// TestHTTP: authentication, bodies, routes and headers.
func TestHTTP(t *testing.T) {
	s := newStudio(t, func(c *studio.Config) { c.MaxBodyBytes = 512 })
	problem(t, s.do("", "GET", "/api/documents", nil), 401, "unauthenticated")
	problem(t, s.do("", "GET", "/", nil), 401, "unauthenticated")
	problem(t, s.do("ann", "POST", "/api/check", map[string]any{"source": strings.Repeat(" ", 600)}), 413, "body-too-large")
	problem(t, s.do("ann", "GET", "/api/nothing", nil), 404, "not-found")
	problem(t, s.do("ann", "POST", "/api/check", "not an object"), 400, "bad-request")
	r := s.must("ann", "GET", "/", nil, 200)
	csp := r.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "http") {
		t.Errorf("CSP %q", csp)
	}
	if r.header.Get("X-Content-Type-Options") != "nosniff" || r.header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("headers %v", r.header)
	}
	for _, f := range []string{"/", "/studio.js", "/studio.css"} {
		body := s.must("ann", "GET", f, nil, 200).body
		for _, ext := range []string{"http://", "https://", "//cdn", "unpkg", "jsdelivr"} {
			if f == "/" && bytes.Contains(body, []byte(ext)) {
				t.Errorf("%s loads from elsewhere (%s)", f, ext)
			}
		}
	}
	if js := s.must("ann", "GET", "/studio.js", nil, 200); !strings.HasPrefix(js.header.Get("Content-Type"), "text/javascript") {
		t.Errorf("studio.js is served as %s", js.header.Get("Content-Type"))
	}
}

// TestOpenAPI: the document is served, and every route the studio
// serves is in it with each status it answers.
// TestDiagramSVG: with a RenderSVG hook the studio lays a document out
// from the DOT of package dot and serves the SVG under a no-script
// policy; without one it answers 501 (the page shows the Mermaid text);
// a document that does not decode answers 422.
func TestDiagramSVG(t *testing.T) {
	var got string
	render := func(_ context.Context, d string) ([]byte, error) {
		got = d
		return []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), nil
	}
	cases := []struct {
		name   string
		hook   func(context.Context, string) ([]byte, error)
		src    string
		status int
		slug   string
	}{
		{"with the hook", render, chain, 200, ""},
		{"without a hook", nil, chain, 501, "not-implemented"},
		{"a document that does not decode", render, "{", 422, "document-invalid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got = ""
			s := newStudio(t, func(cfg *studio.Config) { cfg.RenderSVG = c.hook })
			r := s.do("ann", "POST", "/api/diagram", map[string]any{"source": c.src})
			if c.slug != "" {
				problem(t, r, c.status, c.slug)
				return
			}
			if r.status != 200 || r.header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(string(r.body), "<svg") {
				t.Fatalf("%d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
			}
			if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
				t.Errorf("policy %q allows more than a drawing", csp)
			}
			if !strings.HasPrefix(got, "digraph") || !strings.Contains(got, `"a"`) || !strings.Contains(got, `"b"`) {
				t.Errorf("the hook got %q, want the DOT of nodes a and b", got)
			}
		})
	}
}

func TestOpenAPI(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(studio.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	s := newStudio(t, nil)
	if r := s.must("ann", "GET", "/api/openapi.json", nil, 200); !bytes.Equal(r.body, studio.OpenAPI) {
		t.Error("the served document differs from OpenAPI")
	}
	routes := []struct{ method, path string }{
		{"get", "/api/node-types"}, {"get", "/api/subgraphs"}, {"post", "/api/check"}, {"post", "/api/diagram"}, {"get", "/api/documents"}, {"post", "/api/documents"},
		{"get", "/api/documents/{id}"}, {"patch", "/api/documents/{id}"}, {"delete", "/api/documents/{id}"},
		{"put", "/api/documents/{id}/draft"}, {"get", "/api/documents/{id}/revisions"}, {"get", "/api/documents/{id}/revisions/{n}"},
		{"get", "/api/documents/{id}/versions"}, {"get", "/api/documents/{id}/review"}, {"post", "/api/documents/{id}/publish"},
		{"get", "/api/published/{name}"}, {"get", "/api/openapi.json"},
	}
	n := 0
	for _, p := range doc.Paths {
		for m := range p {
			if m != "parameters" {
				n++
			}
		}
	}
	if doc.OpenAPI != "3.1.0" || n != len(routes) {
		t.Fatalf("openapi %q with %d operations, want 3.1.0 with %d", doc.OpenAPI, n, len(routes))
	}
	for _, r := range routes {
		raw, ok := doc.Paths[r.path][r.method]
		if !ok {
			t.Errorf("%s %s is not in the OpenAPI document", r.method, r.path)
			continue
		}
		var op struct {
			OperationID string         `json:"operationId"`
			Responses   map[string]any `json:"responses"`
		}
		if err := json.Unmarshal(raw, &op); err != nil || op.OperationID == "" || len(op.Responses) == 0 {
			t.Errorf("%s %s has no operationId", r.method, r.path)
		}
	}
}

// TestCoreGainsNothing: the server and the runtime do not depend on the
// studio, and the studio not on the generator.
func TestCoreGainsNothing(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", "../server", "../runtime").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "/studio") || strings.Contains(dep, "esbuild") {
			t.Errorf("server or runtime depends on %s", dep)
		}
	}
	out, err = exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/ilmek-go/ilmek/gen", "esbuild", "github.com/jackc/pgx", "modernc.org/sqlite"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("package studio depends on %s", dep)
			}
		}
	}
}

// TestFetchPublished: a service fetches the published version by name;
// a missing one is a *Problem.
func TestFetchPublished(t *testing.T) {
	s := newStudio(t, nil)
	d := s.create("anonymous", "chain", chain)
	ctx := context.Background()
	c := &http.Client{Transport: userTransport("anonymous")}
	if _, _, err := studio.FetchPublished(ctx, c, s.ts.URL+"/", "chain"); !isProblem(err, 404) {
		t.Fatalf("before publishing: %v, want a 404 problem", err)
	}
	s.must("anonymous", "POST", "/api/documents/"+d.ID+"/publish", map[string]any{"revision": 1, "published": 0}, 200)
	body, fp, err := studio.FetchPublished(ctx, c, s.ts.URL, "chain")
	if err != nil || string(body) != d.Source || fp != d.Report.Fingerprint {
		t.Fatalf("fetched %q %s %v", body, fp, err)
	}
	if _, _, err := studio.FetchPublished(ctx, c, s.ts.URL, "../x"); err == nil || !strings.Contains(err.Error(), "document name") {
		t.Fatalf("a bad name: %v", err)
	}
}

func isProblem(err error, status int) bool {
	var p *studio.Problem
	return errors.As(err, &p) && p.Status == status
}

// userTransport authenticates every request as user.
type userTransport string

func (u userTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-User", string(u))
	return http.DefaultTransport.RoundTrip(r)
}

// failingList is a repository whose List fails, as a database that went
// away does.
type failingList struct{ studio.Repository }

func (failingList) List(context.Context) ([]studio.Document, error) {
	return nil, errors.New("sqlrepo: listing documents: driver: bad connection")
}

// TestProblemWords: every problem the studio answers says, in the
// studio's words, what is wrong, where (which document, revision, name
// or member) and how to fix it, never the Go error chain of its cause
// (a repository's "document \"x\": studio: not found", encoding/json's
// "json: cannot unmarshal number into Go struct field .source of type
// string"), over the memory and the SQLite repositories alike; an
// internal error names its error id, which ties it to the log.
func TestProblemWords(t *testing.T) {
	repos := map[string]func(t *testing.T) studio.Repository{
		"memory": func(*testing.T) studio.Repository { return studio.NewMemory() },
		"sqlite": func(t *testing.T) studio.Repository {
			repo, db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "studio.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return repo
		},
	}
	for name, open := range repos {
		t.Run(name, func(t *testing.T) {
			s := newStudio(t, func(c *studio.Config) { c.Repository = open(t) })
			d := s.create("ann", "chain", chain)
			other := s.create("ann", "other", chain)
			s.save("ann", d, strings.Replace(chain, "hello", "hi", 1))
			docs := "/api/documents/" + d.ID
			for _, c := range []struct {
				name         string
				r            reply
				status       int
				slug, detail string
			}{
				{"a name that is taken", s.do("ann", "POST", "/api/documents", map[string]any{"name": "other"}),
					409, "name-taken", `another document is named "other"; choose another name`},
				{"a rename to a name that is taken", s.do("ann", "PATCH", "/api/documents/"+other.ID, map[string]any{"name": "chain"}),
					409, "name-taken", `another document is named "chain"; choose another name`},
				{"a draft of a stale revision", s.do("ann", "PUT", docs+"/draft", map[string]any{"base": 1, "source": chain}),
					409, "stale", `document "chain" was saved again since revision 1, which this draft is based on; copy your changes (JSON tab), reopen the document`},
				{"a revision that is not there", s.do("ann", "GET", docs+"/revisions/9", nil),
					404, "not-found", `document "chain" has no revision 9; its revisions are 1 to 2`},
				{"the review of a revision that is not there", s.do("ann", "GET", docs+"/review?revision=9", nil),
					404, "not-found", `document "chain" has no revision 9; its revisions are 1 to 2`},
				{"publishing a revision that is not there", s.do("ann", "POST", docs+"/publish", map[string]any{"revision": 9, "published": 0}),
					404, "not-found", `document "chain" has no revision 9; its revisions are 1 to 2`},
				{"a member of the wrong kind", s.do("ann", "POST", "/api/check", map[string]any{"source": 5}),
					400, "bad-request", `member "source" of the request body must be a string, not a number`},
				{"a whole number of the wrong kind", s.do("ann", "POST", docs+"/publish", map[string]any{"revision": "2", "published": 0}),
					400, "bad-request", `member "revision" of the request body must be a whole number, not a string`},
				{"a misspelt member", s.do("ann", "POST", "/api/check", map[string]any{"sauce": "{}"}),
					400, "bad-request", `the request body has a member "sauce", which this route does not take: did you mean "source"?`},
				{"an unknown member", s.do("ann", "POST", "/api/documents", map[string]any{"name": "x", "colour": "red"}),
					400, "bad-request", `the request body has a member "colour", which this route does not take; send a JSON object with "name" and "source"`},
				{"a body that is not an object", s.do("ann", "POST", "/api/check", "not an object"),
					400, "bad-request", `the request body is a string, not a JSON object; send a JSON object with "source"`},
				{"an empty body", s.raw("ann", "POST", "/api/documents", ""),
					400, "bad-request", `the request body is empty; send a JSON object with "name" and "source"`},
				{"a body cut short", s.raw("ann", "POST", "/api/check", `{"source": "{}"`),
					400, "bad-request", `the request body is cut short before its JSON object ends; send a JSON object with "source"`},
				{"a body that is not JSON", s.raw("ann", "POST", "/api/check", `{source: 1}`),
					400, "bad-request", `the request body is not JSON: invalid character 's' looking for beginning of object key string at byte 2; send a JSON object with "source"`},
			} {
				t.Run(c.name, func(t *testing.T) {
					p := problem(t, c.r, c.status, c.slug)
					if !strings.Contains(p.Detail, c.detail) {
						t.Errorf("detail %q\nwant it to hold %q", p.Detail, c.detail)
					}
					noInternalWords(t, "detail", p.Title+": "+p.Detail)
				})
			}
		})
	}

	t.Run("internal", func(t *testing.T) {
		s := newStudio(t, func(c *studio.Config) { c.Repository = failingList{studio.NewMemory()} })
		// (Not s.do: the OpenAPI document declares no route's 500.)
		req, _ := http.NewRequest("GET", s.ts.URL+"/api/documents", nil)
		req.Header.Set("X-User", "ann")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		p := problem(t, reply{res.StatusCode, res.Header, body}, 500, "internal")
		if p.ErrorID == "" || !strings.Contains(p.Detail, "error id "+p.ErrorID) || !strings.Contains(p.Detail, "try again") {
			t.Errorf("an internal error: %+v", p)
		}
		noInternalWords(t, "detail", p.Detail)
		if strings.Contains(p.Detail, "bad connection") {
			t.Errorf("the detail tells the cause: %s", p.Detail)
		}
	})
}
