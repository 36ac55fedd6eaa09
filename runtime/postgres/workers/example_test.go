package workers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/postgres/workers"
)

// Requests submitted from a process that cannot run the graph (an
// operator's tool): answer a thread's question, then fork it from an
// earlier checkpoint with the other answer. The application's workers run
// both. (Not run by go test: it needs a server and workers; the package's
// tests and cmd/ilmek's do the same against ILMEK_POSTGRES_DSN.)
func ExampleQueue_Submit() {
	ctx := context.Background()
	store, err := postgres.Open(ctx, os.Getenv("ILMEK_POSTGRES_DSN"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	q := workers.NewQueue(store)
	id, err := q.Submit(ctx, workers.Request{Graph: "refund", Thread: "refund-7", Kind: workers.KindResume,
		Input: json.RawMessage(`{"review:interrupt#0": true}`)})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := q.Wait(ctx, id, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.State, string(out.Result))

	pause := "18ee0371575573b900000003" // a checkpoint id from the thread's history
	id, err = q.Submit(ctx, workers.Request{Graph: "refund", Thread: "refund-7", Kind: workers.KindResume, From: pause,
		Input: json.RawMessage(`{"review:interrupt#0": false}`)})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err = q.Wait(ctx, id, 0)
	fmt.Println(out.State, string(out.Result), err)
}

// What an outcome's state says: queued and running have not ended;
// cancelled never ran.
func ExampleOutcome_Ended() {
	for _, state := range []string{"queued", "running", "done", "interrupted", "error", "aborted", "cancelled"} {
		fmt.Println(state, workers.Outcome{State: state}.Ended())
	}
	// Output:
	// queued false
	// running false
	// done true
	// interrupted true
	// error true
	// aborted true
	// cancelled true
}
