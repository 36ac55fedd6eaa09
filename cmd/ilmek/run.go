package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/pflag"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, for isSQLiteStore

	"github.com/ilmek-go/ilmek/internal/suggest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres"
	"github.com/ilmek-go/ilmek/runtime/sqlite"
)

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1 // the command ran and failed: not found, refused, damaged, store errors
	exitUsage = 2
)

// envStore names the store when --store is not given.
const envStore = "ILMEK_STORE"

const usageText = `ilmek looks inside a store of ilmek threads: a SQLite file or a PostgreSQL database.

Usage:
  ilmek [--store STORE] [--json] COMMAND [flags] [ARGS]

Commands:
  threads                      list threads, newest first (filters: --status, --meta,
                               --updated-after, --updated-before; paged)
  show THREAD                  status, pending questions, next nodes and state of a thread
  history THREAD               its checkpoints, newest first, with times and writes
  answer THREAD ANSWER...      answer its pending questions        (PostgreSQL: a queue request)
  fork THREAD --from CP        run it again from an earlier checkpoint (PostgreSQL: a queue request)
  cancel THREAD                stop its running request, drop its queued ones (PostgreSQL)
  delete THREAD... --yes       delete threads: checkpoints, journals, events
  prune THREAD... --keep-last N | --keep-after T
                               drop old checkpoints the threads no longer need
  check                        check a SQLite file's integrity (PRAGMA quick_check)
  version                      print the version
  help [COMMAND]               this text, or one command's flags

STORE is a SQLite file (app.db, or sqlite:app.db) or a PostgreSQL URL
(postgres://user@host/db?sslmode=disable); without --store, $ILMEK_STORE.
The file must exist and hold a store: ilmek never creates one, nor changes
a file that is not one.

ilmek does not run the application's nodes. On PostgreSQL, answer, fork and
cancel submit requests to the queue of runtime/postgres/workers, which the
application's workers run; on SQLite they are refused: answer or fork through
the application's server (POST /threads/{id}/resume) or its own command.

Statuses are the runtime's: new, interrupted, running, parked, done, error,
aborted.

Exit status: 0 ok, 1 the command failed (not found, refused, a damaged
file), 2 usage errors.
`

// commands are the subcommands, in the order the help lists them.
var commands = []string{"threads", "show", "history", "answer", "fork", "cancel", "delete", "prune", "check", "version", "help"}

// commandHelp is the first lines of each command's help.
var commandHelp = map[string]string{
	"threads": `Usage: ilmek threads [--status S] [--meta K=V]... [--updated-after T] [--updated-before T]
                     [--limit N] [--cursor C] [--all]

Lists the store's threads, most recently updated first, a page at a time;
the last line names the cursor of the next page. With --status, a page
holds N threads of that status (reading on past the others) unless the
listing ends first. T is a time (RFC 3339) or a duration back from now
(24h). META leaves out the keys ilmek keeps itself ("ilmek.*": the server's
graph, creation time, id and runs); --json lists them all.

Example:

  ilmek --store app.db threads --status interrupted --meta team=ops
`,
	"show": `Usage: ilmek show [--checkpoint CP] THREAD

Shows a thread: its status, metadata, how its last run ended, the questions
it waits on, the nodes that run next and its channels' values, at its latest
checkpoint or at CP.

Example:

  ilmek --store app.db show order-42
`,
	"history": `Usage: ilmek history [--limit N] THREAD

Lists a thread's checkpoints, newest first: id, superstep, time, the nodes
planned next, the questions pending, and the channels each checkpoint wrote
(compared with its parent). In WRITES, a + marks a channel that was
appended to ("log+": an append channel got new items; the others were
written whole, or a merge channel got keys merged in); --json holds the
values written.

Example:

  ilmek --store app.db history --limit 10 order-42
`,
	"answer": `Usage: ilmek answer [--graph NAME] [--wait] [--key K] THREAD ANSWER...

Answers the thread's pending questions (PostgreSQL only): submits a resume
request to the workers' queue. Each ANSWER is ID=JSON, the question's id and
the answer as JSON; a thread waiting on one question also takes a lone JSON
value. Every pending question must be answered. The answers are for the
questions as read now: if the thread moves on before a worker runs the
request (another answer came first), the request ends refused.

Example:

  ilmek --store "$DSN" answer --wait order-42 'review:interrupt#0={"approved":true}'
`,
	"fork": `Usage: ilmek fork --from CP [--answer ID=JSON]... [--input JSON] [--graph NAME] [--wait] [--key K] THREAD

Runs the thread again from its earlier checkpoint CP (PostgreSQL only),
which forks a new branch: with --answer, answering the questions pending at
CP differently; with --input, folding JSON into the channels (an update)
first. Submits a fork request to the workers' queue.

Example:

  ilmek --store "$DSN" fork --from 01HX... --answer 'review:interrupt#0=false' order-42
`,
	"cancel": `Usage: ilmek cancel THREAD

Cancels the thread's requests in the workers' queue (PostgreSQL only): the
queued ones end cancelled, the running one stops at its next superstep
boundary and ends aborted.

Example:

  ilmek --store "$DSN" cancel order-42
`,
	"delete": `Usage: ilmek delete --yes THREAD...

Deletes each thread: its checkpoints, journals, lease, metadata and events.
A run that holds the thread fails its next write.

Example:

  ilmek --store app.db delete --yes order-41 order-42
`,
	"prune": `Usage: ilmek prune (--keep-last N | --keep-after T) THREAD...

Drops each thread's checkpoints that neither rule keeps; the latest, every
branch tip, fork point and plan checkpoint are always kept. T is a time
(RFC 3339) or a duration back from now (72h).

Example:

  ilmek --store app.db prune --keep-last 20 order-42
`,
	"check": `Usage: ilmek check

Checks the SQLite file's integrity (PRAGMA quick_check over every page).
Exit status 1 when it is damaged. PostgreSQL has its own tool: pg_amcheck.

Example:

  ilmek --store app.db check
`,
	"version": `Usage: ilmek version

Prints the version of the ilmek module the command was built from.
`,
	"help": `Usage: ilmek help [COMMAND]

Prints the overview, or one command's help.
`,
}

