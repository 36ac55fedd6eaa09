package workers

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/internal/queuehook"
	"github.com/ilmek-go/ilmek/spec"
)

// TestContinueAfterEarlierRunEnded: a request whose earlier claim's run
// got past its first commit is continued by the next claim. That run's
// worker may still live (its claim expired, its lease did not) and end
// the thread after the next claim read the thread as unfinished and
// before its run takes the lease. The continuing run used to start the
// graph anew on the ended thread (a run with no input on an ended thread
// starts over), so the request's input went into its thread twice: seen
// once in TestChaos, where a thread's log read [n1..n5 n1..n5]. Now the
// continuing run is refused as moved, and the next claim records the
// earlier run's outcome.
func TestContinueAfterEarlierRunEnded(t *testing.T) {
	q := openInternalQueue(t, "continue")
	ctx := context.Background()
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	g, err := runtime.NewBuilder("pair").Channel("log", spec.Append).
		Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) {
			return runtime.Values{"log": "a"}, nil
		}).
		Node("b", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			select {
			case entered <- struct{}{}:
			default:
			}
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return runtime.Values{"log": "b"}, nil
		}).
		Edge(spec.Start, "a").Edge("a", "b").Compile()
	if err != nil {
		t.Fatal(err)
	}
	id, err := q.Submit(ctx, Request{Graph: "pair", Thread: "t"})
	if err != nil {
		t.Fatal(err)
	}
	// As a first claim leaves the request, with its claim expired: the
	// claim's run, "earlier", is the one below, whose worker lives on.
	if _, err := q.store.Pool().Exec(ctx, "UPDATE "+q.t("ilmek_requests")+" SET state = 'running', claim = 1, worker = 'earlier', "+
		"claim_until = clock_timestamp() - interval '1 second', base_cp = '', run_ids = '{earlier}' WHERE id = $1", id); err != nil {
		t.Fatal(err)
	}
	earlier := make(chan error, 1)
	go func() {
		_, err := g.Thread(q.store, "t").Invoke(ctx, runtime.Values{},
			runtime.WithEventLog(), queuehook.RunID("earlier").(runtime.RunOption))
		earlier <- err
	}()
	<-entered // a committed: the run wrote to the thread and holds its lease

	// The claim decided to continue; the earlier run ends before the
	// continuing run takes the thread.
	var decided []runMode
	testHookClaimDecided = func(m runMode) {
		decided = append(decided, m)
		if m == modeContinue && len(decided) == 1 {
			close(gate)
			if err := <-earlier; err != nil {
				t.Errorf("the earlier run: %v", err)
			}
		}
	}
	defer func() { testHookClaimDecided = nil }()
	wctx, stop := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		NewWorker(q, map[string]Runnable{"pair": Graph(g)}, Poll(10*time.Millisecond)).Run(wctx)
	}()
	wctxWait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	o, err := q.Wait(wctxWait, id, 10*time.Millisecond)
	stop()
	<-stopped
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ Log []string }
	if err := json.Unmarshal(o.Result, &st); err != nil {
		t.Fatalf("outcome %+v: %v", o, err)
	}
	if o.State != "done" || !slices.Equal(st.Log, []string{"a", "b"}) {
		t.Fatalf("request ended %s with log %v, want done with [a b] (claims decided %v)", o.State, st.Log, decided)
	}
	if len(decided) == 0 || decided[0] != modeContinue {
		t.Fatalf("claims decided %v, want the first to continue", decided)
	}
}
