package workers

import (
	"context"
	"slices"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
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
	gate, entered, wait := gated()
	g := pairGraph(t, nil, func(c *runtime.Ctx) error { return wait(c) })
	id, err := q.Submit(ctx, Request{Graph: "pair", Thread: "t"})
	if err != nil {
		t.Fatal(err)
	}
	// As a first claim leaves the request, with its claim expired: the
	// claim's run, "earlier", is the one below, whose worker lives on.
	expireFirstClaim(t, q, id, "")
	earlier := make(chan error, 1)
	go func() {
		_, err := g.Thread(q.store, "t").Invoke(ctx, runtime.Values{}, runtime.WithEventLog(), runRunID("earlier"))
		earlier <- err
	}()
	<-entered // a committed: the run wrote to the thread and holds its lease

	// The claim decides to continue; the earlier run ends before the
	// continuing run takes the thread.
	decided := endEarlierAt(t, 1, gate, earlier)
	o := runUntilEnded(t, q, map[string]Runnable{"pair": Graph(g)}, id)
	if log := logOf(t, o); o.State != "done" || !slices.Equal(log, []string{"a", "b"}) {
		t.Fatalf("request ended %s with log %v, want done with [a b] (claims decided %v)", o.State, log, *decided)
	}
	if (*decided)[0] != modeContinue {
		t.Fatalf("claims decided %v, want the first to continue", *decided)
	}
}
