package studio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/ilmek-go/ilmek/dot"
	"github.com/ilmek-go/ilmek/internal/suggest"
	"github.com/ilmek-go/ilmek/mermaid"
	"github.com/ilmek-go/ilmek/server"
	"github.com/ilmek-go/ilmek/spec"
)

func (s *Studio) routes() {
	m := s.mux
	m.Handle("GET /api/node-types", s.wrap(s.listTypes))
	m.Handle("GET /api/subgraphs", s.wrap(s.listSubgraphs))
	m.Handle("POST /api/check", s.wrap(s.checkDoc))
	m.Handle("POST /api/diagram", s.wrap(s.diagram))
	m.Handle("GET /api/documents", s.wrap(s.listDocs))
	m.Handle("POST /api/documents", s.wrap(s.createDoc))
	m.Handle("GET /api/documents/{id}", s.wrap(s.getDoc))
	m.Handle("PATCH /api/documents/{id}", s.wrap(s.renameDoc))
	m.Handle("DELETE /api/documents/{id}", s.wrap(s.deleteDoc))
	m.Handle("PUT /api/documents/{id}/draft", s.wrap(s.saveDraft))
	m.Handle("GET /api/documents/{id}/revisions", s.wrap(s.listRevisions))
	m.Handle("GET /api/documents/{id}/revisions/{n}", s.wrap(s.getRevision))
	m.Handle("GET /api/documents/{id}/versions", s.wrap(s.listVersions))
	m.Handle("GET /api/documents/{id}/review", s.wrap(s.getReview))
	m.Handle("POST /api/documents/{id}/publish", s.wrap(s.publish))
	m.Handle("GET /api/published/{name}", s.wrap(s.getPublished))
	m.Handle("GET /api/openapi.json", s.wrap(func(w http.ResponseWriter, _ *http.Request, _ server.Principal) error {
		w.Header().Set("Content-Type", "application/json")
		_, err := w.Write(OpenAPI)
		return err
	}))
	s.uiRoutes()
	m.Handle("/api/", s.wrap(func(http.ResponseWriter, *http.Request, server.Principal) error {
		return errf(http.StatusNotFound, "not-found", "Not found", "no such route; see GET api/openapi.json")
	}))
}

// DocumentView is a document with one of its revisions' source.
type DocumentView struct {
	Document
	// Source is the revision's bytes, exactly as stored (the canonical
	// form of a document that decodes).
	Source string `json:"source"`
	// Report checks the source.
	Report Report `json:"report"`
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// readJSON decodes a JSON request body strictly into v.
func readJSON(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return errf(http.StatusUnsupportedMediaType, "unsupported-media-type", "Unsupported media type", "send the request body as application/json")
		}
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return bodyError(err, v)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("the request body has data after its JSON object; send one object")
	}
	return nil
}

// bodyError words a decoding error of a request body for its reader
// (encoding/json's text names Go types: "json: cannot unmarshal number
// into Go struct field .source of type string"): which member is wrong
// and what it must be, or what the body lacks, and the members the route
// takes (v points to the route's struct). The error wraps err.
func bodyError(err error, v any) error {
	members := jsonMembers(v)
	takes := "send a JSON object with " + quoteList(members)
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
		msg string
	)
	switch {
	case errors.Is(err, io.EOF):
		msg = "the request body is empty; " + takes
	case errors.Is(err, io.ErrUnexpectedEOF):
		msg = "the request body is cut short before its JSON object ends; " + takes
	case errors.As(err, &syn):
		msg = fmt.Sprintf("the request body is not JSON: %s at byte %d; %s", syn, syn.Offset, takes)
	case errors.As(err, &typ) && typ.Field == "":
		msg = "the request body is " + jsonKind(typ.Value) + ", not a JSON object; " + takes
	case errors.As(err, &typ):
		msg = fmt.Sprintf("member %q of the request body must be %s, not %s", typ.Field, goKind(typ.Type), jsonKind(typ.Value))
	default:
		name, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
		if ok {
			name, _ = strconv.Unquote(name)
			msg = fmt.Sprintf("the request body has a member %q, which this route does not take; %s", trunc(name, 40), takes)
			if m := suggest.Closest(name, members); m != "" {
				msg = fmt.Sprintf("the request body has a member %q, which this route does not take: did you mean %q?", trunc(name, 40), m)
			}
		} else {
			msg = "the request body is not the JSON object this route takes; " + takes
		}
	}
	return badRequestBecause(msg, err)
}

