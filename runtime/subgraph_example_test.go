package runtime_test

import (
	"context"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// A support graph runs a shared refund graph as its node "refund". The
// refund graph pauses for an approval; the pause is listed on the support
// thread with a path-qualified id, and the answer, given from another
// process with the same store, continues the child where it paused.
func ExampleBuilder_Subgraph() {
	refund, _ := runtime.NewBuilder("refund").
		Channel("order", "").Channel("status", "").
		Node("approve", func(ctx *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			ok, err := runtime.Interrupt[bool](ctx, "refund order "+s["order"].(string)+"?")
			if err != nil {
				return nil, err
			}
			if ok {
				return runtime.Values{"status": "refunded"}, nil
			}
			return runtime.Values{"status": "declined"}, nil
		}).
		Edge(spec.Start, "approve").Edge("approve", spec.End).
		Compile()
	support, _ := runtime.NewBuilder("support").
		Channel("order", "").Channel("refund", "").
		Subgraph("refund", refund,
			map[string]string{"order": "order"},    // child channel <- parent channel
			map[string]string{"refund": "status"}). // parent channel <- child channel
		Edge(spec.Start, "refund").Edge("refund", spec.End).
		Compile()

	store := checkpoint.NewMemory()
	res, _ := support.Thread(store, "ticket-7").Invoke(context.Background(), runtime.Values{"order": "A7"})
	fmt.Println(res.Status, res.Pending[0].ID, string(res.Pending[0].Payload))

	// Another process, with the same store, answers the pause by its id.
	res, _ = support.Thread(store, "ticket-7").Resume(context.Background(), runtime.AnswersByID(map[string]any{"refund/approve:interrupt#0": true}))
	fmt.Println(res.Status, res.State["refund"])
	// Output:
	// interrupted refund/approve:interrupt#0 "refund order A7?"
	// done refunded
}
