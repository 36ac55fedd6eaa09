package studio

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// Problem is an error response body (RFC 9457, application/problem+json).
// Type is a URN naming the kind of problem (urn:ilmek:problem:<slug>, as
// package server's); the other members are the RFC's, plus the extensions
// below.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	// Diagnostics are the document's errors when it cannot be published.
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	// Review is the publish review an unconfirmed unsafe publish was
	// refused on.
	Review *Review `json:"review,omitempty"`
	// ErrorID ties an internal error to the studio's log record of it.
	ErrorID string `json:"error_id,omitempty"`
}

// ProblemTypePrefix starts the Type of every Problem the studio writes.
const ProblemTypePrefix = "urn:ilmek:problem:"

// maxDetail bounds a problem's detail.
const maxDetail = 180

// httpError is an error the studio makes itself, with its status. Its
// detail is written for the person who reads it in the page: what is
// wrong, where, and how to fix it, in the studio's words, never the Go
// error chain of its cause; the cause stays matchable (errors.Is, As).
type httpError struct {
	status      int
	slug, title string
	detail      string
	extra       func(*Problem)
	cause       error
}

func (e *httpError) Error() string { return e.detail }

// Unwrap returns the error the studio's words replace, if any.
func (e *httpError) Unwrap() error { return e.cause }

func errf(status int, slug, title, detail string) *httpError {
	return &httpError{status: status, slug: slug, title: title, detail: detail}
}

// because records the error e words for the reader.
func (e *httpError) because(err error) *httpError {
	e.cause = err
	return e
}

func badRequest(detail string) error {
	return errf(http.StatusBadRequest, "bad-request", "Bad request", detail)
}

// badRequestBecause is badRequest worded for cause, which it wraps.
func badRequestBecause(detail string, cause error) error {
	return errf(http.StatusBadRequest, "bad-request", "Bad request", detail).because(cause)
}

// problemOf maps an error to its problem; errors it does not know are
// internal (false).
func problemOf(err error) (Problem, bool) {
	var (
		he  *httpError
		mbe *http.MaxBytesError
	)
	// A repository's error is answered in the studio's words: its text
	// is a Go error chain ("document \"x\": studio: not found"). The
	// handlers word the ones they know more of (which name, which
	// revision).
	p := func(status int, slug, title, detail string) Problem {
		return Problem{Type: ProblemTypePrefix + slug, Title: title, Status: status, Detail: detail}
	}
	switch {
	case errors.As(err, &he):
		q := Problem{Type: ProblemTypePrefix + he.slug, Title: he.title, Status: he.status, Detail: he.detail}
		if he.extra != nil {
			he.extra(&q)
		}
		return q, true
	case errors.As(err, &mbe):
		return Problem{Type: ProblemTypePrefix + "body-too-large", Title: "Request body too large", Status: http.StatusRequestEntityTooLarge,
			Detail: "the request body is larger than the studio accepts; send a smaller one"}, true
	case errors.Is(err, ErrNotFound):
		return p(http.StatusNotFound, "not-found", "Not found",
			"the document, revision or version is not there (it may have been deleted); reload the list of documents"), true
	case errors.Is(err, ErrNameTaken):
		return p(http.StatusConflict, "name-taken", "The document name is taken",
			"another document has this name; choose another name"), true
	case errors.Is(err, ErrStale):
		return p(http.StatusConflict, "stale", "The document changed since it was read",
			"someone saved or published the document since it was read; reopen it and make the change again"), true
	}
	return Problem{}, false
}

func (s *Studio) writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	q, ok := problemOf(err)
	if !ok {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		s.log.Error("studio: internal error", "error_id", id, "method", r.Method, "path", r.URL.Path, "err", err)
		q = Problem{Type: ProblemTypePrefix + "internal", Title: "Internal error", Status: http.StatusInternalServerError,
			Detail: "the studio failed on this request; try again, and if it fails again give the operator error id " + id + " (it names the log record)", ErrorID: id}
	}
	if len(q.Detail) > maxDetail {
		q.Detail = strings.ToValidUTF8(q.Detail[:maxDetail-3], "") + "..."
	}
	q.Instance = r.URL.Path
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(q.Status)
	_ = json.NewEncoder(w).Encode(q)
}
