package studio_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/server"
	"github.com/ilmek-go/ilmek/spec"
	"github.com/ilmek-go/ilmek/studio"
)

// sayConfig is the "say" node type's config.
type sayConfig struct {
	Text  string `json:"text"`
	Times int    `json:"times,omitempty"`
}

// registry: "say" writes its config's text to the "log" channel; "ask"
// asks a person (an interrupt) and writes the answer to "answer".
func registry() runtime.Registry {
	return runtime.Registry{
		"say": func(n spec.Node) (runtime.NodeFunc, error) {
			var c sayConfig
			if err := runtime.DecodeConfig(n, &c); err != nil {
				return nil, err
			}
			if c.Text == "" {
				return nil, errors.New("config.text is required: give the text to say")
			}
			return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
				return runtime.Values{"log": []any{c.Text}}, nil
			}, nil
		},
		"ask": func(spec.Node) (runtime.NodeFunc, error) {
			return func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
				a, err := runtime.Interrupt[string](ctx, "go on?")
				if err != nil {
					return nil, err
				}
				return runtime.Values{"answer": a}, nil
			}, nil
		},
	}
}

const saySchema = `{"type":"object","properties":{"text":{"type":"string"},"times":{"type":"integer"}},"additionalProperties":false}`

func nodeTypes() []studio.NodeType {
	return []studio.NodeType{
		{Type: "say", Category: "output", Description: "Writes its text to the log", ConfigSchema: json.RawMessage(saySchema)},
		{Type: "ask", Category: "people", Description: "Asks a person to go on"},
	}
}

// byHeader authenticates the principal named by the X-User header.
func byHeader(r *http.Request) (server.Principal, error) {
	if u := r.Header.Get("X-User"); u != "" {
		return server.Principal{ID: u}, nil
	}
	return server.Principal{}, errors.New("no X-User header")
}

type testStudio struct {
	t  *testing.T
	ts *httptest.Server
}

func newStudio(t *testing.T, edit func(*studio.Config)) *testStudio {
	t.Helper()
	cfg := studio.Config{Repository: studio.NewMemory(), Registry: registry(), NodeTypes: nodeTypes(), Authenticate: byHeader,
		Logger: slog.New(slog.DiscardHandler)}
	if edit != nil {
		edit(&cfg)
	}
	s, err := studio.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return &testStudio{t: t, ts: ts}
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

func (s *testStudio) do(user, method, path string, body any) reply {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.ts.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if user != "" {
		req.Header.Set("X-User", user)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	if strings.HasPrefix(path, "/api/") {
		checkDeclared(s.t, method, path, res.StatusCode)
	}
	return reply{res.StatusCode, res.Header, b}
}

// raw does a request whose body is the text body, as a client that
// writes JSON by hand might send it (it may not be JSON).
func (s *testStudio) raw(user, method, path, body string) reply {
	s.t.Helper()
	req, err := http.NewRequest(method, s.ts.URL+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("X-User", user)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	checkDeclared(s.t, method, path, res.StatusCode)
	return reply{res.StatusCode, res.Header, b}
}

// internalWords are what a message for a person must not hold: a Go error
// chain's package prefixes, encoding/json's words, Go type names.
var internalWords = []string{"studio:", "runtime:", "sqlrepo", "json:", "Go struct", "Go value", "github.com/", "unmarshal", "for int", "studio_test."}

// noInternalWords fails the test when text, which a person reads, holds
// one of internalWords.
func noInternalWords(t *testing.T, what, text string) {
	t.Helper()
	for _, w := range internalWords {
		if strings.Contains(text, w) {
			t.Errorf("%s holds %q, an internal word: %s", what, w, text)
		}
	}
}

// param is a path parameter of the OpenAPI document, such as {id}.
var param = regexp.MustCompile(`\{[a-z]+\}`)

// routes are the OpenAPI document's operations: a path pattern and the
// statuses each method declares.
var routes = sync.OnceValue(func() (out []struct {
	re      *regexp.Regexp
	methods map[string]map[string]bool
}) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(studio.OpenAPI, &doc); err != nil {
		panic(err)
	}
	for p, ops := range doc.Paths {
		r := struct {
			re      *regexp.Regexp
			methods map[string]map[string]bool
		}{regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(param.ReplaceAllString(p, "PARAM")), "PARAM", "[^/]+") + "$"), map[string]map[string]bool{}}
		for m, raw := range ops {
			var op struct {
				Responses map[string]json.RawMessage `json:"responses"`
			}
			if m == "parameters" || json.Unmarshal(raw, &op) != nil {
				continue
			}
			r.methods[strings.ToUpper(m)] = map[string]bool{}
			for st := range op.Responses {
				r.methods[strings.ToUpper(m)][st] = true
			}
		}
		out = append(out, r)
	}
	return out
})

