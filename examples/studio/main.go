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
//
// The studio here lets every request in as "anonymous" (server.Anonymous)
// and lets anonymous do anything: whoever reaches the address can read,
// edit, publish and delete every document (written to the -db file), and
// the service runs what is published. So -addr must be a loopback address
// (127.0.0.1, ::1, localhost); any other, such as 0.0.0.0:8080 or :8080,
// is refused unless -allow-remote says to expose all of that to the
// network. Give a real studio an Authenticate hook instead.
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
	"io"
	"log"
	"net"
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
	o, err := parseArgs(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "studio:", err)
		os.Exit(2)
	}
	h, db, err := setup(context.Background(), o.db)
	if err != nil {
		fmt.Fprintln(os.Stderr, "studio:", err)
		os.Exit(1)
	}
	defer db.Close()
	if o.allowRemote {
		log.Printf("warning: -allow-remote: anyone who reaches %s can read, edit, publish and delete every document, with no authentication", o.addr)
	}
	log.Printf("studio on http://%s/studio/, the service on http://%s/run?message=hello", o.addr, o.addr)
	srv := &http.Server{Addr: o.addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// options are the command's flags.
type options struct {
	addr, db    string
	allowRemote bool
}

// parseArgs reads the command's flags (usage and flag errors go to out)
// and refuses a non-loopback -addr without -allow-remote.
func parseArgs(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("studio", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "the address to listen on: a loopback one (127.0.0.1, ::1, localhost) unless -allow-remote is given")
	fs.StringVar(&o.db, "db", "studio.db", "the SQLite database of the studio's documents")
	fs.BoolVar(&o.allowRemote, "allow-remote", false,
		"listen on a non-loopback -addr: this studio has no authentication, so anyone who reaches the address can read, edit, publish and delete every document and run the published graph; use only on a network you trust")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q: the command takes only flags (-addr, -db, -allow-remote)", fs.Arg(0))
	}
	return o, checkAddr(o.addr, o.allowRemote)
}

// errRemoteAddr is what a non-loopback -addr without -allow-remote is
// refused with (errors.Is).
var errRemoteAddr = errors.New("refusing a non-loopback -addr without -allow-remote")

// checkAddr refuses an address to listen on that other hosts can reach
// (every interface, a LAN address, a host name that is not only loopback)
// unless allowRemote is set: the studio has no authentication.
func checkAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-addr %q is not host:port, such as 127.0.0.1:8080: %w", addr, err)
	}
	if allowRemote || loopback(host) {
		return nil
	}
	where := "host " + host
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		where = "every interface"
	}
	return fmt.Errorf("%w: -addr %s listens on %s, which other machines can reach, and this studio has no authentication "+
		"(anyone could read, edit, publish and delete its documents); listen on 127.0.0.1 (the default), or pass -allow-remote to expose it anyway",
		errRemoteAddr, addr, where)
}

// loopback reports whether host names only loopback addresses: a
// loopback IP, "localhost", or a name that resolves to loopback addresses
// alone.
func loopback(host string) bool {
	if host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return false
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return false
		}
	}
	return true
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
