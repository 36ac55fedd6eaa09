package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// Decision is the answer the approval graph's "review" node asks for.
type Decision struct {
	Approved bool   `json:"approved" title:"Publish it" description:"Tick to publish the draft; leave it to drop it."`
	Note     string `json:"note,omitempty" title:"Note to the author"`
}

// approvalGraph drafts, asks a person to review (a typed interrupt),
// then publishes or drops the draft.
func approvalGraph(t testing.TB) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.NewBuilder("approval").
		Channel("draft", "").Channel("decision", "").Channel("log", "append").
		TypedNode("write", "write", nil, func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			return runtime.Values{"draft": fmt.Sprintf("post about %v", s["topic"]), "log": []any{"write"}}, nil
		}).
		TypedNode("review", "review", nil, func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			d, err := runtime.Interrupt[Decision](ctx, map[string]any{"question": "Publish this draft?", "draft": s["draft"]})
			if err != nil {
				return nil, err
			}
			return runtime.Values{"decision": d.Approved, "log": []any{"review"}}, nil
		}).
		TypedNode("publish", "publish", nil, func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			return runtime.Values{"log": []any{"publish"}}, nil
		}).
		Channel("topic", "").
		Edge("__start__", "write").Edge("write", "review").Edge("review", "publish").Edge("publish", "__end__").
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// slowGraph has one node that waits for gate (or its context) per step,
// looping steps times, so runs stay busy while a test double-texts.
func slowGraph(t testing.TB, gate <-chan struct{}) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	return slowGraphEntered(t, gate, nil)
}

// slowGraphEntered is slowGraph whose node also sends on entered (when
// not nil, and when it has room) as it starts to wait on gate: a test
// knows then that a superstep is in flight.
func slowGraphEntered(t testing.TB, gate <-chan struct{}, entered chan<- struct{}) *runtime.Graph[runtime.Values, runtime.Values] {
	t.Helper()
	g, err := runtime.NewBuilder("slow").
		Channel("n", "").Channel("log", "append").
		TypedNode("tick", "tick", nil, func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			if entered != nil {
				select {
				case entered <- struct{}{}:
				default:
				}
			}
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			n, _ := s["n"].(float64)
			return runtime.Values{"n": n + 1, "log": []any{fmt.Sprint(s["tag"])}}, nil
		}).
		Channel("tag", "").
		Edge("__start__", "tick").
		EdgeWhen("tick", "tick", spec.Lt("n", 3)).
		EdgeWhen("tick", "__end__", spec.Gt("n", 2.5)).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// testServer is a Server behind httptest with a bearer-token principal
// ("Authorization: Bearer <id>").
type testServer struct {
	*Server
	URL  string
	logs *syncBuffer
	t    testing.TB
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func bearer(r *http.Request) (Principal, error) {
	id, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || id == "" {
		return Principal{}, errors.New("no bearer token")
	}
	return Principal{ID: id}, nil
}

func newTestServer(t testing.TB, mod func(*Config)) *testServer {
	t.Helper()
	logs := &syncBuffer{}
	cfg := Config{
		Graphs:       []Graph{Of(approvalGraph(t))},
		Checkpointer: checkpoint.NewMemory(),
		Authenticate: bearer,
		Logger:       slog.New(slog.NewTextHandler(logs, nil)),
	}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	})
	return &testServer{Server: s, URL: hs.URL, logs: logs, t: t}
}

// resp is a response read whole.
type resp struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r resp) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.Body, err)
	}
}

func (r resp) problem(t testing.TB) Problem {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json (body %s)", ct, r.Body)
	}
	var p Problem
	r.json(t, &p)
	return p
}

// do sends a request as principal who ("" for none) and checks the
// response against the OpenAPI document.
func (ts *testServer) do(who, method, path string, body any) resp {
	ts.t.Helper()
	return ts.doWith(who, method, path, body, nil)
}

// doWith is do with the request's headers h added.
func (ts *testServer) doWith(who, method, path string, body any, h http.Header) resp {
	ts.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if who != "" {
		req.Header.Set("Authorization", "Bearer "+who)
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	out := resp{Status: res.StatusCode, Header: res.Header, Body: data}
	checkAgainstOpenAPI(ts.t, req, out)
	checkProblemLength(ts.t, out)
	return out
}

func (ts *testServer) must(who, method, path string, body any, status int) resp {
	ts.t.Helper()
	r := ts.do(who, method, path, body)
	if r.Status != status {
		ts.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.Status, status, r.Body)
	}
	return r
}

func (ts *testServer) newThread(who string, body any) ThreadView {
	ts.t.Helper()
	var v ThreadView
	ts.must(who, "POST", "/threads", body, 201).json(ts.t, &v)
	return v
}

func (ts *testServer) wait(who string, run RunView) RunView {
	ts.t.Helper()
	var v RunView
	ts.must(who, "GET", "/threads/"+run.ThreadID+"/runs/"+run.RunID+"/wait?timeout=20s", nil, 200).json(ts.t, &v)
	return v
}

// The OpenAPI check: every response of every test is checked against the
// committed document; TestMain then checks that every route was seen.

var (
	apiOnce    sync.Once
	apiDoc     map[string]any
	apiSchemas *jsonschema.Compiler
	apiMux     *http.ServeMux
	seenMu     sync.Mutex
	seen       = map[string]bool{}
	compiled   = map[string]*jsonschema.Schema{}
)

