package a2ahttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/a2ahttp"
	"github.com/ilmek-go/ilmek/internal/canonjson"
	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/nodes/a2a/a2atest"
)

const upstream = "../conformance/testdata/upstream/a2a/"

// agentServer serves the scripted agent over HTTP: its card (whose url is
// the server's /a2a) and JSON-RPC at /a2a, answered by a2atest.
func agentServer(t *testing.T, s *a2atest.Script) (*httptest.Server, *[]http.Header) {
	t.Helper()
	fake := a2atest.NewTransport(s)
	var headers []http.Header
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("GET "+a2ahttp.CardPath, func(w http.ResponseWriter, r *http.Request) {
		headers = append(headers, r.Header.Clone())
		card := s.Card
		card.URL = srv.URL + "/a2a"
		_ = json.NewEncoder(w).Encode(card)
	})
	mux.HandleFunc("POST /a2a", func(w http.ResponseWriter, r *http.Request) {
		headers = append(headers, r.Header.Clone())
		var req a2a.Request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		res, err := fake.Post(r.Context(), &req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(res)
	})
	return srv, &headers
}

// The reference's A2A data, over HTTP, reduce byte for byte to
// expected.json.
func TestUpstreamOverHTTP(t *testing.T) {
	s, err := a2atest.Load(upstream + "agent.json")
	if err != nil {
		t.Fatal(err)
	}
	srv, headers := agentServer(t, s)
	tr, err := a2ahttp.New(srv.URL, a2ahttp.WithHeader("Authorization", "Bearer t0ken"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := a2atest.Reduce(context.Background(), tr, s.Texts)
	if err != nil {
		t.Fatal(err)
	}
	gotJSON, err := canonjson.Of(got)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(upstream + "expected.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := canonjson.Canonical(data)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotJSON, want) {
		t.Errorf("got\n%s\nwant\n%s", gotJSON, want)
	}
	for i, h := range *headers {
		if h.Get("Authorization") != "Bearer t0ken" {
			t.Errorf("request %d without the header: %v", i, h)
		}
	}
}

func TestURLs(t *testing.T) {
	for _, bad := range []string{"ftp://x", "bot.example.com", "://"} {
		if _, err := a2ahttp.New(bad); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
	s, _ := a2atest.Load(upstream + "agent.json")
	srv, _ := agentServer(t, s)
	// A card URL, and an endpoint given directly.
	for _, u := range []string{srv.URL + a2ahttp.CardPath, srv.URL + "/a2a"} {
		tr, err := a2ahttp.New(u)
		if err != nil {
			t.Fatal(err)
		}
		res, err := tr.Post(context.Background(), &a2a.Request{JSONRPC: "2.0", ID: 1, Method: "tasks/get", Params: map[string]any{"id": "task-1"}})
		if err != nil || res.Error != nil || !strings.Contains(string(res.Result), `"task-1"`) {
			t.Errorf("%s: %+v, %v", u, res, err)
		}
	}
}

func TestHTTPErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == a2ahttp.CardPath {
			_, _ = w.Write([]byte(`{"name": "Broken", "url": "` + "http://" + r.Host + `/rpc"}`))
			return
		}
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	tr, _ := a2ahttp.New(srv.URL)
	agent, err := a2a.Connect(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	_, err = agent.Invoke(context.Background(), "hi", a2a.SendOptions{})
	var rpc *a2a.RPCError
	if err == nil || errors.As(err, &rpc) || !strings.Contains(err.Error(), "503") {
		t.Errorf("err = %v, want an HTTP 503 error that is not a JSON-RPC one", err)
	}
}

// TestHTTPErrorQuotesTheBody: an HTTP status other than 2xx is an error
// that quotes the body, trimmed, at most MaxErrorExcerpt bytes cut at a
// character's boundary, with control characters and invalid UTF-8
// escaped.
func TestHTTPErrorQuotesTheBody(t *testing.T) {
	long := strings.Repeat("a", a2ahttp.MaxErrorExcerpt-1) + "é" + "TAIL"
	for _, c := range []struct {
		name, body string
		want       []string // in the error
		not        []string // not in the error
	}{
		{"text", "upstream exploded\n", []string{`HTTP 500 Internal Server Error, body "upstream exploded"`}, []string{"first"}},
		{"empty", "", []string{"HTTP 500 Internal Server Error, with an empty body"}, nil},
		{"control characters", "bad\x1b[31mred\r\nline\xff", []string{`body "bad\x1b[31mred\r\nline\xff"`}, []string{"\x1b[31m", "\r"}},
		{"long", long, []string{`body "` + strings.Repeat("a", a2ahttp.MaxErrorExcerpt-1) + `" (its first 511 bytes)`}, []string{"TAIL", `\xc3`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte(c.body))
			}))
			defer srv.Close()
			tr, err := a2ahttp.New(srv.URL + "/a2a")
			if err != nil {
				t.Fatal(err)
			}
			_, err = tr.Post(context.Background(), &a2a.Request{JSONRPC: "2.0", ID: 1, Method: "message/send"})
			if err == nil {
				t.Fatal("a 500 was no error")
			}
			for _, w := range append(c.want, "message/send at "+srv.URL+"/a2a") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err %q\nwant it to hold %q", err, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("err %q holds %q", err, n)
				}
			}
		})
	}
}
