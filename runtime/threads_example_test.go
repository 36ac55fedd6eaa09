package runtime_test

import (
	"context"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// An inbox of pending approvals, built on ListThreads: runs tag their
// threads with metadata, the ones that pause for a person are listed with
// their interrupts in one call, and answering one takes it off the list.
func ExampleThreadQuery_inbox() {
	ctx := context.Background()
	g, err := runtime.NewBuilder("refund").Channel("amount", "").Channel("approved", "").
		Node("review", func(c *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			amount, _ := s["amount"].(float64)
			if amount < 100 {
				return runtime.Values{"approved": true}, nil // small refunds need nobody
			}
			ok, err := runtime.Interrupt[bool](c, map[string]any{"question": fmt.Sprintf("refund %.0f?", amount)})
			if err != nil {
				return nil, err
			}
			return runtime.Values{"approved": ok}, nil
		}).
		Edge(spec.Start, "review").Edge("review", spec.End).Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	store := checkpoint.NewMemory()
	for _, r := range []struct {
		thread, team string
		amount       float64
	}{{"refund-1", "ops", 250}, {"refund-2", "ops", 40}, {"refund-3", "sales", 900}, {"refund-4", "ops", 120}} {
		_, err := g.Thread(store, r.thread).Invoke(ctx, runtime.Values{"amount": r.amount}, runtime.WithThreadMeta(map[string]string{"team": r.team}))
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	inbox := func() []checkpoint.ThreadInfo {
		page, err := store.ListThreads(ctx, checkpoint.ThreadQuery{Status: runtime.StatusInterrupted, Meta: map[string]string{"team": "ops"}})
		if err != nil {
			fmt.Println(err)
		}
		return page.Threads
	}
	for _, th := range inbox() {
		p := th.Pending[0]
		fmt.Printf("%s waits on %s at node %s: %s\n", th.ID, p.ID, p.Node, p.Payload)
	}
	first := inbox()[0]
	res, err := g.Thread(store, first.ID).Resume(ctx, runtime.AnswersByID(map[string]any{first.Pending[0].ID: true}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("answered", first.ID+":", res.Status, "approved =", res.State["approved"])
	fmt.Println("still waiting:", len(inbox()))
	// Output:
	// refund-4 waits on review:interrupt#0 at node review: {"question":"refund 120?"}
	// refund-1 waits on review:interrupt#0 at node review: {"question":"refund 250?"}
	// answered refund-4: done approved = true
	// still waiting: 1
}
