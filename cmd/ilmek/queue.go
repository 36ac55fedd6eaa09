package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/pflag"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

// errDamaged is matched by the error of a check that found damage.
var errDamaged = sqlite.ErrDamaged

// refuseSQLite is the error of a command that continues a thread, on
// SQLite: ilmek cannot run the application's nodes and SQLite has no
// queue for workers that can.
func refuseSQLite(cmd, thread string) error {
	how := map[string]string{
		"answer": "answer through the application's server (POST /threads/" + thread + "/resume) or its own command (Thread.Resume)",
		"fork":   "fork through the application's server (POST /threads/" + thread + "/history/{checkpoint}/fork) or its own command (Thread.Fork)",
		"cancel": "cancel through the application's server (POST /threads/" + thread + "/runs/{run}/cancel) or stop the process that runs it",
	}[cmd]
	return &refusedError{fmt.Sprintf("%s on SQLite: ilmek cannot run the application's nodes and SQLite has no workers' queue; %s", cmd, how)}
}

// queueFlags are the flags of the commands that submit a request.
type queueFlags struct {
	graph *string
	wait  *bool
	key   *string
}

func addQueueFlags(fs *pflag.FlagSet) queueFlags {
	return queueFlags{
		graph: fs.String("graph", "", "the graph's name as the workers register it (default: the graph of the thread's last request)"),
		wait:  fs.Bool("wait", false, "wait until the request has ended (up to --timeout) and print its outcome"),
		key: fs.String("key", "", "the request's key (workers.Request.Key): run the command again with the same key after a lost reply "+
			"(a dropped connection, a timeout) and the request is not queued twice"),
	}
}

// requestView is what answer and fork print: the request, and with --wait
// its outcome.
type requestView struct {
	Request int64  `json:"request"`
	Thread  string `json:"thread"`
	// Kind is the request's kind as the queue records it: start, resume
	// or fork (a request from an earlier checkpoint).
	Kind    string           `json:"kind"`
	Graph   string           `json:"graph"`
	Outcome *workers.Outcome `json:"outcome,omitempty"`
}

// graphOf is the graph of the thread's last queue request.
func graphOf(ctx context.Context, st *store, thread string) (string, error) {
	var g string
	err := st.pg.Pool().QueryRow(ctx, `SELECT graph FROM "`+st.pg.SchemaName()+`".ilmek_requests WHERE thread_id = $1 ORDER BY id DESC LIMIT 1`, thread).Scan(&g)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", &usageError{fmt.Sprintf("thread %q has no queue request to take the graph's name from: pass --graph NAME (the name its workers register)", thread)}
	}
	if err != nil {
		return "", fmt.Errorf("find the graph of thread %q: %w", thread, err)
	}
	return g, nil
}

