package main

import (
	"bytes"
	"context"
	"fmt"
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
// threads, one worker killed while it runs requests, every request done,
// the killed worker's requests claimed again.
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
	t.Logf("output:\n%s", out.String())
	for _, want := range []string{"started 3 worker processes", "submitted 20 requests", "killed worker pid ", "20 of 20 requests done", "were claimed again", "finished", "effects: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	var reclaimed, ran, twice int
	for _, l := range strings.Split(out.String(), "\n") {
		fmt.Sscanf(strings.TrimSpace(l), "%d requests held by the killed worker", &reclaimed)
		fmt.Sscanf(l, "effects: %d steps ran, %d of them twice", &ran, &twice)
	}
	if reclaimed == 0 {
		t.Errorf("no request was claimed again after the kill:\n%s", out.String())
	}
	// Every order's three steps ran; one killed between its effect and its
	// journal write runs again (the gap SECURITY.md names), so "twice" is
	// at most the number of requests claimed again.
	if ran < 60 || twice > reclaimed {
		t.Errorf("effects: %d ran, %d twice (%d requests claimed again)", ran, twice, reclaimed)
	}
}