// jsonMembers lists the JSON members of the struct v points to.
func jsonMembers(v any) []string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// quoteList writes names as "a", "b" and "c".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// jsonKind names the JSON value json.UnmarshalTypeError.Value describes
// ("number", "string", "number 1.5"...).
func jsonKind(value string) string {
	kind, _, _ := strings.Cut(value, " ")
	switch kind {
	case "string":
		return "a string"
	case "number":
		if _, n, ok := strings.Cut(value, " "); ok {
			return "the number " + trunc(n, 20)
		}
		return "a number"
	case "bool":
		return "true or false"
	case "array":
		return "an array"
	case "object":
		return "an object"
	}
	return trunc(value, 20)
}

// goKind says what JSON value a member of Go type t takes.
func goKind(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another kind of value"
}

// nameTaken words a repository's ErrNameTaken for the name asked for;
// other errors are returned as they are.
func nameTaken(name string, err error) error {
	if !errors.Is(err, ErrNameTaken) {
		return err
	}
	return errf(http.StatusConflict, "name-taken", "The document name is taken",
		fmt.Sprintf("another document is named %q; choose another name, or open that document", trunc(name, 40))).because(err)
}

// noRevision words a repository's ErrNotFound for revision n of d; other
// errors are returned as they are.
func noRevision(d Document, n int, err error) error {
	if !errors.Is(err, ErrNotFound) {
		return err
	}
	return errf(http.StatusNotFound, "not-found", "Not found",
		fmt.Sprintf("document %q has no revision %d; its revisions are 1 to %d", trunc(d.Name, 40), n, d.Revision)).because(err)
}

func (s *Studio) listTypes(w http.ResponseWriter, _ *http.Request, _ server.Principal) error {
	return writeJSON(w, http.StatusOK, map[string]any{"node_types": s.types})
}

func (s *Studio) checkDoc(w http.ResponseWriter, r *http.Request, p server.Principal) error {
	var in struct {
		Source string `json:"source"`
	}
	if err := readJSON(r, &in); err != nil {
		return err
	}
	rep, err := s.Check(r.Context(), p, "document.json", []byte(in.Source))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, rep)
}

// diagramCSP is the policy of a diagram opened on its own: it runs no
// script and loads nothing.
const diagramCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'"

// diagram lays a document out as SVG with Config.RenderSVG (DOT from
// package dot, as the server's diagrams).
func (s *Studio) diagram(w http.ResponseWriter, r *http.Request, _ server.Principal) error {
	if s.cfg.RenderSVG == nil {
		return errf(http.StatusNotImplemented, "not-implemented", "Not implemented",
			"this studio draws no SVG (Config.RenderSVG is nil); the Diagram tab shows the Mermaid text")
	}
	var in struct {
		Source string `json:"source"`
	}
	if err := readJSON(r, &in); err != nil {
		return err
	}
	g, diags := spec.Decode("document.json", []byte(in.Source))
	if g == nil {
		msg := "the document does not decode"
		if len(diags) > 0 {
			msg += ": " + diags[0].Message
		}
		return errf(http.StatusUnprocessableEntity, "document-invalid", "The document has errors", trunc(msg+"; fix it in the JSON tab", 170))
	}
	svg, err := s.cfg.RenderSVG(r.Context(), dot.Diagram(mermaid.FromSpec(g), nil))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Content-Security-Policy", diagramCSP)
	w.Header().Set("Cache-Control", "no-store")
	_, err = w.Write(svg)
	return err
}

