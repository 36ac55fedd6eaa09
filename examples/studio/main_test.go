package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
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

// TestAddr: the studio, which has no authentication here, listens only on
// a loopback address unless -allow-remote says to expose it; a refused
// address is an error that names the flag and says what it would expose.
func TestAddr(t *testing.T) {
	for _, c := range []struct {
		args   []string
		refuse bool
	}{
		{nil, false}, // 127.0.0.1:8080
		{[]string{"-addr", "127.0.0.1:9000"}, false},
		{[]string{"-addr", "127.1.2.3:9000"}, false},
		{[]string{"-addr", "[::1]:9000"}, false},
		{[]string{"-addr", "localhost:9000"}, false},
		{[]string{"-addr", "0.0.0.0:8080"}, true},
		{[]string{"-addr", ":8080"}, true},
		{[]string{"-addr", "[::]:8080"}, true},
		{[]string{"-addr", "192.168.1.10:8080"}, true},
		{[]string{"-addr", "[2001:db8::1]:8080"}, true},
		{[]string{"-addr", "0.0.0.0:8080", "-allow-remote"}, false},
		{[]string{"-allow-remote", "-addr", ":8080"}, false},
		{[]string{"-addr", "192.168.1.10:8080", "-allow-remote=false"}, true},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var usage bytes.Buffer
			o, err := parseArgs(c.args, &usage)
			if !c.refuse {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if len(c.args) == 0 && o.addr != "127.0.0.1:8080" {
					t.Errorf("the default address is %s", o.addr)
				}
				return
			}
			if !errors.Is(err, errRemoteAddr) {
				t.Fatalf("err = %v, want a refusal (errRemoteAddr)", err)
			}
			for _, w := range []string{"-allow-remote", "no authentication", "publish", "127.0.0.1"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the refusal does not say %q: %v", w, err)
				}
			}
		})
	}
	if _, err := parseArgs([]string{"-addr", "8080"}, io.Discard); err == nil || !strings.Contains(err.Error(), "host:port") {
		t.Errorf("-addr 8080: %v", err)
	}
	// -h documents what -allow-remote exposes.
	var usage bytes.Buffer
	if _, err := parseArgs([]string{"-h"}, &usage); !errors.Is(err, flag.ErrHelp) || !strings.Contains(usage.String(), "-allow-remote") ||
		!strings.Contains(usage.String(), "no authentication") {
		t.Errorf("-h: %v\n%s", err, usage.String())
	}
}

// TestMainRefusesRemoteAddr runs the command (this test binary, as main)
// with -addr 0.0.0.0:8080: it exits 2 with the refusal, before opening
// the database or listening.
func TestMainRefusesRemoteAddr(t *testing.T) {
	if os.Getenv("STUDIO_EXAMPLE_MAIN") == "1" {
		os.Args = append([]string{"studio"}, strings.Fields(os.Getenv("STUDIO_EXAMPLE_ARGS"))...)
		main()
		return
	}
	db := filepath.Join(t.TempDir(), "studio.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainRefusesRemoteAddr$")
	cmd.Env = append(os.Environ(), "STUDIO_EXAMPLE_MAIN=1", "STUDIO_EXAMPLE_ARGS=-addr 0.0.0.0:8080 -db "+db)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("the command ended with %v, want exit status 2; stderr:\n%s", err, stderr.String())
	}
	if !strings.HasPrefix(stderr.String(), "studio: refusing a non-loopback -addr without -allow-remote: -addr 0.0.0.0:8080 listens on every interface") {
		t.Errorf("stderr: %s", stderr.String())
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused command opened the database: %v", err)
	}
}
