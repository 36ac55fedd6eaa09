// Command server serves the approval document of approval.json over HTTP
// with the inbox page, on the loopback interface:
//
//	go run ./examples/server
//
// then open http://127.0.0.1:8080/ (the inbox) and answer the payments
// waiting there, or use the API its OpenAPI document describes
// (http://127.0.0.1:8080/openapi.json). Threads live in a SQLite file
// (-db) with their metadata and their runs' event logs, so a restarted
// server finds them where they stood. At start, when the file holds no
// payments yet, it pauses -demo payments on their approval, so the inbox
// has something to show.
//
// Every request is let in as the principal "anonymous" (server.Anonymous),
// which is only safe where every caller is trusted: the command refuses to
// listen anywhere but a loopback address. A real service passes its own
// Authenticate hook (a session cookie, a bearer token).
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/ilmek-go/ilmek/graphviz"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/server"
	"github.com/ilmek-go/ilmek/spec"
)

//go:embed approval.json
var approvalDoc []byte

// Decision is what the approver asks a person for.
type Decision struct {
	Approved bool   `json:"approved"`
	Comment  string `json:"comment,omitempty"`
}

// registry implements the document's node types.
var registry = runtime.Registry{
	"drafter": func(n spec.Node) (runtime.NodeFunc, error) {
		return func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			return runtime.Values{"log": []any{fmt.Sprintf("drafted a payment of %v", s["amount"])}}, nil
		}, nil
	},
	"approver": func(n spec.Node) (runtime.NodeFunc, error) {
		var cfg struct{ Question string }
		if err := runtime.DecodeConfig(n, &cfg); err != nil {
			return nil, err
		}
		return func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			d, err := runtime.Interrupt[Decision](ctx, map[string]any{"question": cfg.Question, "amount": s["amount"]})
			if err != nil {
				return nil, err
			}
			return runtime.Values{"decision": d, "log": []any{fmt.Sprintf("approved: %v %s", d.Approved, d.Comment)}}, nil
		}, nil
	},
	"notifier": func(n spec.Node) (runtime.NodeFunc, error) {
		return func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			return runtime.Values{"log": []any{"notified the requester"}}, nil
		}, nil
	},
}

func main() {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "loopback `address` to listen on")
	db := fs.String("db", filepath.Join(os.TempDir(), "ilmek-server.db"), "SQLite `file` that keeps the threads")
	demo := fs.Int("demo", 2, "payments to pause on their approval at start")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := run(ctx, *addr, *db, *demo, os.Stdout, nil)
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends. ready, when set, receives the address
// listened on.
func run(ctx context.Context, addr, db string, demo int, out io.Writer, ready func(string)) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-addr %s: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("-addr %s is not a loopback address: this example lets every request in unauthenticated; serve it on 127.0.0.1", addr)
	}
	store, err := sqlite.Open(db)
	if err != nil {
		return err
	}
	defer store.Close()
	g, err := runtime.Load("approval.json", approvalDoc, registry)
	if err != nil {
		return err
	}
	srv, err := server.New(server.Config{
		Graphs:       []server.Graph{server.Of(g)},
		Checkpointer: store,
		Authenticate: server.Anonymous,
		RenderSVG:    graphviz.New().SVG, // the inbox's diagram as SVG
		Logger:       slog.New(slog.NewTextHandler(out, nil)),
	})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", http.RedirectHandler("/inbox/", http.StatusFound))
	mux.Handle("/", srv)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	if err := seed(ctx, base, demo); err != nil {
		_ = hs.Close()
		return err
	}
	fmt.Fprintf(out, "serving the approval graph: inbox %s/inbox/, API %s/openapi.json\n", base, base)
	if ready != nil {
		ready(ln.Addr().String())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	_ = srv.Close(sctx)
	return ctx.Err()
}

// seed pauses n payments on their approval through the API, as a client
// would: create a thread, start a run with the amount, wait until it asks.
// It does nothing when the store holds payments already.
func seed(ctx context.Context, base string, n int) error {
	res, err := http.Get(base + "/threads?metadata.kind=payment&limit=1")
	if err != nil {
		return err
	}
	var page struct{ Threads []any }
	err = json.NewDecoder(res.Body).Decode(&page)
	res.Body.Close()
	if err != nil || len(page.Threads) > 0 {
		return err
	}
	post := func(path, body string) (map[string]any, error) {
		req, err := http.NewRequestWithContext(ctx, "POST", base+path, strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		var v map[string]any
		if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
			return nil, err
		}
		if res.StatusCode >= 300 {
			return nil, fmt.Errorf("POST %s: %d %v", path, res.StatusCode, v["detail"])
		}
		return v, nil
	}
	for i := range n {
		th, err := post("/threads", `{"metadata": {"kind": "payment"}}`)
		if err != nil {
			return err
		}
		id := th["thread_id"].(string)
		run, err := post("/threads/"+id+"/runs", fmt.Sprintf(`{"input": {"amount": %d}}`, 100*(i+1)))
		if err != nil {
			return err
		}
		res, err := http.Get(base + "/threads/" + id + "/runs/" + run["run_id"].(string) + "/wait")
		if err != nil {
			return err
		}
		res.Body.Close()
	}
	return nil
}
