// Command ilmek is the operator's tool: it looks inside a store of ilmek
// threads (a SQLite file or a PostgreSQL database) without writing Go.
//
//	ilmek --store app.db threads --status interrupted
//	ilmek --store app.db show order-42
//	ilmek --store app.db history order-42
//	ilmek --store 'postgres://app@db/app' answer order-42 'review:interrupt#0=true'
//
// Its commands list threads (threads), show one (show: status, pending
// questions, state, next nodes), list its checkpoints (history), delete
// threads (delete), drop old checkpoints (prune) and check a SQLite file's
// integrity (check). It cannot run the application's nodes, so the
// commands that continue a thread (answer, fork, cancel) work on
// PostgreSQL only, by submitting a request to the run-request queue of
// runtime/postgres/workers (or setting its cancel flag) for the
// application's workers to run; on SQLite they are refused with what to use
// instead. Every command prints a table for people, or JSON with --json.
//
// ilmek --help lists the commands; ilmek COMMAND --help describes one.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
