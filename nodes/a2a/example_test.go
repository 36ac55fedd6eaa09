package a2a_test

import (
	"context"
	"fmt"

	"github.com/ilmek-go/ilmek/nodes/a2a"
	"github.com/ilmek-go/ilmek/nodes/a2a/a2atest"
)

// A remote agent that pauses says so in its result: the caller answers on
// the same task.
func ExampleAgent_Invoke() {
	ctx := context.Background()
	script, _ := a2atest.Load("../../conformance/testdata/upstream/a2a/agent.json")
	desk, err := a2a.Connect(ctx, a2atest.NewTransport(script)) // any a2a.Transport: a2ahttp is the HTTP one
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := desk.Invoke(ctx, "refund please", a2a.SendOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(desk.Name(), r.State, r.NeedsInput)
	r, err = desk.Invoke(ctx, "Approve", a2a.SendOptions{TaskID: r.TaskID, ContextID: r.ContextID})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.State, r.Text)
	// Output:
	// support-desk input-required true
	// completed Refunded.
}
