package a2ahttp

import (
	"bytes"
	"encoding/json"
	"fmt"
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
// by, and JSON-RPC posts at EndpointPath, each answered with the
// request's id as it came (a string, a number or null); a request over
// MaxResponseBytes, or whose id is of another kind, is an invalid request
// (-32600). Mount it at an origin's root (or strip a prefix in front of
// it).
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
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
		}
		fail := func(id json.RawMessage, code int, msg string) {
			writeJSON(w, http.StatusOK, a2a.Response{JSONRPC: "2.0", ID: id, Error: &a2a.ErrorObject{Code: code, Message: msg}})
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxResponseBytes+1))
		if err == nil && len(body) > MaxResponseBytes {
			fail(null, -32600, fmt.Sprintf("the request is over %d bytes", MaxResponseBytes))
			return
		}
		if err == nil {
			err = json.Unmarshal(body, &req)
		}
		if err != nil {
			fail(null, -32700, "the request is not a JSON-RPC request: "+err.Error())
			return
		}
		// A JSON-RPC id is a string, a number or null, and the response
		// carries it as it came.
		id := bytes.TrimSpace(req.ID)
		switch {
		case len(id) == 0 || string(id) == "null":
			id = null
		case id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9':
		default:
			fail(null, -32600, "the request's id is "+string(id)+"; a JSON-RPC id is a string, a number or null")
			return
		}
		resp, err := s.Post(r.Context(), &a2a.Request{JSONRPC: "2.0", Method: req.Method, Params: req.Params})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		resp.ID = id
		writeJSON(w, http.StatusOK, resp)
	})
	return mux
}

var null = json.RawMessage("null")

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
