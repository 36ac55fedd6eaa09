package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/spec"
)

// unreachableDoc has one warning: node "lost" is unreachable.
const unreachableDoc = `{
  "nodes": [{"id": "a", "type": "t"}, {"id": "lost", "type": "t"}],
  "edges": [{"from": "__start__", "to": "a"}, {"from": "lost", "to": "a"}]
}`

func noopRegistry() runtime.Registry {
	return runtime.Registry{"t": func(spec.Node) (runtime.NodeFunc, error) { return write(nil), nil }}
}

// recordingHandler keeps every record it is given.
type recordingHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r)
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

func attrs(r slog.Record) map[string]string {
	m := map[string]string{}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	return m
}

// TestDocumentWarningsReachRunTimeUsers: a graph built by Load keeps its
// document's warnings with their positions, logs them through its logger,
// and WithWarningsAsErrors refuses them.
func TestDocumentWarningsReachRunTimeUsers(t *testing.T) {
	h := &recordingHandler{}
	g, err := runtime.Load("flow.json", []byte(unreachableDoc), noopRegistry(), runtime.WithLogger(slog.New(h)))
	if err != nil {
		t.Fatal(err)
	}
	ws := g.Warnings()
	if len(ws) != 1 || ws[0].Path != "nodes[1]" || ws[0].Pos.String() != "flow.json:2:39" || !strings.Contains(ws[0].Message, `node "lost" is unreachable`) {
		t.Fatalf("Warnings() = %v", ws)
	}
	if len(h.records) != 1 || h.records[0].Level != slog.LevelWarn {
		t.Fatalf("logged %d records, want one at Warn: %+v", len(h.records), h.records)
	}
	if a := attrs(h.records[0]); a["path"] != "nodes[1]" || a["position"] != "flow.json:2:39" || !strings.Contains(a["message"], "unreachable") {
		t.Errorf("log attributes = %v", a)
	}

	_, err = runtime.Load("flow.json", []byte(unreachableDoc), noopRegistry(), runtime.WithWarningsAsErrors())
	var se *runtime.SpecError
	var de *spec.Error
	if !errors.As(err, &se) || !errors.As(err, &de) || len(de.Diagnostics) != 1 || !strings.Contains(err.Error(), "flow.json:2:39") {
		t.Fatalf("WithWarningsAsErrors: err = %v", err)
	}

	// A clean document has none, and a code-built graph none either.
	g, err = runtime.Load("ok.json", []byte(`{"nodes": [{"id": "a", "type": "t"}], "edges": [{"from": "__start__", "to": "a"}]}`), noopRegistry(), runtime.WithWarningsAsErrors())
	if err != nil || g.Warnings() != nil {
		t.Fatalf("clean document: %v, %v", err, g.Warnings())
	}
}

// TestMisspeltGuardIsRefusedAtLoad: an edge whose "when" is misspelt must
// not become unconditional; Load refuses the document, naming the member.
func TestMisspeltGuardIsRefusedAtLoad(t *testing.T) {
	doc := `{"channels": {"ok": {}},
  "nodes": [{"id": "approve", "type": "t"}, {"id": "pay", "type": "t"}],
  "edges": [{"from": "__start__", "to": "approve"}, {"from": "approve", "to": "pay", "whne": {"channel": "ok", "truthy": true}}]}`
	_, err := runtime.Load("pay.json", []byte(doc), noopRegistry())
	var de *spec.Error
	if !errors.As(err, &de) || !strings.Contains(err.Error(), `unknown member "whne"`) || !strings.Contains(err.Error(), `did you mean "when"?`) {
		t.Fatalf("err = %v", err)
	}
}

// TestNilRegistryEntry: a nil Factory is a SpecError naming the type, not a
// nil-pointer panic.
func TestNilRegistryEntry(t *testing.T) {
	_, err := runtime.Load("nil.json", []byte(`{"nodes": [{"id": "a", "type": "classify"}], "edges": [{"from": "__start__", "to": "a"}]}`),
		runtime.Registry{"classify": nil})
	var se *runtime.SpecError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), `node "a" has type "classify", whose registry entry is nil`) {
		t.Fatalf("err = %v", err)
	}
}

// errFactory is a sentinel a factory of TestFactoryErrorsAreMatchedThroughLoad
// wraps.
var errFactory = errors.New("the factory's own error")

// TestFactoryErrorsAreMatchedThroughLoad: what a node's Factory returns is
// matched (errors.Is, errors.As) on the error of Load and FromSpec, every
// node's at once, beside the placed message.
func TestFactoryErrorsAreMatchedThroughLoad(t *testing.T) {
	type cfg struct {
		Name string `json:"name"`
	}
	reg := runtime.Registry{
		"decoded": func(n spec.Node) (runtime.NodeFunc, error) {
			var c cfg
			return write(nil), runtime.DecodeConfig(n, &c)
		},
		"sentinel": func(n spec.Node) (runtime.NodeFunc, error) {
			return nil, fmt.Errorf("connect %q first: %w", n.ID, errFactory)
		},
	}
	doc := `{"nodes": [{"id": "a", "type": "decoded", "config": {"nmae": "x"}}, {"id": "b", "type": "sentinel"}],
  "edges": [{"from": "__start__", "to": "a"}, {"from": "a", "to": "b"}]}`
	_, err := runtime.Load("factories.json", []byte(doc), reg)
	var se *runtime.SpecError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a *runtime.SpecError", err)
	}
	var ce *runtime.ConfigError
	if !errors.As(err, &ce) || ce.Node != "a" {
		t.Errorf("errors.As(err, *runtime.ConfigError) = %v (%+v), want node a's; err = %v", ce != nil, ce, err)
	}
	if !errors.Is(err, errFactory) {
		t.Errorf("errors.Is(err, the factory's sentinel) = false; err = %v", err)
	}
	for _, want := range []string{`node "a" (type "decoded"): `, `nmae`, `node "b" (type "sentinel"): connect "b" first`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want it to say %q", err, want)
		}
	}
}
