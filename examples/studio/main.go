// Command studio runs the studio (package studio) over SQLite with the
// support example's node types, beside a service that runs the published
// version of the "support-agent" document and reloads it when a new
// version is published.
//
//	go run ./examples/studio -addr 127.0.0.1:8080 -db studio.db
//
// Open http://127.0.0.1:8080/studio/ to edit and publish the graph, and
// ask the service with http://127.0.0.1:8080/run?message=I+want+to+buy.
// The studio lets every request in as "anonymous" (server.Anonymous):
// keep it on the loopback interface, or give it a real Authenticate hook.
//
// The config forms come from the JSON Schemas that ilmekgen prints for the
// node types' Go config structs; go generate writes them to schemas/ (as
// .jsonschema files: every examples/**/*.json is a graph document that
// make generated checks).
package main

//go:generate sh -c "go tool ilmekgen schema --config llm=github.com/ilmek-go/ilmek/examples/support/supportgraph.LLMConfig > schemas/llm.jsonschema"
//go:generate sh -c "go tool ilmekgen schema --config http=github.com/ilmek-go/ilmek/examples/support/supportgraph.HTTPConfig > schemas/http.jsonschema"

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ilmek-go/ilmek/examples/support/supportgraph"
	"github.com/ilmek-go/ilmek/graphviz"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/server"
	"github.com/ilmek-go/ilmek/spec"
	"github.com/ilmek-go/ilmek/studio"
	"github.com/ilmek-go/ilmek/studio/sqlite"
)

//go:embed schemas/*.jsonschema starter.json
var files embed.FS

// document is the name the service runs the published version of.
const document = "support-agent"

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "the address to listen on")
	path := flag.String("db", "studio.db", "the SQLite database of the studio's documents")
	flag.Parse()
	h, db, err := setup(context.Background(), *path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "studio:", err)
		os.Exit(1)
	}
	defer db.Close()
	log.Printf("studio on http://%s/studio/, the service on http://%s/run?message=hello", *addr, *addr)
	srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// setup opens the repository, publishes the support document once when
// it is not there yet, and returns the studio and the service on one mux.
func setup(ctx context.Context, path string) (http.Handler, *sql.DB, error) {
	repo, db, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	if err := seed(ctx, repo); err != nil {
		db.Close()
		return nil, nil, err
	}
	st, err := studio.New(studio.Config{
		Repository:   repo,
		Registry:     registry(),
		NodeTypes:    nodeTypes(),
		Authenticate: server.Anonymous,
		RenderSVG:    graphviz.New().SVG, // the Diagram tab as SVG
		// Every document belongs to the one anonymous principal here.
		Access: func(context.Context, server.Principal, studio.DocumentRef, studio.Action) error { return nil },
	})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/studio/", http.StripPrefix("/studio", st))
	mux.Handle("GET /run", &service{repo: repo})
	return mux, db, nil
}

// nodeTypes describes the registry's types for the palette, with the
// config schemas go generate wrote.
func nodeTypes() []studio.NodeType {
	schema := func(name string) json.RawMessage {
		b, _ := files.ReadFile("schemas/" + name + ".jsonschema")
		return b
	}
	return []studio.NodeType{
		{Type: "llm", Category: "model", Description: "Answers the conversation and classifies its intent", ConfigSchema: schema("llm")},
		{Type: "http", Category: "tools", Description: "Calls the shop's checkout", ConfigSchema: schema("http")},
	}
}

// registry builds the support example's node types from documents, with
// the same fakes as examples/support (no network).
func registry() runtime.Registry {
	return runtime.Registry{
		"llm": func(n spec.Node) (runtime.NodeFunc, error) {
			var c supportgraph.LLMConfig
			if err := runtime.DecodeConfig(n, &c); err != nil {
				return nil, err
			}
			if c.Model == "" {
				return nil, errors.New("config.model is required: name the model to use")
			}
			return func(_ *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
				msgs, _ := s["messages"].([]any)
				last := ""
				if len(msgs) > 0 {
					last, _ = msgs[len(msgs)-1].(string)
				}
				if strings.Contains(strings.ToLower(last), "buy") {
					return runtime.Values{"messages": []any{"Great choice, taking you to checkout."}, "intent": "buy"}, nil
				}
				return runtime.Values{"messages": []any{"(" + c.Model + ") How can I help?"}, "intent": "chat"}, nil
			}, nil
		},
		"http": func(n spec.Node) (runtime.NodeFunc, error) {
			var c supportgraph.HTTPConfig
			if err := runtime.DecodeConfig(n, &c); err != nil {
				return nil, err
			}
			return func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
				return runtime.Values{"messages": []any{"Order placed at " + c.URL}}, nil
			}, nil
		},
	}
}

// seed creates and publishes the support document when the repository
// has none of that name.
func seed(ctx context.Context, repo studio.Repository) error {
	if _, err := repo.Published(ctx, document); !errors.Is(err, studio.ErrNotFound) {
		return err
	}
	src, _ := files.ReadFile("starter.json")
	g, diags := spec.Decode("starter.json", src)
	if diags.HasErrors() {
		return diags.Err()
	}
	body := g.Encode()
	d, err := repo.Create(ctx, studio.Document{ID: "support", Name: document, Owner: "anonymous"},
		studio.Revision{Author: "seed", Body: body, Fingerprint: g.Fingerprint()})
	if err != nil {
		return err
	}
	_, err = repo.Publish(ctx, 0, studio.Version{Document: d.ID, Revision: 1, Fingerprint: g.Fingerprint(), Publisher: "seed", Body: body})
	return err
}

// service runs the published version of the document, loading it again
// (runtime.Load) when its fingerprint changes. A service in another
// process would GET studio/api/published/support-agent instead of reading
// the repository.
type service struct {
	repo studio.Repository

	mu sync.Mutex
	fp string
	g  *runtime.Graph[runtime.Values, runtime.Values]
}

func (s *service) graph(ctx context.Context) (*runtime.Graph[runtime.Values, runtime.Values], error) {
	v, err := s.repo.Published(ctx, document)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v.Fingerprint != s.fp {
		g, err := runtime.Load(document+".json", v.Body, registry())
		if err != nil {
			return nil, err
		}
		s.g, s.fp = g, v.Fingerprint
	}
	return s.g, nil
}

func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g, err := s.graph(r.Context())
	if err != nil {
		http.Error(w, "no published version of "+document+": "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	res, err := g.Invoke(r.Context(), runtime.Values{"messages": []any{r.URL.Query().Get("message")}})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"fingerprint": g.Fingerprint(), "status": res.Status, "messages": res.State["messages"]})
}