func loadAPI(t testing.TB) {
	apiOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(OpenAPI))
		if err != nil {
			panic(err)
		}
		apiDoc = doc.(map[string]any)
		c := jsonschema.NewCompiler()
		if err := c.AddResource("https://ilmek.invalid/openapi.json", doc); err != nil {
			panic(err)
		}
		apiSchemas = c
		apiMux = http.NewServeMux()
		for _, rt := range routes {
			apiMux.HandleFunc(rt.method+" "+rt.path, func(http.ResponseWriter, *http.Request) {})
		}
	})
}

// schemaAt compiles the schema at the JSON pointer ptr of the document.
func schemaAt(t testing.TB, ptr string) *jsonschema.Schema {
	seenMu.Lock()
	defer seenMu.Unlock()
	if s, ok := compiled[ptr]; ok {
		return s
	}
	s, err := apiSchemas.Compile("https://ilmek.invalid/openapi.json#" + ptr)
	if err != nil {
		t.Fatalf("compiling %s: %v", ptr, err)
	}
	compiled[ptr] = s
	return s
}

func escPtr(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func checkAgainstOpenAPI(t testing.TB, req *http.Request, r resp) {
	t.Helper()
	loadAPI(t)
	_, pattern := apiMux.Handler(req)
	if pattern == "" {
		return // a route the API does not have (the inbox, a 404 test)
	}
	method, path, _ := strings.Cut(pattern, " ")
	op, _ := apiDoc["paths"].(map[string]any)[path].(map[string]any)[strings.ToLower(method)].(map[string]any)
	if op == nil {
		t.Errorf("OpenAPI: %s has no operation %s", path, method)
		return
	}
	status := fmt.Sprint(r.Status)
	respObj, ok := op["responses"].(map[string]any)[status].(map[string]any)
	if !ok {
		t.Errorf("OpenAPI: %s %s answered %d, which the document does not list (body %s)", method, path, r.Status, r.Body)
		return
	}
	ptr := "/paths/" + escPtr(path) + "/" + strings.ToLower(method) + "/responses/" + status
	if ref, ok := respObj["$ref"].(string); ok {
		ptr = strings.TrimPrefix(ref, "#")
		respObj = apiDoc["components"].(map[string]any)["responses"].(map[string]any)[strings.TrimPrefix(ptr, "/components/responses/")].(map[string]any)
	}
	seenMu.Lock()
	seen[pattern+" "+status] = true
	seenMu.Unlock()
	content, _ := respObj["content"].(map[string]any)
	if content == nil && r.Status == http.StatusNoContent && len(r.Body) == 0 {
		return // a documented answer without a body
	}
	ct := r.Header.Get("Content-Type")
	mt, _, _ := strings.Cut(ct, ";")
	if _, ok := content[mt]; !ok {
		t.Errorf("OpenAPI: %s %s %d: Content-Type %q is not documented", method, path, r.Status, ct)
		return
	}
	if mt != "application/json" && mt != "application/problem+json" {
		return
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Body))
	if err != nil {
		t.Errorf("OpenAPI: %s %s %d: body is not JSON: %v", method, path, r.Status, err)
		return
	}
	if err := schemaAt(t, ptr+"/content/"+escPtr(mt)+"/schema").Validate(v); err != nil {
		t.Errorf("OpenAPI: %s %s %d: body %s does not fit the document: %v", method, path, r.Status, r.Body, err)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && os.Getenv("ILMEK_SERVER_PARTIAL") == "" && testingRanAll() {
		var missing, skipped []string
		for _, rt := range routes {
			// The dead-letter routes answer only with a workers' queue,
			// which only the PostgreSQL tests have: without a server they
			// skip (pgtest.DSN), and so does this check of their routes.
			if strings.HasPrefix(rt.path, "/queue/") && os.Getenv(pgtest.EnvDSN) == "" {
				skipped = append(skipped, rt.method+" "+rt.path)
				continue
			}
			ok := false
			for k := range seen {
				if strings.HasPrefix(k, rt.method+" "+rt.path+" 2") {
					ok = true
				}
			}
			if !ok {
				missing = append(missing, rt.method+" "+rt.path)
			}
		}
		if len(skipped) > 0 {
			fmt.Fprintf(os.Stderr, "OpenAPI: not checked without %s (the PostgreSQL tests skipped): %s\n", pgtest.EnvDSN, strings.Join(skipped, ", "))
		}
		if len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "OpenAPI: no test saw a success of: %s\n", strings.Join(missing, ", "))
			code = 1
		}
	}
	os.Exit(code)
}

// testingRanAll reports whether the whole package ran (no -run filter).
func testingRanAll() bool {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.run") {
			return false
		}
	}
	return true
}

// checkProblemLength holds a problem's detail to one sentence: at most 180
// characters with the tests' thread ids (24 characters).
func checkProblemLength(t testing.TB, r resp) {
	t.Helper()
	if r.Header.Get("Content-Type") != "application/problem+json" {
		return
	}
	var p Problem
	// (The runtime's answer-type refusal quotes the answer and the Go
	// type's full path; its text is the runtime's.)
	if json.Unmarshal(r.Body, &p) == nil && len([]rune(p.Detail)) > 180 && p.Type != ProblemTypePrefix+"answer-type" {
		t.Errorf("problem detail of %d characters, over 180: %s", len([]rune(p.Detail)), p.Detail)
	}
}
