// Command checkout is a durable checkout: it creates an order, asks a person
// to approve the charge, and charges — across two runs of the program, with
// the thread kept in an SQLite file. The order is created exactly once, even
// though the node that creates it runs again when the answer comes in.
//
//	go run ./examples/checkout -db /tmp/checkout.db              # creates the order, pauses for approval
//	go run ./examples/checkout -db /tmp/checkout.db -answer yes  # resumes and charges
//
// With -db postgres://... the thread lives in PostgreSQL instead (in the
// schema -schema names, "ilmek_checkout" unless told), so the second run may
// happen on another machine:
//
//	go run ./examples/checkout -db 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
//	go run ./examples/checkout -db 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable' -answer yes
//
// Every effect (creating the order, charging the card) appends a line to a
// ledger file beside the SQLite file (with PostgreSQL, in the temporary
// directory), and the program prints how many of each the ledger holds.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "checkout:", err)
		os.Exit(1)
	}
}

// config is what the flags say.
type config struct {
	db, schema, ledger, order, answer string
	amount                            float64
}

func parseFlags(args []string, out io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("checkout", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.db, "db", "checkout.db", "SQLite `file`, or postgres:// URL, that keeps the order's thread")
	fs.StringVar(&c.schema, "schema", "ilmek_checkout", "PostgreSQL `schema` that keeps the threads (with a postgres:// -db only)")
	fs.StringVar(&c.ledger, "ledger", "", "`file` the effects are appended to (default: the -db file with extension .ledger; for a postgres:// URL, ilmek-checkout.SCHEMA.ledger in the temporary directory)")
	fs.StringVar(&c.order, "order", "order-1001", "order `id`, also the thread id")
	fs.StringVar(&c.answer, "answer", "", "answer to the approval question: yes or no (omit it on the first run)")
	fs.Float64Var(&c.amount, "amount", 42, "amount to charge, in EUR")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q; flags only (see -h)", fs.Arg(0))
	}
	if c.answer != "" && c.answer != "yes" && c.answer != "no" {
		return c, fmt.Errorf("-answer %q: answer yes or no", c.answer)
	}
	if c.ledger == "" && isPostgres(c.db) {
		// Not the working directory: a run from a clone would leave a file
		// in the checkout.
		c.ledger = filepath.Join(os.TempDir(), "ilmek-checkout."+c.schema+".ledger")
	}
	if c.ledger == "" {
		c.ledger = strings.TrimSuffix(c.db, filepath.Ext(c.db)) + ".ledger"
	}
	return c, nil
}

// isPostgres reports whether -db names a PostgreSQL server.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// checkpointer is the store -db names.
type checkpointer interface {
	runtime.Checkpointer
	Close() error
}

// openStore opens the SQLite file or PostgreSQL server -db names.
func openStore(ctx context.Context, db, schema string) (checkpointer, error) {
	if isPostgres(db) {
		return postgres.Open(ctx, db, postgres.Schema(schema))
	}
	return sqlite.Open(db)
}

// run is the program: one run or resume of the order's thread.
func run(ctx context.Context, args []string, out io.Writer) error {
	c, err := parseFlags(args, out)
	if err != nil {
		return err
	}
	store, err := openStore(ctx, c.db, c.schema)
	if err != nil {
		return err
	}
	defer store.Close()
	g, err := checkoutGraph(&ledger{path: c.ledger, out: out})
	if err != nil {
		return err
	}
	thread := g.Thread(store, c.order)

	latest, err := store.Get(ctx, c.order, "")
	if err != nil && !errors.Is(err, runtime.ErrNotFound) {
		return err
	}
	var res runtime.Result[runtime.Values]
	switch {
	case c.answer != "":
		switch {
		case latest == nil:
			return fmt.Errorf("order %s is not waiting for an answer: it has not been started; run without -answer to start it", c.order)
		case len(latest.Next) == 0:
			return fmt.Errorf("order %s is not waiting for an answer: it is finished; pass -order to start another", c.order)
		case len(latest.Pending) == 0:
			return fmt.Errorf("order %s is not waiting for an answer: its last run stopped before the approval; run without -answer to continue it", c.order)
		}
		res, err = thread.Resume(ctx, runtime.Answer(c.answer))
	case latest != nil && len(latest.Pending) > 0:
		fmt.Fprintf(out, "order %s is still waiting for approval\n", c.order)
		printPending(out, c, latest.Pending)
		return printLedger(out, c.ledger)
	case latest != nil && len(latest.Next) == 0:
		var st struct{ Status string }
		json.Unmarshal(latest.Channels, &st)
		fmt.Fprintf(out, "order %s is already finished (%s); pass -order to start another\n", c.order, st.Status)
		return printLedger(out, c.ledger)
	default:
		res, err = thread.Invoke(ctx, runtime.Values{"order": c.order, "amount": c.amount})
	}
	if err != nil {
		return err
	}
	switch res.Status {
	case runtime.StatusInterrupted:
		fmt.Fprintf(out, "paused: order %s needs approval\n", c.order)
		printPending(out, c, res.Pending)
	case runtime.StatusDone:
		if res.State["status"] == "charged" {
			fmt.Fprintf(out, "done: order %s charged, receipt %v\n", c.order, res.State["receipt"])
		} else {
			fmt.Fprintf(out, "done: order %s cancelled, nothing charged\n", c.order)
		}
	}
	return printLedger(out, c.ledger)
}

func printPending(out io.Writer, c config, pending []runtime.PendingInterrupt) {
	for _, p := range pending {
		fmt.Fprintf(out, "  question:     %s\n", question(p.Payload))
		fmt.Fprintf(out, "  interrupt id: %s\n", p.ID)
	}
	fmt.Fprintf(out, "answer with: go run ./examples/checkout -db %s -order %s -answer yes   (or -answer no)\n", shellQuote(c.db), shellQuote(c.order))
}

// shellQuote is s as one word for sh, bash and zsh: itself when it holds
// only characters no shell treats specially, else in single quotes (a URL's
// ? and & would otherwise be a glob and a background job).
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func printLedger(out io.Writer, path string) error {
	orders, charges, err := countLedger(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "ledger %s: %s created, %s made\n", path, plural(orders, "order"), plural(charges, "charge"))
	return nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
