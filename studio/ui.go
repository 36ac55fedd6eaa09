package studio

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/ilmek-go/ilmek/server"
)

// uiFiles is the page: index.html, and the bundle and its styles that
// go generate writes (studio/bundle).
//
//go:embed ui/index.html ui/studio.js ui/studio.css
var uiFiles embed.FS

// OpenAPI is the OpenAPI 3.1 document of the studio's JSON API, served at
// GET api/openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

// csp allows the page only its own files and requests: no inline script
// or style sheet, no CDN, no frames. (React and React Flow set element
// styles through the CSSOM, which style-src does not govern.)
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

func (s *Studio) uiRoutes() {
	sub, _ := fs.Sub(uiFiles, "ui")
	files := http.FileServerFS(sub)
	serve := s.wrap(func(w http.ResponseWriter, r *http.Request, _ server.Principal) error {
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
		return nil
	})
	s.mux.Handle("GET /{$}", serve)
	for _, f := range []string{"index.html", "studio.js", "studio.css"} {
		s.mux.Handle("GET /"+f, serve)
	}
}