// usageError is a wrong command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// helpError is a command's -h or --help.
type helpError struct{ fs *pflag.FlagSet }

func (e *helpError) Error() string { return "help requested for " + e.fs.Name() }

// errRefused is matched by the error of a command the store cannot do
// (answer, fork or cancel on SQLite; check on PostgreSQL).
var errRefused = errors.New("refused")

// refusedError is a command the store cannot do, with what to use instead.
type refusedError struct{ msg string }

func (e *refusedError) Error() string        { return e.msg }
func (e *refusedError) Is(target error) bool { return target == errRefused }

// common holds the flags every command takes.
type common struct {
	store   string
	schema  string
	json    bool
	timeout time.Duration
}

// newFlags returns a command's flag set with the common flags.
func newFlags(name string, c *common) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.StringVar(&c.store, "store", os.Getenv(envStore), "the store: a SQLite file, or a postgres:// URL (default $"+envStore+")")
	fs.StringVar(&c.schema, "schema", postgres.DefaultSchema, "the PostgreSQL schema holding the store's tables")
	fs.BoolVar(&c.json, "json", false, "print JSON instead of a table")
	fs.DurationVar(&c.timeout, "timeout", time.Minute, "give up after this long")
	return fs
}

// parse parses args, turning pflag's errors into usage errors with the
// nearest flag as a suggestion.
func parse(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return &helpError{fs}
		}
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
			var names []string
			fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
			if c := suggest.Closest(name, names); c != "" {
				msg += fmt.Sprintf("; did you mean --%s?", c)
			}
		}
		return &usageError{fs.Name() + ": " + msg}
	}
	return nil
}

// splitCommand finds the command among args: the first argument that is
// neither a flag nor the value of a common flag before it. The flags before
// it are the common ones, which every command's flag set also parses.
func splitCommand(args []string) (cmd string, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return "", args
		case a == "--store" || a == "--schema" || a == "--timeout":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a, append(slices.Clip(args[:i]), args[i+1:]...)
		}
	}
	return "", args
}

// run is the whole command: it parses args (the command line without the
// program's name), prints to stdout and stderr, and returns the exit
// status.
func run(args []string, stdout, stderr io.Writer) int {
	cmd, rest := splitCommand(args)
	var err error
	switch {
	case cmd == "" && (slices.Contains(args, "-h") || slices.Contains(args, "--help")):
		fmt.Fprint(stdout, usageText)
		return exitOK
	case cmd == "":
		err = &usageError{"no command; the commands are " + strings.Join(commands, ", ")}
	case cmd == "help":
		// The common flags (--store app.db, --json) may come before or
		// after help; the words left are the topic.
		topic, flags := splitCommand(rest)
		var words []string
		for w := topic; w != ""; w, flags = splitCommand(flags) {
			words = append(words, w)
		}
		switch {
		case len(words) == 0 && (slices.Contains(rest, "-h") || slices.Contains(rest, "--help")):
			fmt.Fprint(stdout, commandHelp["help"])
			return exitOK
		case len(words) == 0:
			fmt.Fprint(stdout, usageText)
			return exitOK
		case len(words) == 1 && slices.Contains(commands, topic):
			return run([]string{topic, "--help"}, stdout, stderr)
		}
		err = &usageError{fmt.Sprintf("help takes one command, not %q; %sthe commands are %s", strings.Join(words, " "), suggest.DidYouMean(topic, commands), strings.Join(commands, ", "))}
	case !slices.Contains(commands, cmd):
		err = &usageError{fmt.Sprintf("unknown command %q; %sthe commands are %s", cmd, suggest.DidYouMean(cmd, commands), strings.Join(commands, ", "))}
	default:
		err = runCommand(cmd, rest, stdout)
	}
	var ue *usageError
	var he *helpError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &he):
		fmt.Fprint(stdout, commandHelp[he.fs.Name()])
		if flags := he.fs.FlagUsages(); flags != "" {
			fmt.Fprintf(stdout, "\nFlags:\n%s", flags)
		}
		fmt.Fprintf(stdout, "\nRun 'ilmek help' for every command.\n")
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "ilmek: %v\nRun 'ilmek --help' for usage.\n", err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "ilmek: %v\n", err)
	return exitFail
}