func (s *Studio) listDocs(w http.ResponseWriter, r *http.Request, p server.Principal) error {
	all, err := s.cfg.Repository.List(r.Context())
	if err != nil {
		return err
	}
	out := []Document{}
	for _, d := range all {
		if s.cfg.Access(r.Context(), p, DocumentRef{ID: d.ID, Name: d.Name, Owner: d.Owner}, ActionView) == nil {
			out = append(out, d)
		}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"documents": out})
}

// load finds a document and checks that p may do a with it.
func (s *Studio) load(ctx context.Context, p server.Principal, id string, a Action) (Document, error) {
	d, err := s.cfg.Repository.Get(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return d, errf(http.StatusNotFound, "not-found", "Not found", "no document "+trunc(id, 40)+"; list documents with GET api/documents")
	}
	if err != nil {
		return d, err
	}
	return d, s.access(ctx, p, d, a)
}

// stored is what the studio keeps of a source: its canonical form when it
// decodes (so an unchanged document saves byte-identical and its "x-"
// members stay), else the source as given, and its fingerprint when it
// has no errors.
func (s *Studio) stored(ctx context.Context, p server.Principal, name string, src []byte) (Revision, Report, error) {
	rep, err := s.Check(ctx, p, name+".json", src)
	if err != nil {
		return Revision{}, rep, err
	}
	rev := Revision{Body: src}
	if rep.Canonical != "" {
		rev.Body = []byte(rep.Canonical)
	}
	if rep.Errors == 0 {
		rev.Fingerprint = rep.Fingerprint
	}
	return rev, rep, nil
}

func (s *Studio) createDoc(w http.ResponseWriter, r *http.Request, p server.Principal) error {
	var in struct {
		Name   string `json:"name"`
		Source string `json:"source"`
	}
	if err := readJSON(r, &in); err != nil {
		return err
	}
	if err := checkName(in.Name); err != nil {
		return err
	}
	d := Document{ID: newID(), Name: in.Name, Owner: p.ID, Created: time.Now().UTC()}
	if err := s.cfg.Access(r.Context(), p, DocumentRef{Name: d.Name, Owner: d.Owner}, ActionEdit); err != nil {
		return errf(http.StatusForbidden, "forbidden", "Forbidden", "the principal may not create documents")
	}
	if in.Source == "" {
		in.Source = string((&spec.Graph{Name: in.Name, Channels: []spec.Channel{}, Nodes: []spec.Node{}, Edges: []spec.Edge{}}).Encode())
	}
	rev, rep, err := s.stored(r.Context(), p, in.Name, []byte(in.Source))
	if err != nil {
		return err
	}
	rev.Author = p.ID
	d, err = s.cfg.Repository.Create(r.Context(), d, rev)
	if err != nil {
		return nameTaken(in.Name, err)
	}
	w.Header().Set("Location", "documents/"+d.ID)
	return writeJSON(w, http.StatusCreated, DocumentView{Document: d, Source: string(rev.Body), Report: rep})
}

func (s *Studio) getDoc(w http.ResponseWriter, r *http.Request, p server.Principal) error {
	d, err := s.load(r.Context(), p, r.PathValue("id"), ActionView)
	if err != nil {
		return err
	}
	rev, err := s.cfg.Repository.Revision(r.Context(), d.ID, d.Revision)
	if err != nil {
		return err
	}
	rep, err := s.Check(r.Context(), p, d.Name+".json", rev.Body)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, DocumentView{Document: d, Source: string(rev.Body), Report: rep})
}

func (s *Studio) renameDoc(w http.ResponseWriter, r *http.Request, p server.Principal) error {
	var in struct {
		Name string `json:"name"`
	}
	if err := readJSON(r, &in); err != nil {
		return err
	}
	if err := checkName(in.Name); err != nil {
		return err
	}
	d, err := s.load(r.Context(), p, r.PathValue("id"), ActionEdit)
	if err != nil {
		return err
	}
	d, err = s.cfg.Repository.Rename(r.Context(), d.ID, in.Name)
	if err != nil {
		return nameTaken(in.Name, err)
	}
	return writeJSON(w, http.StatusOK, d)
}

