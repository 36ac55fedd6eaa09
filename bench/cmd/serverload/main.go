// Command serverload is the server's load test: N concurrent clients each
// create a thread, start a run that pauses on a person, answer it, and
// wait for the end, over HTTP on loopback against package server's
// handler, for a bounded number of runs or time. It reports requests/s
// and the latency percentiles of every request, then checks every run's
// final state in the checkpointer: nothing lost, nothing run twice.
//
//	go run ./cmd/serverload -clients 32 -runs 2000 -ckpt memory
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/server"
)

// Report is the result of one load run, printed as one JSON line.
type Report struct {
	Clients     int     `json:"clients"`
	Ckpt        string  `json:"ckpt"`
	Runs        int     `json:"runs"` // threads taken through pause and resume to the end
	Requests    int     `json:"requests"`
	Seconds     float64 `json:"seconds"`
	RequestsPS  float64 `json:"requests_per_s"`
	RunsPS      float64 `json:"runs_per_s"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	MaxMs       float64 `json:"max_ms"`
	Errors      int     `json:"errors"`
	Checked     int     `json:"checked"` // threads whose final state was verified
	FirstErrors string  `json:"first_error,omitempty"`
}

func main() {
	fs := flag.NewFlagSet("serverload", flag.ContinueOnError)
	clients := fs.Int("clients", 16, "concurrent clients")
	runs := fs.Int("runs", 1000, "runs to complete in all (each: create, start, wait, resume, wait, read)")
	dur := fs.Duration("duration", 60*time.Second, "stop starting runs after this long")
	ckpt := fs.String("ckpt", "memory", "checkpointer: memory or sqlite")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	rep, err := Load(context.Background(), *clients, *runs, *dur, *ckpt)
	line, _ := json.Marshal(rep)
	fmt.Println(string(line))
	if err != nil {
		fmt.Fprintln(os.Stderr, "serverload:", err)
		os.Exit(1)
	}
}

// Decision is the approval's answer.
type Decision struct {
	Approved bool   `json:"approved"`
	Note     string `json:"note,omitempty"`
}

func approval() (*runtime.Graph[runtime.Values, runtime.Values], error) {
	return runtime.NewBuilder("approval").
		Channel("amount", "").Channel("decision", "").Channel("log", "append").
		TypedNode("draft", "draft", nil, func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			return runtime.Values{"log": []any{"draft"}}, nil
		}).
		TypedNode("review", "review", nil, func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			d, err := runtime.Interrupt[Decision](ctx, map[string]any{"amount": s["amount"]})
			if err != nil {
				return nil, err
			}
			return runtime.Values{"decision": d.Approved, "log": []any{"review"}}, nil
		}).
		TypedNode("notify", "notify", nil, func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			return runtime.Values{"log": []any{"notify"}}, nil
		}).
		Edge("__start__", "draft").Edge("draft", "review").Edge("review", "notify").Edge("notify", "__end__").
		Compile()
}

// Load runs the load test and checks the result.
func Load(ctx context.Context, clients, runs int, dur time.Duration, ckpt string) (Report, error) {
	rep := Report{Clients: clients, Ckpt: ckpt}
	var cp runtime.Checkpointer
	switch ckpt {
	case "memory":
		cp = checkpoint.NewMemory()
	case "sqlite":
		dir, err := os.MkdirTemp("", "serverload")
		if err != nil {
			return rep, err
		}
		defer os.RemoveAll(dir)
		st, err := sqlite.Open(filepath.Join(dir, "load.db"))
		if err != nil {
			return rep, err
		}
		defer st.Close()
		cp = st
	default:
		return rep, fmt.Errorf("-ckpt %q: want memory or sqlite", ckpt)
	}
	g, err := approval()
	if err != nil {
		return rep, err
	}
	srv, err := server.New(server.Config{
		Graphs: []server.Graph{server.Of(g)}, Checkpointer: cp,
		Authenticate: func(r *http.Request) (server.Principal, error) {
			id, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok {
				return server.Principal{}, errors.New("no token")
			}
			return server.Principal{ID: id}, nil
		},
	})
	if err != nil {
		return rep, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return rep, err
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	defer func() {
		_ = hs.Close()
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Close(cctx)
	}()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}, Timeout: 60 * time.Second}

	var (
		left     atomic.Int64
		mu       sync.Mutex
		lat      []time.Duration
		threads  []string
		errs     int
		firstErr error
	)
	left.Store(int64(runs))
	deadline := time.Now().Add(dur)
	call := func(who, method, path string, body any, want int, out any) error {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequestWithContext(ctx, method, base+path, rd)
		req.Header.Set("Authorization", "Bearer "+who)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		t0 := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		data, err := io.ReadAll(res.Body)
		res.Body.Close()
		d := time.Since(t0)
		mu.Lock()
		lat = append(lat, d)
		mu.Unlock()
		if err != nil {
			return err
		}
		if res.StatusCode != want {
			return fmt.Errorf("%s %s: %d, want %d: %s", method, path, res.StatusCode, want, data)
		}
		if out != nil {
			return json.Unmarshal(data, out)
		}
		return nil
	}
	one := func(who string, n int) error {
		var th server.ThreadView
		if err := call(who, "POST", "/threads", map[string]any{}, 201, &th); err != nil {
			return err
		}
		mu.Lock()
		threads = append(threads, th.ThreadID)
		mu.Unlock()
		runs := "/threads/" + th.ThreadID + "/runs/"
		var run server.RunView
		if err := call(who, "POST", runs[:len(runs)-1], map[string]any{"input": map[string]any{"amount": n}}, 202, &run); err != nil {
			return err
		}
		if err := call(who, "GET", runs+run.RunID+"/wait", nil, 200, &run); err != nil {
			return err
		}
		if run.Status != "interrupted" || len(run.Pending) != 1 {
			return fmt.Errorf("thread %s: run %s ended %s with %d pending, want interrupted with 1", th.ThreadID, run.RunID, run.Status, len(run.Pending))
		}
		answer := map[string]any{"answers": map[string]any{run.Pending[0].ID: Decision{Approved: n%2 == 0, Note: "load"}}}
		if err := call(who, "POST", "/threads/"+th.ThreadID+"/resume", answer, 202, &run); err != nil {
			return err
		}
		if err := call(who, "GET", runs+run.RunID+"/wait", nil, 200, &run); err != nil {
			return err
		}
		if run.Status != "done" {
			return fmt.Errorf("thread %s: resume %s ended %s: %s", th.ThreadID, run.RunID, run.Status, run.Error)
		}
		return nil
	}
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			who := fmt.Sprintf("client-%d", c)
			for time.Now().Before(deadline) {
				n := left.Add(-1)
				if n < 0 {
					return
				}
				if err := one(who, int(n)); err != nil {
					mu.Lock()
					errs++
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	rep.Seconds = elapsed.Seconds()
	rep.Requests = len(lat)
	rep.RequestsPS = float64(len(lat)) / elapsed.Seconds()
	rep.Errors = errs
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / 1e6
	}
	rep.P50ms, rep.P99ms, rep.MaxMs = pct(0.50), pct(0.99), pct(1)

	// Nothing lost: every thread ended, answered once, in order.
	for _, id := range threads {
		ts, err := g.Thread(cp, id).State(ctx)
		if err != nil {
			return rep, fmt.Errorf("thread %s: %w", id, err)
		}
		log, _ := ts.State["log"].([]any)
		if len(ts.Open) != 0 || len(ts.Next) != 0 || fmt.Sprint(log) != "[draft review notify]" {
			errs++
			if firstErr == nil {
				firstErr = fmt.Errorf("thread %s ended with log %v, %d open, next %v", id, log, len(ts.Open), ts.Next)
			}
			continue
		}
		rep.Checked++
	}
	rep.Runs = rep.Checked
	rep.RunsPS = float64(rep.Runs) / elapsed.Seconds()
	rep.Errors = errs
	if firstErr != nil {
		rep.FirstErrors = firstErr.Error()
		return rep, firstErr
	}
	return rep, nil
}
