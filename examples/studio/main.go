// Command studio runs the studio (package studio) over SQLite with the
// support example's node types, beside a service that runs the published
// version of the "support-agent" document and reloads it when a new
// version is published. A "subgraph" node of it runs the published version
// of the document its config names (runtime.WithSubgraphs), at any depth.
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
	"slices"
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

// service runs the published version of the document, with the
// published versions its "subgraph" nodes run, building it again
// (runtime.FromSpec with runtime.WithSubgraphs) when any of their
// fingerprints changes. A service in another process would GET
// studio/api/published/{name} instead of reading the repository.
type service struct {
	repo studio.Repository

	mu  sync.Mutex
	key string
	g   *runtime.Graph[runtime.Values, runtime.Values]
}

func (s *service) graph(ctx context.Context) (*runtime.Graph[runtime.Values, runtime.Values], error) {
	p, err := fetch(ctx, s.repo, document, nil)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := p.key(); k != s.key {
		g, err := p.build()
		if err != nil {
			return nil, err
		}
		s.g, s.key = g, k
	}
	return s.g, nil
}

// published is a published document with the published documents its
// subgraph nodes run. The studio names a child by the graph name inside
// its document; this example names its documents as their graphs.
type published struct {
	doc  *spec.Graph
	fp   string
	kids []*published
}

// fetch reads the published version of name and, at any depth, of the
// graphs its subgraph nodes run (path: the graphs that contain it).
func fetch(ctx context.Context, repo studio.Repository, name string, path []string) (*published, error) {
	if slices.Contains(path, name) {
		return nil, fmt.Errorf("graph %q contains itself through %s", name, strings.Join(path, " > "))
	}
	v, err := repo.Published(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("graph %q: %w", name, err)
	}
	doc, diags := spec.Decode(name+".json", v.Body)
	if diags.HasErrors() {
		return nil, diags.Err()
	}
	p := &published{doc: doc, fp: v.Fingerprint}
	for _, n := range doc.Nodes {
		if n.Type != spec.SubgraphType {
			continue
		}
		var cfg spec.SubgraphConfig
		if err := runtime.DecodeConfig(n, &cfg); err != nil {
			return nil, err
		}
		k, err := fetch(ctx, repo, cfg.Graph, append(slices.Clip(path), name))
		if err != nil {
			return nil, err
		}
		p.kids = append(p.kids, k)
	}
	return p, nil
}

// key is the fingerprints p is built from.
func (p *published) key() string {
	k := p.fp
	for _, c := range p.kids {
		k += "(" + c.key() + ")"
	}
	return k
}

func (p *published) build() (*runtime.Graph[runtime.Values, runtime.Values], error) {
	var opts []runtime.Option
	for _, c := range p.kids {
		g, err := c.build()
		if err != nil {
			return nil, err
		}
		opts = append(opts, runtime.WithSubgraphs(g))
	}
	return runtime.FromSpec(p.doc, registry(), opts...)
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
