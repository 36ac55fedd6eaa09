package runtime_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// A node that waits longer than WithParkAfter parks its thread: the run
// returns at once, and Thread.Wake (or package runtime/waker) continues
// the thread once the wake time has passed, from any process.
func ExampleSleep() {
	g, err := runtime.NewBuilder("remind").Channel("sent", "").
		Node("remind", func(c *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			if err := runtime.Sleep(c, "before-reminder", 20*time.Millisecond); err != nil {
				return nil, err // parked: return the error as for an interrupt
			}
			return runtime.Values{"sent": "reminder"}, nil
		}).Edge(spec.Start, "remind").Compile()
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	th := g.Thread(checkpoint.NewMemory(), "approval-7")
	res, err := th.Invoke(ctx, nil, runtime.WithParkAfter(10*time.Millisecond))
	fmt.Println(res.Status, err, !res.WakeAt.IsZero())
	time.Sleep(time.Until(res.WakeAt))
	res, err = th.Wake(ctx)
	fmt.Println(res.Status, err, res.State["sent"])
	// Output:
	// parked <nil> true
	// done <nil> reminder
}