func (s *Studio) deleteDoc(w http.ResponseWriter, r *http.Request, p server.Principal) error {
	d, err := s.load(r.Context(), p, r.PathValue("id"), ActionEdit)
	if err != nil {
		return err
	}
	if err := s.cfg.Repository.Delete(r.Context(), d.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Studio) saveDraft(w http.ResponseWriter, r *http.Request, p server.Principal) error {
	var in struct {
		Base   int    `json:"base"`
		Source string `json:"source"`
	}
	if err := readJSON(r, &in); err != nil {
		return err
	}
	d, err := s.load(r.Context(), p, r.PathValue("id"), ActionEdit)
	if err != nil {
		return err
	}
	rev, rep, err := s.stored(r.Context(), p, d.Name, []byte(in.Source))
	if err != nil {
		return err
	}
	rev.Document, rev.Author = d.ID, p.ID
	rev, err = s.cfg.Repository.Save(r.Context(), in.Base, rev)
	if errors.Is(err, ErrStale) {
		return errf(http.StatusConflict, "stale", "The document changed since it was read",
			fmt.Sprintf("document %q was saved again since revision %d, which this draft is based on; copy your changes (JSON tab), reopen the document and make them again",
				trunc(d.Name, 40), in.Base)).because(err)
	}
	if err != nil {
		return err
	}
	d.Revision, d.Updated = rev.Number, rev.Created
	return writeJSON(w, http.StatusOK, DocumentView{Document: d, Source: string(rev.Body), Report: rep})
}

func (s *Studio) listRevisions(w http.ResponseWriter, r *http.Request, p server.Principal) error {
	d, err := s.load(r.Context(), p, r.PathValue("id"), ActionView)
	if err != nil {
		return err
	}
	revs, err := s.cfg.Repository.Revisions(r.Context(), d.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"revisions": revs})
}

// revisionParam reads {n}, or the query's revision (default: latest).
func revisionParam(s string, latest int) (int, error) {
	if s == "" {
		return latest, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, badRequest("revision " + trunc(s, 20) + " is not a revision number (1, 2...)")
	}
	return n, nil
}

func (s *Studio) getRevision(w http.ResponseWriter, r *http.Request, p server.Principal) error {
	d, err := s.load(r.Context(), p, r.PathValue("id"), ActionView)
	if err != nil {
		return err
	}
	n, err := revisionParam(r.PathValue("n"), d.Revision)
	if err != nil {
		return err
	}
	rev, err := s.cfg.Repository.Revision(r.Context(), d.ID, n)
	if err != nil {
		return noRevision(d, n, err)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"revision": rev, "source": string(rev.Body)})
}

func (s *Studio) listVersions(w http.ResponseWriter, r *http.Request, p server.Principal) error {
	d, err := s.load(r.Context(), p, r.PathValue("id"), ActionView)
	if err != nil {
		return err
	}
	vs, err := s.cfg.Repository.Versions(r.Context(), d.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"versions": vs})
}

func (s *Studio) getReview(w http.ResponseWriter, r *http.Request, p server.Principal) error {
	d, err := s.load(r.Context(), p, r.PathValue("id"), ActionView)
	if err != nil {
		return err
	}
	n, err := revisionParam(r.URL.Query().Get("revision"), d.Revision)
	if err != nil {
		return err
	}
	rev, err := s.cfg.Repository.Revision(r.Context(), d.ID, n)
	if err != nil {
		return noRevision(d, n, err)
	}
	rv, _, err := s.review(r.Context(), p, d, rev)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, rv)
}

