package studio

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/server"
	"github.com/ilmek-go/ilmek/spec"
)

// NodeType is one node type the application offers in the palette.
type NodeType struct {
	// Type is the node type's name in documents and in Config.Registry.
	Type string `json:"type"`
	// Category groups types in the palette ("model", "tools", "flow"...).
	Category string `json:"category,omitempty"`
	// Description says what a node of the type does, in a sentence.
	Description string `json:"description,omitempty"`
	// ConfigSchema is the JSON Schema of the type's config, as
	// `ilmekgen schema --config TYPE=GOTYPE` prints it (produce it at go
	// generate time and embed it): the page draws the config form from
	// it. Nil: the type takes no config, or has no form (a JSON text area).
	ConfigSchema json.RawMessage `json:"config_schema,omitempty"`
	// Builtin marks the types that packages of the engine provide
	// (subgraphs, MCP, A2A, skills), listed apart from the application's.
	Builtin bool `json:"builtin,omitempty"`
}

// Action is what a request does with a document, for Config.Access.
type Action string

// The document actions Access decides.
const (
	// ActionView reads a document, its revisions, versions and review,
	// and fetches its published version.
	ActionView Action = "view"
	// ActionEdit creates, saves, renames and deletes a document.
	ActionEdit Action = "edit"
	// ActionPublish publishes a revision.
	ActionPublish Action = "publish"
)

// DocumentRef is the document an Access check is about.
type DocumentRef struct {
	// ID is "" for a document being created.
	ID    string
	Name  string
	Owner string
}

// OwnerOnly is the default Access hook: a principal may do anything with
// the documents it created (their Owner is its ID) and nothing with the
// others.
func OwnerOnly(_ context.Context, p server.Principal, d DocumentRef, _ Action) error {
	if p.ID != "" && d.Owner == p.ID {
		return nil
	}
	return ErrForbidden
}

// ErrForbidden is what OwnerOnly refuses with.
var ErrForbidden = errors.New("studio: the principal may not act on this document")

// ErrNoAuthenticate is returned by New for a Config without Authenticate.
var ErrNoAuthenticate = errors.New("studio: Config.Authenticate is required; use server.Anonymous only on a trusted loopback interface")

// Config configures a Studio.
type Config struct {
	// Repository keeps the documents. Required.
	Repository Repository
	// Registry is the registry the application runs with: live checking
	// builds each node's config with its type's factory, and the review
	// builds both versions for runtime.AffectedThreads. Required.
	Registry runtime.Registry
	// NodeTypes describe the registry's types for the palette; a type of
	// Registry not described here is listed with its name only, or, for
	// the engine's built-in types (mcp_tool, mcp_resource, a2a_call, skill,
	// skills), with their description and config schema. Each must be in
	// Registry, except "subgraph" (spec.SubgraphType), which the runtime
	// provides and the palette always lists: its nodes run the published
	// versions of the studio's documents (GET api/subgraphs).
	NodeTypes []NodeType
	// Checkpointer, when set, is where the services running the published
	// versions keep their threads: the publish review lists the threads a
	// change touches (runtime.AffectedThreads; it must be a
	// checkpoint.ThreadLister). Nil: the review compares documents only.
	Checkpointer runtime.Checkpointer
	// Authenticate finds the principal of a request, as server.Config's
	// does (server.Anonymous lets everyone in as "anonymous"). Required.
	Authenticate func(*http.Request) (server.Principal, error)
	// Access decides whether p may do action on document d; an error
	// refuses it, with 404 (as a missing document) for a document p may
	// not view and 403 otherwise, and a listing leaves out the documents p
	// may not view. Nil means OwnerOnly.
	Access func(ctx context.Context, p server.Principal, d DocumentRef, action Action) error
	// RenderSVG lays a diagram's DOT text out as SVG for the Diagram tab
	// (POST api/diagram), the same hook as server.Config.RenderSVG, e.g.
	// graphviz.New().SVG (package github.com/ilmek-go/ilmek/graphviz, which
	// the studio does not import). Nil makes the tab show the Mermaid text
	// and api/diagram answer 501.
	RenderSVG func(ctx context.Context, dot string) ([]byte, error)
	// MaxBodyBytes bounds request bodies (default 1 MiB); a larger body is
	// answered 413.
	MaxBodyBytes int64
	// Logger receives the studio's records (default slog.Default()).
	Logger *slog.Logger
}

