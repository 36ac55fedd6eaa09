package server

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed inbox/index.html inbox/inbox.js inbox/inbox.css
var inboxFiles embed.FS

// inboxCSP allows the console only its own files and requests.
const inboxCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// inboxRoutes serves the console's embedded files under /inbox/.
func (s *Server) inboxRoutes() {
	sub, _ := fs.Sub(inboxFiles, "inbox")
	files := http.StripPrefix("/inbox/", http.FileServerFS(sub))
	s.mux.Handle("GET /inbox/", s.wrap(func(w http.ResponseWriter, r *http.Request, _ Principal) error {
		w.Header().Set("Content-Security-Policy", inboxCSP)
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
		return nil
	}))
	s.mux.Handle("GET /inbox", http.RedirectHandler("inbox/", http.StatusMovedPermanently))
}
