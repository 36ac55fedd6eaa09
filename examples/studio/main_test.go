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
	if json.Unmarshal(b, &types) != nil || len(types.NodeTypes) != 2 || !bytes.Contains(types.NodeTypes[0].ConfigSchema, []byte(`"model"`)) {
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
	db.Close()

	// Reopening: the seed is not published twice.
	_, db2, err := setup(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
}