// Studio is the builder's http.Handler. Mount it under a prefix with
// http.StripPrefix; it serves the page at / and the API under /api/.
type Studio struct {
	cfg   Config
	mux   *http.ServeMux
	log   *slog.Logger
	types []NodeType
	kids  childCache
}

// New checks cfg and returns the Studio.
func New(cfg Config) (*Studio, error) {
	if cfg.Authenticate == nil {
		return nil, ErrNoAuthenticate
	}
	if cfg.Repository == nil {
		return nil, errors.New("studio: Config.Repository is required: use NewMemory, studio/sqlite or studio/postgres")
	}
	if cfg.Registry == nil {
		return nil, errors.New("studio: Config.Registry is required: pass the registry the application runs with")
	}
	if cfg.Access == nil {
		cfg.Access = OwnerOnly
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	s := &Studio{cfg: cfg, mux: http.NewServeMux(), log: cfg.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	seen := map[string]bool{}
	for _, t := range cfg.NodeTypes {
		if _, ok := cfg.Registry[t.Type]; !ok && t.Type != spec.SubgraphType {
			return nil, fmt.Errorf("studio: node type %q of Config.NodeTypes is not in Config.Registry; register it or leave it out", t.Type)
		}
		if seen[t.Type] {
			return nil, fmt.Errorf("studio: node type %q is described twice in Config.NodeTypes; keep one", t.Type)
		}
		if t.ConfigSchema != nil && !json.Valid(t.ConfigSchema) {
			return nil, fmt.Errorf("studio: node type %q's ConfigSchema is not JSON; pass what ilmekgen schema --config prints", t.Type)
		}
		seen[t.Type] = true
		s.types = append(s.types, t)
	}
	names := slices.Collect(maps.Keys(cfg.Registry))
	if _, own := cfg.Registry[spec.SubgraphType]; !own {
		names = append(names, spec.SubgraphType) // the runtime provides it
	}
	for _, name := range names {
		if seen[name] {
			continue
		}
		if t, ok := builtin(name); ok {
			s.types = append(s.types, t)
		} else {
			s.types = append(s.types, NodeType{Type: name})
		}
	}
	slices.SortFunc(s.types, func(a, b NodeType) int {
		if a.Builtin != b.Builtin {
			if a.Builtin {
				return 1
			}
			return -1
		}
		if c := strings.Compare(a.Category, b.Category); c != 0 {
			return c
		}
		return strings.Compare(a.Type, b.Type)
	})
	s.routes()
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Studio) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	s.mux.ServeHTTP(w, r)
}

// handler is a route's function, after authentication.
type handler func(w http.ResponseWriter, r *http.Request, p server.Principal) error

func (s *Studio) wrap(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.writeProblem(w, r, fmt.Errorf("studio: handler panicked: %v", v))
			}
		}()
		p, err := s.cfg.Authenticate(r)
		if err != nil {
			s.log.Info("studio: authentication refused", "path", r.URL.Path, "err", err)
			w.Header().Set("WWW-Authenticate", `Bearer realm="ilmek"`)
			s.writeProblem(w, r, errf(http.StatusUnauthorized, "unauthenticated", "Authentication required",
				"the request carries no credentials the studio accepts"))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		}
		if err := h(w, r, p); err != nil {
			s.writeProblem(w, r, err)
		}
	})
}

// access runs the Access hook: a refused view answers 404, as a missing
// document does, so that ids and names cannot be probed.
func (s *Studio) access(ctx context.Context, p server.Principal, d Document, a Action) error {
	if err := s.cfg.Access(ctx, p, DocumentRef{ID: d.ID, Name: d.Name, Owner: d.Owner}, a); err != nil {
		s.log.Info("studio: access refused", "principal", p.ID, "document", d.ID, "action", a, "err", err)
		if a == ActionView || s.cfg.Access(ctx, p, DocumentRef{ID: d.ID, Name: d.Name, Owner: d.Owner}, ActionView) != nil {
			return errf(http.StatusNotFound, "not-found", "Not found", "no document "+d.ID+"; list documents with GET api/documents")
		}
		return errf(http.StatusForbidden, "forbidden", "Forbidden", "the principal may not "+string(a)+" document "+d.Name)
	}
	return nil
}

// nameRE is what a document name may be: it is part of a URL
// (GET api/published/{name}) and of file names a go:generate step writes.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func checkName(name string) error {
	if !nameRE.MatchString(name) {
		return errf(http.StatusBadRequest, "bad-name", "Bad document name",
			fmt.Sprintf("document name %q must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit", trunc(name, 40)))
	}
	return nil
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
