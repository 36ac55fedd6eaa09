package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/internal/pgtest"
)

// step is one invocation of the program and what its output must hold.
type step struct {
	args    []string
	want    []string
	wantErr string
}

func TestCheckoutAcrossRuns(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{"approve", []step{
			{nil, []string{
				"creating order order-1001 (42.00 EUR)",
				"paused: order order-1001 needs approval",
				"question:     Charge 42.00 EUR to the card on file for order order-1001? (yes/no)",
				"interrupt id: place_order:approve_charge#0",
				": 1 order created, 0 charges made",
			}, ""},
			{nil, []string{"order order-1001 is still waiting for approval", "interrupt id: place_order:approve_charge#0", ": 1 order created, 0 charges made"}, ""},
			{[]string{"-answer", "yes"}, []string{
				"charging 42.00 EUR for order order-1001",
				"done: order order-1001 charged, receipt rcpt-order-1001",
				": 1 order created, 1 charge made",
			}, ""},
			{nil, []string{"order order-1001 is already finished (charged)", ": 1 order created, 1 charge made"}, ""},
			{[]string{"-answer", "yes"}, nil, "order order-1001 is not waiting for an answer: it is finished; pass -order to start another"},
		}},
		{"refuse", []step{
			{[]string{"-order", "o-7", "-amount", "9.5"}, []string{"creating order o-7 (9.50 EUR)", "interrupt id: place_order:approve_charge#0"}, ""},
			{[]string{"-order", "o-7", "-answer", "no"}, []string{"done: order o-7 cancelled, nothing charged", ": 1 order created, 0 charges made"}, ""},
		}},
		{"answer before the start", []step{
			{[]string{"-order", "o-8", "-answer", "yes"}, nil, "order o-8 is not waiting for an answer: it has not been started; run without -answer to start it"},
		}},
		{"bad answer", []step{
			{[]string{"-answer", "maybe"}, nil, `-answer "maybe": answer yes or no`},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "checkout.db")
			for i, s := range tc.steps {
				var out bytes.Buffer
				err := run(t.Context(), append([]string{"-db", db}, s.args...), &out)
				if s.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), s.wantErr) {
						t.Fatalf("run %d %v: err %v, want it to contain %q", i+1, s.args, err, s.wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatalf("run %d %v: %v\noutput:\n%s", i+1, s.args, err, &out)
				}
				for _, want := range s.want {
					if !strings.Contains(out.String(), want) {
						t.Errorf("run %d %v: output lacks %q; output:\n%s", i+1, s.args, want, &out)
					}
				}
			}
		})
	}
}

// TestMain lets the test binary act as the program itself when a test
// starts it with runAsMain set, so the processes test needs no build.
func TestMain(m *testing.M) {
	if os.Getenv(runAsMain) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const runAsMain = "ILMEK_CHECKOUT_RUN_MAIN"

// program runs the program in its own process with args.
func program(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runAsMain+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("checkout %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestCheckoutInTwoProcesses runs the README's two commands as two
// processes, as a user would.
func TestCheckoutInTwoProcesses(t *testing.T) {
	db := filepath.Join(t.TempDir(), "checkout.db")
	first := program(t, "-db", db)
	if !strings.Contains(first, "interrupt id: place_order:approve_charge#0") || !strings.Contains(first, "creating order") {
		t.Fatalf("first run did not create the order and pause:\n%s", first)
	}
	second := program(t, "-db", db, "-answer", "yes")
	if !strings.Contains(second, "done: order order-1001 charged") || strings.Contains(second, "creating order") {
		t.Fatalf("second run did not charge, or created the order again:\n%s", second)
	}
	ledger, err := os.ReadFile(filepath.Join(filepath.Dir(db), "checkout.ledger"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(ledger), "create order-1001 42.00\ncharge order-1001 42.00\n"; got != want {
		t.Errorf("ledger:\n%s\nwant:\n%s", got, want)
	}
}

// TestCheckoutOnPostgres runs the two commands with -db postgres://..., as
// two processes, against the server of ILMEK_POSTGRES_DSN.
func TestCheckoutOnPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	order := "order-1001"
	// A schema of the test's own, dropped at the end, so the shared server
	// keeps nothing of it and parallel runs do not meet.
	schema := fmt.Sprintf("ilmek_checkout_test_%d", os.Getpid())
	ledger := filepath.Join(t.TempDir(), "checkout.ledger")
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Errorf("drop the test's schema: %v", err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`); err != nil {
			t.Errorf("drop the test's schema %s: %v", schema, err)
		}
	})
	first := program(t, "-db", dsn, "-schema", schema, "-order", order, "-ledger", ledger)
	if !strings.Contains(first, "interrupt id: place_order:approve_charge#0") || !strings.Contains(first, "creating order") {
		t.Fatalf("first run did not create the order and pause:\n%s", first)
	}
	second := program(t, "-db", dsn, "-schema", schema, "-order", order, "-ledger", ledger, "-answer", "yes")
	if !strings.Contains(second, "done: order "+order+" charged") || strings.Contains(second, "creating order") {
		t.Fatalf("second run did not charge, or created the order again:\n%s", second)
	}
	got, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if want := "create " + order + " 42.00\ncharge " + order + " 42.00\n"; string(got) != want {
		t.Errorf("ledger:\n%s\nwant:\n%s", got, want)
	}
}

// TestAnswerLineSurvivesTheShell: the command the first run prints to
// answer, pasted into a shell, passes -db and -order as the run had them,
// also a URL whose ? and & a shell would glob or split; and a postgres://
// -db keeps its default ledger out of the working directory.
func TestAnswerLineSurvivesTheShell(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, c := range []struct{ db, order string }{
		{"/tmp/checkout.db", "order-1001"},
		{"postgres://postgres@127.0.0.1:5432/test?sslmode=disable&application_name=x y", "o'7"},
	} {
		cfg, err := parseFlags([]string{"-db", c.db, "-order", c.order}, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		printPending(&out, cfg, nil)
		line, ok := strings.CutPrefix(strings.TrimSpace(out.String()), "answer with: ")
		if !ok {
			t.Fatalf("no answer line in %q", out.String())
		}
		line, _, _ = strings.Cut(line, "   (or")
		words, err := exec.Command(sh, "-c", `set -- `+line+`; printf '%s\n' "$@"`).Output()
		if err != nil {
			t.Fatalf("sh -c %q: %v", line, err)
		}
		want := strings.Join([]string{"go", "run", "./examples/checkout", "-db", c.db, "-order", c.order, "-answer", "yes"}, "\n") + "\n"
		if string(words) != want {
			t.Errorf("the shell read %q as\n%s\nwant\n%s", line, words, want)
		}
		if strings.HasPrefix(c.db, "postgres://") && filepath.Dir(cfg.ledger) != filepath.Clean(os.TempDir()) {
			t.Errorf("the default ledger of a postgres:// -db is %s, want it in %s", cfg.ledger, os.TempDir())
		}
	}
}
