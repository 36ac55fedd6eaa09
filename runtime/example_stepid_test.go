package runtime_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// A payment service charged the card, and its answer was lost on the way
// back: the step failed, so its result was not journaled, and the node's
// retry runs it again. It sends the charge under the step's id, the same
// on both attempts, and the service, which keeps the keys it has seen,
// charges once.
func ExampleCtx_StepID() {
	charged := map[string]int{} // the service: idempotency key -> amount
	answerLost := true
	charge := func(key string, amount int) (string, error) {
		if _, ok := charged[key]; !ok {
			charged[key] = amount
		}
		if answerLost {
			answerLost = false
			return "", errors.New("read tcp: connection reset by peer")
		}
		return fmt.Sprintf("receipt for %d", charged[key]), nil
	}
	g, err := runtime.NewBuilder("checkout").Channel("receipt", spec.LastWrite).
		Node("pay", func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
			receipt, err := runtime.Step(ctx, "charge", func() (string, error) {
				key, err := ctx.StepID()
				if err != nil {
					return "", err
				}
				return charge(key, 249)
			})
			if err != nil {
				return nil, err
			}
			return runtime.Values{"receipt": receipt}, nil
		}).
		Edge(spec.Start, "pay").
		Compile(runtime.WithNodeRetry("pay", runtime.RetryPolicy{MaxAttempts: 2}))
	if err != nil {
		panic(err)
	}
	res, err := g.Thread(checkpoint.NewMemory(), "order-7").Invoke(context.Background(), nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.State["receipt"])
	fmt.Println("charges:", len(charged))
	// Output:
	// receipt for 249
	// charges: 1
}
