// Command ilmek-conformance runs ilmek/1 conformance case files through the
// project's program kinds and checkpointers and reports each result:
//
//	go run ./conformance/cmd/ilmek-conformance [--kinds spec,generated] [--backends memory,sqlite] [--predicates FILE] [--module DIR] [--keep] DIR...
//
// Every *.json file of each DIR is a case file, single-run or multi-run
// (the format is in conformance/README.md); --predicates adds the rows of a
// predicate truth table. Each case runs through each kind (spec: built by
// runtime.FromSpec; generated: compiled by ilmekgen, all cases into one
// temporary module built once) against each checkpointer, and prints "ok"
// or "FAIL" with the differences, naming the run of a multi-run case. The
// generated kind needs the module's source: --module names it when the
// command runs outside the repository; --keep leaves the temporary module
// on disk. A DIR laid out as the reference's MCP, A2A or skills data (an
// expected.json beside a server.json, an agent.json or skill folders), or
// holding such folders, is reduced once per folder and compared with its
// expected.json as canonical JSON. The last line is "N passed, N failed";
// the exit status is 1 when anything failed and 2 on usage errors.
//
// --backends takes memory, sqlite, and, when ILMEK_POSTGRES_DSN names a
// PostgreSQL server, postgres and workers (every run a request to a queue
// drained by a worker in this process; the cases it cannot express are
// skipped with their reason, and counted as skipped).
package main

import (
	"os"

	"github.com/ilmek-go/ilmek/conformance"
	"github.com/ilmek-go/ilmek/conformance/internal/cli"
)

func main() {
	if conformance.HelperRequested() {
		// Started again to make a run that kills its process (a case's
		// "kill"), for the spec and code kinds.
		os.Exit(conformance.ServeHelper(nil, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
