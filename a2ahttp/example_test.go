package a2ahttp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ilmek-go/ilmek/a2ahttp"
)

// The transport of an agent given by its origin: the card is read from
// the well-known path, and its url becomes the JSON-RPC endpoint. Here a
// test server stands in for the agent.
func ExampleNew() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+a2ahttp.CardPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"protocolVersion": "0.3.0", "name": "Support Desk", "url": "http://%s/a2a", "version": "1.0.0"}`, r.Host)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	t, err := a2ahttp.New(srv.URL, a2ahttp.WithHeader("Authorization", "Bearer token"))
	if err != nil {
		fmt.Println(err)
		return
	}
	card, err := t.AgentCard(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(card.Name, card.Version)
	// Output:
	// Support Desk 1.0.0
}
