package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/studio"
)

// TestExample: the seeded document is published; the service runs it;
// a new version published through the studio's API is what the service
// runs next; reopening the database keeps everything.
func TestExample(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "studio.db")
	h, db, err := setup(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	do := func(method, url string, body any) (int, []byte) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, ts.URL+url, rd)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	type answer struct {
		Fingerprint string
		Status      string
		Messages    []string
	}
	run := func(msg string) answer {
		t.Helper()
		code, b := do("GET", "/run?message="+msg, nil)
		var a answer
		if code != 200 || json.Unmarshal(b, &a) != nil {
			t.Fatalf("run: %d %s", code, b)
		}
		return a
	}

	if code, b := do("GET", "/studio/", nil); code != 200 || !bytes.Contains(b, []byte("studio.js")) {
		t.Fatalf("the studio page: %d %s", code, b)
	}
	var types struct {
		NodeTypes []studio.NodeType `json:"node_types"`
	}
	_, b := do("GET", "/studio/api/node-types", nil)
	if json.Unmarshal(b, &types) != nil || len(types.NodeTypes) != 3 || !bytes.Contains(types.NodeTypes[0].ConfigSchema, []byte(`"model"`)) || types.NodeTypes[2].Type != "subgraph" {
		t.Fatalf("node types: %s", b)
	}
	a := run("I+want+to+buy")
	if a.Status != "done" || strings.Join(a.Messages, "|") != "I want to buy|Great choice, taking you to checkout.|Order placed at https://shop.example/checkout" {
		t.Fatalf("first run: %+v", a)
	}

	// A new model through the studio's API: a draft, then publish. A
	// node's new config is unsafe for threads paused in it, and this
	// studio has no checkpointer to tell whether any are: the publish
	// must confirm it.
	var d studio.DocumentView
	_, b = do("GET", "/studio/api/documents/support", nil)
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	// The Diagram tab's SVG, laid out by Graphviz (RenderSVG).
	if code, svg := do("POST", "/studio/api/diagram", map[string]any{"source": d.Source}); code != 200 || !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("checkout")) {
		t.Fatalf("diagram: %d %.200s", code, svg)
	}
	src := strings.Replace(d.Source, `"chat-large"`, `"chat-small"`, 1)
	if code, b := do("PUT", "/studio/api/documents/support/draft", map[string]any{"base": 1, "source": src}); code != 200 {
		t.Fatalf("save: %d %s", code, b)
	}
	if code, b := do("POST", "/studio/api/documents/support/publish", map[string]any{"revision": 2, "published": 1}); code != 409 || !bytes.Contains(b, []byte("unsafe-change")) {
		t.Fatalf("publish without confirming: %d %s", code, b)
	}
	if code, b := do("POST", "/studio/api/documents/support/publish", map[string]any{"revision": 2, "published": 1, "confirm_unsafe": true}); code != 200 {
		t.Fatalf("publish: %d %s", code, b)
	}
	b2 := run("hello")
	if b2.Fingerprint == a.Fingerprint || b2.Messages[1] != "(chat-small) How can I help?" {
		t.Fatalf("after publishing: %+v", b2)
	}
	code, pub := do("GET", "/studio/api/published/support-agent", nil)
	if code != 200 || !bytes.Contains(pub, []byte("chat-small")) {
		t.Fatalf("published: %d %s", code, pub)
	}

	// The checkout moves into a graph of its own, which the agent runs
	// as a subgraph node: the service builds the parent with the child.
	const checkout = `{"name":"checkout","channels":{"messages":{"reducer":"append"}},
	 "nodes":[{"id":"pay","type":"http","config":{"url":"https://shop.example/pay"}}],
	 "edges":[{"from":"__start__","to":"pay"},{"from":"pay","to":"__end__"}]}`
	var c studio.DocumentView
	code, b = do("POST", "/studio/api/documents", map[string]any{"name": "checkout", "source": checkout})
	if code != 201 || json.Unmarshal(b, &c) != nil {
		t.Fatalf("creating checkout: %d %s", code, b)
	}
	if code, b := do("POST", "/studio/api/documents/"+c.ID+"/publish", map[string]any{"revision": 1, "published": 0}); code != 200 {
		t.Fatalf("publishing checkout: %d %s", code, b)
	}
	src = strings.Replace(src, `"type": "http",
      "config": {
        "url": "https://shop.example/checkout"
      }`, `"type": "subgraph",
      "config": {
        "graph": "checkout",
        "out": {
          "messages": "messages"
        }
      }`, 1)
	if code, b := do("PUT", "/studio/api/documents/support/draft", map[string]any{"base": 2, "source": src}); code != 200 || !bytes.Contains(b, []byte(`"errors":0`)) {
		t.Fatalf("save with a subgraph node: %d %s", code, b)
	}
	if code, b := do("POST", "/studio/api/documents/support/publish", map[string]any{"revision": 3, "published": 2, "confirm_unsafe": true}); code != 200 {
		t.Fatalf("publish with a subgraph node: %d %s", code, b)
	}
	if a := run("I+want+to+buy"); a.Status != "done" || a.Messages[len(a.Messages)-1] != "Order placed at https://shop.example/pay" {
		t.Fatalf("the agent with its checkout subgraph: %+v", a)
	}
	db.Close()

	// Reopening: the seed is not published twice.
	_, db2, err := setup(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
}
