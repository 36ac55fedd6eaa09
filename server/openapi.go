package server

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the OpenAPI 3.1 document of the server's API, which the
// server serves at GET /openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

func (s *Server) getOpenAPI(w http.ResponseWriter, r *http.Request, _ Principal) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(OpenAPI)
	return err
}
