package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
	"github.com/ilmek-go/ilmek/spec"
)

// A run pauses for a person and its thread outlives the process: the
// second Open, as another process would, finds the pending interrupt in
// the file and resumes the thread with the typed answer. The step before
// the pause is journaled, so it does not run again on resume.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "ilmek-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	db := filepath.Join(dir, "app.db")

	quotes := 0
	g, err := runtime.NewBuilder("refund").
		Channel("log", spec.Append).
		Node("refund", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			quote, err := runtime.Step(ctx, "quote", func() (float64, error) { quotes++; return 19.5, nil })
			if err != nil {
				return nil, err
			}
			ok, err := runtime.Interrupt[bool](ctx, fmt.Sprintf("Refund %.2f EUR?", quote))
			if err != nil {
				return nil, err // the pause
			}
			return runtime.Values{"log": fmt.Sprintf("refund approved: %t", ok)}, nil
		}).
		Edge(spec.Start, "refund").
		Edge("refund", spec.End).
		Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()

	// The first process: the run pauses, and the thread is in the file.
	store, err := sqlite.Open(db)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := g.Thread(store, "ticket-9").Invoke(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, string(res.Pending[0].Payload), res.Pending[0].Expects.Type)
	store.Close()

	// The second process: open the same file and answer.
	store, err = sqlite.Open(db)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	pend, _ := g.Thread(store, "ticket-9").Pending(ctx)
	fmt.Println("pending:", pend[0].ID)
	res, err = g.Thread(store, "ticket-9").Resume(ctx, runtime.Answer(true))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.State["log"], "quotes taken:", quotes)
	// Output:
	// interrupted "Refund 19.50 EUR?" bool
	// pending: refund:interrupt#0
	// done [refund approved: true] quotes taken: 1
}