// checkDeclared fails the test when the OpenAPI document does not
// declare the status a route answered (unknown routes answer 404).
func checkDeclared(t *testing.T, method, path string, status int) {
	t.Helper()
	path, _, _ = strings.Cut(path, "?")
	for _, r := range routes() {
		if !r.re.MatchString(path) {
			continue
		}
		if sts, ok := r.methods[method]; ok && !sts[strconv.Itoa(status)] {
			t.Errorf("%s %s answered %d, which the OpenAPI document does not declare", method, path, status)
		}
		return
	}
	if status != http.StatusNotFound {
		t.Errorf("%s %s is not in the OpenAPI document but answered %d", method, path, status)
	}
}

// must does a request and fails unless it answers status.
func (s *testStudio) must(user, method, path string, body any, status int) reply {
	s.t.Helper()
	r := s.do(user, method, path, body)
	if r.status != status {
		s.t.Fatalf("%s %s: %d %s, want %d", method, path, r.status, r.body, status)
	}
	return r
}

// problem checks that r is a problem of the slug and status.
func problem(t *testing.T, r reply, status int, slug string) studio.Problem {
	t.Helper()
	var p studio.Problem
	if r.status != status || r.header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("status %d (%s), want %d problem: %s", r.status, r.header.Get("Content-Type"), status, r.body)
	}
	r.json(t, &p)
	if p.Type != studio.ProblemTypePrefix+slug || p.Status != status || p.Title == "" || len(p.Detail) > 180 {
		t.Fatalf("problem %+v, want %s", p, slug)
	}
	return p
}

// create makes a document and returns its view.
func (s *testStudio) create(user, name, source string) studio.DocumentView {
	s.t.Helper()
	var v studio.DocumentView
	s.must(user, "POST", "/api/documents", map[string]any{"name": name, "source": source}, 201).json(s.t, &v)
	return v
}

func (s *testStudio) save(user string, d studio.DocumentView, source string) studio.DocumentView {
	s.t.Helper()
	var v studio.DocumentView
	s.must(user, "PUT", "/api/documents/"+d.ID+"/draft", map[string]any{"base": d.Revision, "source": source}, 200).json(s.t, &v)
	return v
}

// chain is a valid document: __start__ -> a (say) -> b (say) -> __end__,
// with "x-" members of another tool at three levels.
const chain = `{"name":"chain","x-tool":{"kept":true},
 "channels":{"log":{"reducer":"append"},"n":{"x-note":"a number"}},
 "nodes":[{"id":"a","type":"say","config":{"text":"hello"},"x-studio":{"x":10,"y":20}},
          {"id":"b","type":"say","config":{"text":"bye"}}],
 "edges":[{"from":"__start__","to":"a"},{"from":"a","to":"b"},{"from":"b","to":"__end__","x-label":"done"}]}`

// paused: __start__ -> ask -> say -> __end__.
const paused = `{"name":"paused","channels":{"log":{"reducer":"append"},"answer":{}},
 "nodes":[{"id":"ask","type":"ask"},{"id":"say","type":"say","config":{"text":"done"}}],
 "edges":[{"from":"__start__","to":"ask"},{"from":"ask","to":"say"},{"from":"say","to":"__end__"}]}`
