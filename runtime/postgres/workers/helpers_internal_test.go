package workers

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/runtime/postgres"
)

// openInternalQueue opens a PostgreSQL store in schema
// ilmek_pgtest_<name>_<pid>, dropped at cleanup, and its queue, for the
// package's internal tests and benchmarks. Without ILMEK_POSTGRES_DSN it
// skips, unless CI=true.
func openInternalQueue(tb testing.TB, name string) *Queue {
	tb.Helper()
	schema := fmt.Sprintf("ilmek_pgtest_%s_%d", name, os.Getpid())
	s, err := postgres.Open(context.Background(), pgtest.DSN(tb), postgres.Schema(schema))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		s.Pool().Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		s.Close()
	})
	return NewQueue(s)
}
