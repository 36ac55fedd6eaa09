package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// ctxKey is a context key of this test's.
type ctxKey struct{}

// TestCtxOutlivesItsNode: a node's *runtime.Ctx, handed as a
// context.Context to a goroutine that outlives the node (net/http's
// background dial, an SDK's cancellation notice), stays valid while the
// run goes on to other tasks, after it ends and while the graph's next
// runs reuse the executor: no nil dereference, no data race (under
// -race), its Value still the caller's, and it ends cancelled with its
// run. It used to be rewritten for the next task and cleared at the run's
// end.
func TestCtxOutlivesItsNode(t *testing.T) {
	for _, observed := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "observed"}[observed], func(t *testing.T) {
			var kept sync.WaitGroup
			stop := make(chan struct{})
			var mu sync.Mutex
			var bad []string
			keep := func(ctx context.Context) {
				kept.Go(func() {
					for {
						if v, _ := ctx.Value(ctxKey{}).(string); v != "caller" {
							mu.Lock()
							bad = append(bad, "Value "+v)
							mu.Unlock()
							return
						}
						_, _ = ctx.Deadline()
						select {
						case <-stop:
							if ctx.Err() == nil {
								mu.Lock()
								bad = append(bad, "not cancelled after its run ended")
								mu.Unlock()
							}
							return
						case <-ctx.Done():
							if ctx.Err() == nil {
								mu.Lock()
								bad = append(bad, "done without an error")
								mu.Unlock()
							}
							return
						default:
							time.Sleep(10 * time.Microsecond)
						}
					}
				})
			}
			b := runtime.NewBuilder("keeper").Channel("n", spec.Append)
			for _, id := range []string{"a", "b", "c"} {
				b.Node(id, func(ctx *runtime.Ctx, _ runtime.Values) (runtime.Values, error) {
					keep(ctx)
					return runtime.Values{"n": 1}, nil
				})
			}
			b.Edge(spec.Start, "a").Edge(spec.Start, "b").Edge("a", "c").Edge("b", "c")
			var opts []runtime.Option
			if observed {
				opts = append(opts, runtime.WithObserver(runtime.NopObserver{}))
			}
			g, err := b.Compile(opts...)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.WithValue(context.Background(), ctxKey{}, "caller")
			for i := range 50 {
				var th *runtime.Thread[runtime.Values, runtime.Values]
				if i%2 == 0 {
					th = g.Thread(checkpoint.NewMemory(), "t")
				}
				if th != nil {
					_, err = th.Invoke(ctx, nil)
				} else {
					_, err = g.Invoke(ctx, nil)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			close(stop)
			kept.Wait()
			if len(bad) > 0 {
				t.Errorf("a kept Ctx went wrong %d times, first: %s", len(bad), bad[0])
			}
		})
	}
}
