package a2ahttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/ilmek-go/ilmek/a2ahttp"
	"github.com/ilmek-go/ilmek/nodes/a2a"
)

// TestHeadersStayOnTheirOrigin: a transport's headers (WithHeader: a
// bearer token) go only to the origin New was given. A card that names
// an endpoint on another host is refused with ErrOtherOrigin, and that
// host is sent nothing; without headers, or with the endpoint passed to
// New, the card's endpoint is used. Before, the token was posted to
// whatever url the card named.
func TestHeadersStayOnTheirOrigin(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
		_, _ = w.Write([]byte(`{"jsonrpc": "2.0", "id": 1, "result": {"kind": "message", "messageId": "m", "role": "agent", "parts": [{"kind": "text", "text": "hi"}]}}`))
	}))
	defer other.Close()
	card := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"name": "Desk", "url": "` + other.URL + `/rpc"}`))
	}))
	defer card.Close()
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		url      string
		opts     []a2ahttp.Option
		refused  bool
		withAuth bool
	}{
		{"headers, endpoint on another origin", card.URL, []a2ahttp.Option{a2ahttp.WithHeader("Authorization", "Bearer secret")}, true, false},
		{"no headers", card.URL, nil, false, false},
		{"the endpoint passed to New", other.URL + "/rpc", []a2ahttp.Option{a2ahttp.WithHeader("Authorization", "Bearer secret")}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			leaked.Store(0)
			tr, err := a2ahttp.New(c.url, c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if c.url == other.URL+"/rpc" {
				// The card is read from the endpoint's origin: serve none
				// there, and post directly.
				res, err := tr.Post(ctx, &a2a.Request{JSONRPC: "2.0", ID: 1, Method: "message/send"})
				if err != nil || res == nil {
					t.Fatalf("post to the endpoint given to New: %v", err)
				}
				if leaked.Load() != 1 {
					t.Errorf("the endpoint named by the caller got the header %d times, want 1", leaked.Load())
				}
				return
			}
			_, err = a2a.Connect(ctx, tr)
			if c.refused {
				if !errors.Is(err, a2ahttp.ErrOtherOrigin) {
					t.Fatalf("Connect: %v, want ErrOtherOrigin", err)
				}
				if _, err := tr.Post(ctx, &a2a.Request{JSONRPC: "2.0", ID: 1, Method: "message/send"}); !errors.Is(err, a2ahttp.ErrOtherOrigin) {
					t.Errorf("Post: %v, want ErrOtherOrigin", err)
				}
				if leaked.Load() != 0 {
					t.Errorf("the other origin got the header %d times", leaked.Load())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Post(ctx, &a2a.Request{JSONRPC: "2.0", ID: 1, Method: "message/send"}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
