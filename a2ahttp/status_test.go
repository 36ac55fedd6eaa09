package a2ahttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ilmek-go/ilmek/a2ahttp"
	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestStatusErrorIsTyped: an HTTP status other than 2xx is a
// *StatusError (the request, the URL, the status and the body's excerpt),
// matched with errors.As through the agent's error and the failed node's,
// so an application tells a 401 from a 503; the card's fetch and a post
// both give one. Before, the status was only in the message.
func TestStatusErrorIsTyped(t *testing.T) {
	for _, c := range []struct {
		name      string
		cardCode  int
		postCode  int
		wantCode  int
		wantWhat  string
		wantPaths string
	}{
		{"post", http.StatusOK, http.StatusUnauthorized, http.StatusUnauthorized, "message/send", "/rpc"},
		{"post 503", http.StatusOK, http.StatusServiceUnavailable, http.StatusServiceUnavailable, "message/send", "/rpc"},
		{"card", http.StatusForbidden, http.StatusOK, http.StatusForbidden, "agent card", a2ahttp.CardPath},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == a2ahttp.CardPath && c.cardCode == http.StatusOK {
					_, _ = w.Write([]byte(`{"name": "Broken", "url": "http://` + r.Host + `/rpc"}`))
					return
				}
				if r.URL.Path == a2ahttp.CardPath {
					w.WriteHeader(c.cardCode)
					_, _ = w.Write([]byte("no entry"))
					return
				}
				w.WriteHeader(c.postCode)
				_, _ = w.Write([]byte("no entry"))
			}))
			defer srv.Close()
			tr, err := a2ahttp.New(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			var se *a2ahttp.StatusError
			agent, err := a2a.Connect(context.Background(), tr, a2a.WithName("broken"))
			if c.cardCode != http.StatusOK {
				if !errors.As(err, &se) {
					t.Fatalf("Connect: err %v, want a *StatusError", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				g, err := runtime.Load("g.json", []byte(`{"name": "g", "channels": {"result": {}},
				  "nodes": [{"id": "ask", "type": "a2a_call", "config": {"agent": "broken", "text": "hi"}}],
				  "edges": [{"from": "__start__", "to": "ask"}, {"from": "ask", "to": "__end__"}]}`), a2a.Registry(agent))
				if err != nil {
					t.Fatal(err)
				}
				_, err = g.Thread(checkpoint.NewMemory(), "t").Invoke(context.Background(), nil)
				if !errors.As(err, &se) {
					t.Fatalf("the node's err %v, want a *StatusError", err)
				}
			}
			if se.StatusCode != c.wantCode || se.What != c.wantWhat || se.URL != srv.URL+c.wantPaths || string(se.Body) != "no entry" {
				t.Errorf("StatusError %+v, want %d for %s at %s", se, c.wantCode, c.wantWhat, srv.URL+c.wantPaths)
			}
		})
	}
}