func (s *Studio) publish(w http.ResponseWriter, r *http.Request, p server.Principal) error {
	var in struct {
		Revision int `json:"revision"`
		// Published is the version the caller reviewed against.
		Published     int  `json:"published"`
		ConfirmUnsafe bool `json:"confirm_unsafe"`
	}
	if err := readJSON(r, &in); err != nil {
		return err
	}
	d, err := s.load(r.Context(), p, r.PathValue("id"), ActionPublish)
	if err != nil {
		return err
	}
	if in.Revision < 1 {
		return badRequest("revision must name the revision to publish (1, 2...)")
	}
	if in.Published != d.Published {
		return errf(http.StatusConflict, "stale", "The document changed since it was read",
			"version "+strconv.Itoa(d.Published)+" was published since the review; review again")
	}
	rev, err := s.cfg.Repository.Revision(r.Context(), d.ID, in.Revision)
	if err != nil {
		return noRevision(d, in.Revision, err)
	}
	rv, _, err := s.review(r.Context(), p, d, rev)
	if err != nil {
		return err
	}
	if len(rv.Errors) > 0 {
		e := errf(http.StatusUnprocessableEntity, "document-invalid", "The document has errors",
			"revision "+strconv.Itoa(rev.Number)+" has "+strconv.Itoa(len(rv.Errors))+" errors; fix them (diagnostics lists them) and save before publishing")
		e.extra = func(q *Problem) { q.Diagnostics = rv.Errors }
		return e
	}
	if rv.Same {
		return errf(http.StatusConflict, "unchanged", "Already published",
			"revision "+strconv.Itoa(rev.Number)+" has the published version's fingerprint; there is nothing to publish")
	}
	if rv.Unsafe && !in.ConfirmUnsafe {
		e := errf(http.StatusConflict, "unsafe-change", "The change is unsafe for running threads",
			"the change is unsafe for paused or new threads or touches paused threads (review lists them); publish with confirm_unsafe to go on")
		e.extra = func(q *Problem) { q.Review = rv }
		return e
	}
	v, err := s.cfg.Repository.Publish(r.Context(), d.Published, Version{Document: d.ID, Revision: rev.Number,
		Fingerprint: rv.To, Publisher: p.ID, Body: rev.Body})
	if errors.Is(err, ErrStale) {
		return errf(http.StatusConflict, "stale", "The document changed since it was read",
			fmt.Sprintf("another version of %q was published while this one was reviewed; review again, then publish", trunc(d.Name, 40))).because(err)
	}
	if err != nil {
		return err
	}
	s.log.Info("studio: published", "document", d.Name, "version", v.Number, "fingerprint", v.Fingerprint, "principal", p.ID, "unsafe", rv.Unsafe)
	return writeJSON(w, http.StatusOK, map[string]any{"version": v, "review": rv})
}

// getPublished answers the published version's bytes, for a service to
// load (runtime.Load) or a go:generate step to write to a file. Its
// fingerprint is the ETag and the Ilmek-Fingerprint header, its number
// Ilmek-Version.
func (s *Studio) getPublished(w http.ResponseWriter, r *http.Request, p server.Principal) error {
	name := r.PathValue("name")
	v, err := s.cfg.Repository.Published(r.Context(), name)
	if errors.Is(err, ErrNotFound) {
		return errf(http.StatusNotFound, "not-found", "Not found", "document "+trunc(name, 40)+" has no published version; publish one in the studio")
	}
	if err != nil {
		return err
	}
	if _, err := s.load(r.Context(), p, v.Document, ActionView); err != nil {
		return errf(http.StatusNotFound, "not-found", "Not found", "document "+trunc(name, 40)+" has no published version; publish one in the studio")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("ETag", `"`+v.Fingerprint+`"`)
	h.Set("Ilmek-Fingerprint", v.Fingerprint)
	h.Set("Ilmek-Version", strconv.Itoa(v.Number))
	h.Set("Cache-Control", "no-cache")
	if m := r.Header.Get("If-None-Match"); m != "" && m == `"`+v.Fingerprint+`"` {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	_, err = w.Write(v.Body)
	return err
}
