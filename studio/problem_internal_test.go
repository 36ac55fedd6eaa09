package studio

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestWordsKeepCauses: an error the studio words for the person who reads
// it keeps its cause matchable (errors.Is, errors.As), and its problem
// says the studio's words, not the cause's.
func TestWordsKeepCauses(t *testing.T) {
	var body struct {
		Source string `json:"source"`
	}
	decode := func(s string) error {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.DisallowUnknownFields()
		return dec.Decode(&body)
	}
	wrapped := func(sentinel error) error { return fmt.Errorf("document %q: %w", "x", sentinel) }
	for _, c := range []struct {
		name   string
		err    error
		status int
		match  func(error) bool
	}{
		{"a member of the wrong kind", bodyError(decode(`{"source": 5}`), &body), http.StatusBadRequest,
			func(err error) bool { var e *json.UnmarshalTypeError; return errors.As(err, &e) }},
		{"not JSON", bodyError(decode(`{x`), &body), http.StatusBadRequest,
			func(err error) bool { var e *json.SyntaxError; return errors.As(err, &e) }},
		{"a name that is taken", nameTaken("x", wrapped(ErrNameTaken)), http.StatusConflict,
			func(err error) bool { return errors.Is(err, ErrNameTaken) }},
		{"no such revision", noRevision(Document{Name: "x", Revision: 2}, 9, wrapped(ErrNotFound)), http.StatusNotFound,
			func(err error) bool { return errors.Is(err, ErrNotFound) }},
		{"a repository's error, unworded", wrapped(ErrStale), http.StatusConflict,
			func(err error) bool { return errors.Is(err, ErrStale) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !c.match(c.err) {
				t.Errorf("%v does not match its cause", c.err)
			}
			p, ok := problemOf(c.err)
			if !ok || p.Status != c.status {
				t.Fatalf("problem %+v (%v), want status %d", p, ok, c.status)
			}
			for _, w := range []string{"studio:", "json:", "Go struct", `document "x": `} {
				if strings.Contains(p.Detail, w) {
					t.Errorf("detail %q holds %q", p.Detail, w)
				}
			}
		})
	}
}
