package postgres_test

import (
	"context"
	"fmt"
	"os"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/spec"
)

// A thread kept in PostgreSQL: the run pauses for a person in one process,
// and any process that reaches the database answers it. (Not run by go
// test: it needs a server; the package's tests run the same against
// ILMEK_POSTGRES_DSN.)
func ExampleOpen() {
	ctx := context.Background()
	store, err := postgres.Open(ctx, os.Getenv("ILMEK_POSTGRES_DSN"), postgres.Schema("shop"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	g, err := runtime.NewBuilder("refund").Channel("approved", "").
		Node("review", func(c *runtime.Ctx, s runtime.Values) (runtime.Values, error) {
			ok, err := runtime.Interrupt[bool](c, "refund 120 EUR?")
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
	thread := g.Thread(store, "refund-7")
	res, err := thread.Invoke(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.Pending[0].ID)
	// Later, in any process:
	res, err = thread.Resume(ctx, runtime.Answer(true))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.State["approved"])
}

// Open checks its options before it connects: a schema name must be a
// lower-case SQL identifier.
func ExampleSchema() {
	_, err := postgres.Open(context.Background(), "postgres://app@db.invalid/app", postgres.Schema("Shop-Orders"))
	fmt.Println(err)
	// Output:
	// postgres.Open: Schema("Shop-Orders"): want a lower-case SQL identifier of at most 63 characters, [a-z_][a-z0-9_]*, such as "ilmek"
}
