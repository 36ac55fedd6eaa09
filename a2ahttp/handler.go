package a2ahttp

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/ilmek-go/ilmek/nodes/a2a"
)

// EndpointPath is where Handler takes JSON-RPC posts, from the handler's
// root.
const EndpointPath = "/a2a"

// Handler serves s (a graph served as an agent, a2a.Serve) over HTTP: its
// card at CardPath, with the url of the endpoint the request reached it
// by, and JSON-RPC posts at EndpointPath. Mount it at an origin's root
// (or strip a prefix in front of it).
func Handler(s *a2a.Server) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+CardPath, func(w http.ResponseWriter, r *http.Request) {
		card := s.Card()
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		if f := r.Header.Get("X-Forwarded-Proto"); f == "https" || f == "http" {
			scheme = f
		}
		card.URL = scheme + "://" + r.Host + strings.TrimSuffix(r.URL.Path, CardPath) + EndpointPath
		writeJSON(w, http.StatusOK, card)
	})
	mux.HandleFunc("POST "+EndpointPath, func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      int64           `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxResponseBytes))
		if err == nil {
			err = json.Unmarshal(body, &req)
		}
		if err != nil {
			writeJSON(w, http.StatusOK, a2a.Response{JSONRPC: "2.0", ID: json.RawMessage("null"),
				Error: &a2a.ErrorObject{Code: -32700, Message: "the request is not a JSON-RPC request: " + err.Error()}})
			return
		}
		resp, err := s.Post(r.Context(), &a2a.Request{JSONRPC: "2.0", ID: req.ID, Method: req.Method, Params: req.Params})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, http.StatusOK, resp)
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