// command is one subcommand: it defines its flags on fs, and run does the
// work once they are parsed.
type command struct {
	flags func(fs *pflag.FlagSet) func(ctx context.Context, st *store, args []string, out *output) error
	// noStore is set for commands that open no store.
	noStore bool
}

// runCommand parses cmd's flags, opens the store and runs it.
func runCommand(name string, args []string, stdout io.Writer) error {
	var c common
	fs := newFlags(name, &c)
	do := table[name].flags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	out := &output{w: stdout, json: c.json}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	if table[name].noStore {
		return do(ctx, nil, fs.Args(), out)
	}
	st, err := openStore(ctx, c.store, c.schema)
	if err != nil {
		return err
	}
	defer st.close()
	return do(ctx, st, fs.Args(), out)
}

// store is an open store of either kind.
type store struct {
	// name is the store as the user named it (a DSN without its password).
	name string
	cp   runtime.Checkpointer
	// lite or pg is set, by kind.
	lite *sqlite.Store
	pg   *postgres.Store
}

func (s *store) close() {
	if s.lite != nil {
		s.lite.Close()
	}
	if s.pg != nil {
		s.pg.Close()
	}
}

// openStore opens the store spec names: a postgres:// or postgresql://
// URL, or a SQLite file (a path, optionally prefixed sqlite:) that must
// exist.
func openStore(ctx context.Context, spec, schema string) (*store, error) {
	switch {
	case spec == "":
		return nil, &usageError{"no store: pass --store app.db (a SQLite file) or --store postgres://... (or set $" + envStore + ")"}
	case strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://"):
		if err := schemaExists(ctx, spec, schema); err != nil {
			return nil, err
		}
		pg, err := postgres.Open(ctx, spec, postgres.Schema(schema))
		if err != nil {
			return nil, fmt.Errorf("open the PostgreSQL store: %w", err)
		}
		return &store{name: "PostgreSQL schema " + schema, cp: pg, pg: pg}, nil
	}
	path := strings.TrimPrefix(spec, "sqlite:")
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no SQLite file at %q (%w); pass the application's store file, or a postgres:// URL", path, err)
	}
	if err := isSQLiteStore(ctx, path); err != nil {
		return nil, err
	}
	lite, err := sqlite.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open the SQLite store %s: %w", path, err)
	}
	return &store{name: path, cp: lite, lite: lite}, nil
}

// schemaExists checks that the database holds an ilmek schema of that
// name, so that ilmek never creates one (postgres.Open would).
func schemaExists(ctx context.Context, dsn, schema string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connect to the PostgreSQL store: %w", err)
	}
	defer conn.Close(ctx)
	var ok bool
	err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'ilmek_migrations')", schema).Scan(&ok)
	if err != nil {
		return fmt.Errorf("look for the ilmek schema %q: %w", schema, err)
	}
	if !ok {
		return fmt.Errorf("the database holds no ilmek schema %q; pass --schema with the name the application gives postgres.Schema (ilmek creates no store)", schema)
	}
	return nil
}

// sqliteMarker is the table every SQLite store holds: sqlite.Open creates
// it first, in the transaction that creates the others, and keeps the
// schema's version in it.
const sqliteMarker = "ilmek_meta"

// isSQLiteStore checks, reading the file without writing it, that path is
// an SQLite database holding an ilmek store, so that ilmek never creates
// one (sqlite.Open would, in any SQLite or empty file).
func isSQLiteStore(ctx context.Context, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("resolve the SQLite file %q: %w", path, err)
	}
	refuse := func(why string) error {
		return fmt.Errorf("%s is not an ilmek store: %s; pass the application's store file (ilmek never creates a store, nor changes a file that is not one)", path, why)
	}
	// mode=ro opens the file read-only: nothing is written to it, and no
	// journal is made beside it.
	db, err := sql.Open("sqlite", "file:"+sqliteURIEscaper.Replace(abs)+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return fmt.Errorf("open the SQLite file %s read-only: %w", path, err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
	if err != nil {
		return refuse(fmt.Sprintf("SQLite cannot read it (%v)", err))
	}
	tables, err := collectNames(rows)
	if err != nil {
		return refuse(fmt.Sprintf("SQLite cannot read it (%v)", err))
	}
	switch {
	case slices.Contains(tables, sqliteMarker):
		return nil
	case len(tables) == 0:
		return refuse("it holds no tables")
	}
	return refuse(fmt.Sprintf("it holds no %s table, only %s", sqliteMarker, short(strings.Join(tables, ", "), 120)))
}

// collectNames reads rows of one text column, and closes them.
func collectNames(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// sqliteURIEscaper escapes the characters that end or escape a path in an
// SQLite URI filename (as runtime/sqlite does).
var sqliteURIEscaper = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// lister is the store's ThreadLister.
func (s *store) lister() checkpoint.ThreadLister { return s.cp.(checkpoint.ThreadLister) }