// runningThreads returns which of the threads a worker is running a
// request of (PostgreSQL; none on SQLite, which has no queue), so that
// threads and show say running where the store still holds the outcome of
// the run before.
func runningThreads(ctx context.Context, st *store, ids []string) (map[string]bool, error) {
	if st.pg == nil || len(ids) == 0 {
		return nil, nil
	}
	rows, err := st.pg.Pool().Query(ctx, `SELECT DISTINCT thread_id FROM "`+st.pg.SchemaName()+`".ilmek_requests WHERE state = 'running' AND thread_id = ANY($1)`, ids)
	if err != nil {
		return nil, fmt.Errorf("read the workers' queue: %w", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read the workers' queue: %w", err)
	}
	running := map[string]bool{}
	for _, id := range got {
		running[id] = true
	}
	return running, nil
}

// submit submits r (filling in its graph), waits when asked, and prints.
func submit(ctx context.Context, st *store, qf queueFlags, r workers.Request, out *output) error {
	r.Graph, r.Key = *qf.graph, *qf.key
	if r.Graph == "" {
		var err error
		if r.Graph, err = graphOf(ctx, st, r.Thread); err != nil {
			return err
		}
	}
	q := workers.NewQueue(st.pg)
	id, err := q.Submit(ctx, r)
	if err != nil {
		return err
	}
	v := requestView{Request: id, Thread: r.Thread, Kind: string(r.Kind), Graph: r.Graph}
	kind := v.Kind
	if r.From != "" {
		v.Kind, kind = kindFork, kindFork+" from "+r.From
	}
	if *qf.wait {
		o, err := q.Wait(ctx, id, 250*time.Millisecond)
		if err != nil {
			return fmt.Errorf("request %d was submitted; %w (see it later with 'ilmek show %s')", id, err, r.Thread)
		}
		v.Outcome = &o
	}
	err = out.print(v, func(w io.Writer) {
		fmt.Fprintf(w, "submitted request %d (%s, graph %s, thread %s)\n", id, kind, r.Graph, r.Thread)
		if o := v.Outcome; o != nil {
			fmt.Fprintf(w, "Outcome:\t%s\n", o.State)
			if o.Error != "" {
				fmt.Fprintf(w, "Error:\t%s\n", short(o.Error, 200))
			}
			for _, p := range o.Pending {
				fmt.Fprintf(w, "Pending:\t%s at node %s: %s\n", p.ID, p.Node, short(string(p.Payload), 200))
			}
			if hasState(o.Result) {
				fmt.Fprintf(w, "State:\n%s\n", indentJSON(o.Result, "  "))
			}
		} else {
			fmt.Fprintf(w, "the application's workers run it; follow it with 'ilmek show %s'\n", r.Thread)
		}
	})
	if err != nil || v.Outcome == nil || !failed(v.Outcome.State) {
		return err
	}
	return fmt.Errorf("request %d (%s) of thread %q ended %s: %s; see the thread with 'ilmek show %s'", id, kind, r.Thread, v.Outcome.State, orDash(short(v.Outcome.Error, 200)), r.Thread)
}

// kindFork is the kind the queue records for a request from an earlier
// checkpoint (workers.Request.From).
const kindFork = "fork"

// failed reports whether a request that ended so did not do what it was
// asked: error (the run failed, or no worker has the graph), aborted
// (cancelled while running), cancelled (before it ran) or dead
// (workers.StateDead: its claims expired too often). done, interrupted
// (waiting on a person again) and parked (on a timer) are runs that went
// as the graph says.
func failed(state string) bool {
	switch state {
	case "error", "aborted", "cancelled", workers.StateDead:
		return true
	}
	return false
}

// hasState reports whether a request's result holds a state: a run that
// failed records none (null).
func hasState(result json.RawMessage) bool {
	r := bytes.TrimSpace(result)
	return len(r) > 0 && !bytes.Equal(r, []byte("null"))
}

func answerCmd(fs *pflag.FlagSet) runFunc {
	qf := addQueueFlags(fs)
	return func(ctx context.Context, st *store, args []string, out *output) error {
		if len(args) < 2 {
			return &usageError{"answer takes THREAD and at least one ANSWER (ID=JSON)"}
		}
		thread := args[0]
		if err := runtime.CheckThreadID(thread); err != nil {
			return &usageError{err.Error()}
		}
		if st.pg == nil {
			return refuseSQLite("answer", thread)
		}
		cp, err := st.cp.Get(ctx, thread, "")
		if err != nil {
			return fmt.Errorf("read thread %q: %w", thread, err)
		}
		if len(cp.Pending) == 0 {
			return fmt.Errorf("thread %q waits on no question: %w; see it with 'ilmek show %s'", thread, runtime.ErrNotInterrupted, thread)
		}
		answers, err := parseAnswers(args[1:], cp.Pending)
		if err != nil {
			return err
		}
		in, err := json.Marshal(answers)
		if err != nil {
			return err
		}
		// For the questions as read here: if the thread moves on before a
		// worker runs the request (another answer, a retry), it is refused.
		return submit(ctx, st, qf, workers.Request{Thread: thread, Kind: workers.KindResume, Input: in, ExpectedLatest: &cp.ID}, out)
	}
}

func forkCmd(fs *pflag.FlagSet) runFunc {
	qf := addQueueFlags(fs)
	from := fs.String("from", "", "the checkpoint to fork from (an id from 'ilmek history THREAD')")
	answer := fs.StringArray("answer", nil, "answer a question pending at the checkpoint: ID=JSON (repeat for several)")
	input := fs.String("input", "", "a JSON object folded into the channels at the checkpoint before the run (an update)")
	return func(ctx context.Context, st *store, args []string, out *output) error {
		thread, err := oneThread("fork", args)
		if err != nil {
			return err
		}
		switch {
		case *from == "":
			return &usageError{"fork needs --from CP, a checkpoint id from 'ilmek history " + thread + "'"}
		case len(*answer) > 0 && *input != "":
			return &usageError{"fork takes --answer or --input, not both: answers resume the checkpoint's questions, input starts a run from it"}
		case *input != "" && !json.Valid([]byte(*input)):
			return &usageError{fmt.Sprintf("--input is not JSON: %s", short(*input, 60))}
		}
		if st.pg == nil {
			return refuseSQLite("fork", thread)
		}
		cp, err := st.cp.Get(ctx, thread, *from)
		if err != nil {
			return fmt.Errorf("thread %q has no checkpoint %q (%w); list them with 'ilmek history %s'", thread, *from, err, thread)
		}
		r := workers.Request{Thread: thread, Kind: workers.KindStart, From: cp.ID, Input: json.RawMessage(*input)}
		if len(*answer) > 0 || len(cp.Pending) > 0 {
			if len(*answer) == 0 {
				ids := make([]string, len(cp.Pending))
				for i, p := range cp.Pending {
					ids[i] = p.ID
				}
				return &usageError{fmt.Sprintf("checkpoint %s waits on %s: answer with --answer ID=JSON", cp.ID, strings.Join(ids, ", "))}
			}
			answers, err := parseAnswers(*answer, cp.Pending)
			if err != nil {
				return err
			}
			if r.Input, err = json.Marshal(answers); err != nil {
				return err
			}
			r.Kind = workers.KindResume
		}
		return submit(ctx, st, qf, r, out)
	}
}

func cancelCmd(fs *pflag.FlagSet) runFunc {
	return func(ctx context.Context, st *store, args []string, out *output) error {
		thread, err := oneThread("cancel", args)
		if err != nil {
			return err
		}
		if st.pg == nil {
			return refuseSQLite("cancel", thread)
		}
		n, err := workers.NewQueue(st.pg).Cancel(ctx, thread)
		if err != nil {
			return err
		}
		v := struct {
			Thread    string `json:"thread"`
			Cancelled int    `json:"cancelled"`
		}{thread, n}
		return out.print(v, func(w io.Writer) {
			fmt.Fprintf(w, "cancelled %d request(s) of thread %s (a running one stops at its next superstep boundary)\n", n, thread)
		})
	}
}

// moduleVersion is the version of the ilmek module the command was built
// from.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Path == "github.com/ilmek-go/ilmek" && bi.Main.Version != "" {
			return bi.Main.Version
		}
		for _, d := range bi.Deps {
			if d.Path == "github.com/ilmek-go/ilmek" {
				return d.Version
			}
		}
	}
	return "(devel)"
}
