package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/runtime/postgres"
)

// TestMain lets the test binary act as the program's worker processes,
// which the submitter starts as copies of its own executable.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "-role" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestREADME runs the README's command: three worker processes, twenty
// threads, every request done.
func TestREADME(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Cleanup(func() {
		s, err := postgres.Open(context.Background(), dsn, postgres.Schema("ilmek_pgtest_workers_example"))
		if err == nil {
			s.Pool().Exec(context.Background(), "DROP SCHEMA ilmek_pgtest_workers_example CASCADE")
			s.Close()
		}
	})
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-db", dsn, "-workers", "3", "-threads", "20", "-schema", "ilmek_pgtest_workers_example"}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"started 3 worker processes", "submitted 20 requests", "20 of 20 requests done"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
