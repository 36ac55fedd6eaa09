package server

import (
	"net/http"
	"sort"
	"strings"
	"testing"
)

// TestOpenAPIRoutes: the document's operations are exactly the routes
// the handler serves, and every schema in it compiles. (Every response of
// every handler test is checked against it as the tests run, and
// TestMain fails when a route never answered a success.)
func TestOpenAPIRoutes(t *testing.T) {
	loadAPI(t)
	var doc, served []string
	for path, item := range apiDoc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			if method == "parameters" {
				continue
			}
			doc = append(doc, strings.ToUpper(method)+" "+path)
			o := op.(map[string]any)
			if o["operationId"] == nil || o["summary"] == nil {
				t.Errorf("%s %s has no operationId or summary", method, path)
			}
			if _, ok := o["responses"].(map[string]any)["401"]; !ok {
				t.Errorf("%s %s does not document 401: every route needs authentication", method, path)
			}
		}
	}
	for _, rt := range routes {
		served = append(served, rt.method+" "+rt.path)
	}
	sort.Strings(doc)
	sort.Strings(served)
	if strings.Join(doc, "\n") != strings.Join(served, "\n") {
		t.Fatalf("document and handler differ:\ndocument:\n%s\n\nhandler:\n%s", strings.Join(doc, "\n"), strings.Join(served, "\n"))
	}
	for name := range apiDoc["components"].(map[string]any)["schemas"].(map[string]any) {
		schemaAt(t, "/components/schemas/"+name)
	}
	// Every example in the document fits its schema.
	examples := 0
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if ex, ok := m["example"]; ok && m["schema"] != nil {
			examples++
			if err := schemaAt(t, ptr+"/schema").Validate(ex); err != nil {
				t.Errorf("the example at %s does not fit its schema: %v", ptr, err)
			}
		}
		for k, c := range m {
			walk(ptr+"/"+escPtr(k), c)
		}
	}
	walk("", apiDoc)
	if examples < 4 {
		t.Errorf("found %d examples, want the 4 the document holds", examples)
	}
	// The handler's mux serves each documented route (not the catch-all).
	ts := newTestServer(t, nil)
	for _, rt := range routes {
		req, _ := http.NewRequest(rt.method, "http://x"+strings.NewReplacer("{thread_id}", "t", "{run_id}", "r", "{checkpoint_id}", "c", "{schedule}", "s").Replace(rt.path), nil)
		if _, pattern := ts.mux.Handler(req); pattern != rt.method+" "+rt.path {
			t.Errorf("%s %s is served by pattern %q", rt.method, rt.path, pattern)
		}
	}
}
