package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServe starts the example on a free loopback port and fetches what
// a new user opens first: / (the inbox) and the OpenAPI document, then
// finds the demo payments waiting, then again after a restart.
func TestServe(t *testing.T) {
	db := filepath.Join(t.TempDir(), "t.db")
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, "127.0.0.1:0", db, 2, io.Discard, func(a string) { addrc <- a })
	}()
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a
	case err := <-errc:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start")
	}
	get := func(path string) (string, string) {
		t.Helper()
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
		}
		return string(b), res.Request.URL.Path
	}
	page, final := get("/")
	if final != "/inbox/" || !strings.Contains(page, "<title>Console") {
		t.Fatalf("GET / ended at %s: %.200s", final, page)
	}
	doc, _ := get("/openapi.json")
	var api struct{ OpenAPI string }
	if err := json.Unmarshal([]byte(doc), &api); err != nil || api.OpenAPI != "3.1.0" {
		t.Fatalf("openapi.json: %v %.100s", err, doc)
	}
	list, _ := get("/threads?pending=true&metadata.kind=payment")
	var l struct{ Threads []struct{ Pending []any } }
	if err := json.Unmarshal([]byte(list), &l); err != nil || len(l.Threads) != 2 || len(l.Threads[0].Pending) != 1 {
		t.Fatalf("waiting payments: %v %s", err, list)
	}
	cancel()
	if err := <-errc; err != context.Canceled {
		t.Fatalf("run: %v", err)
	}

	// A restart on the same file finds the payments where they stood and
	// seeds no more.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	go func() {
		errc <- run(ctx, "127.0.0.1:0", db, 2, io.Discard, func(a string) { addrc <- a })
	}()
	select {
	case a := <-addrc:
		base = "http://" + a
	case err := <-errc:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not restart")
	}
	list, _ = get("/threads?pending=true&metadata.kind=payment")
	if err := json.Unmarshal([]byte(list), &l); err != nil || len(l.Threads) != 2 {
		t.Fatalf("payments after a restart: %v %s", err, list)
	}
}

func TestRefusesNonLoopback(t *testing.T) {
	err := run(context.Background(), "0.0.0.0:0", filepath.Join(t.TempDir(), "t.db"), 0, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Fatalf("run on 0.0.0.0: %v", err)
	}
}
