// Command ilmek-bench times one workload on one ilmek program kind and
// checkpointer and prints one JSON line, so that a script can run it next
// to any other engine's harness that keeps the same contract:
//
//	ilmek-bench --workload chain|fanout|fanoutsend|loop --n N \
//	    --ckpt none|memory|sqlite|sqlite-nextwrite --kind generated|spec \
//	    [--min-time S] [--warmup S] [--min-runs K]
//
// It builds the program, runs it once and checks the result, warms up for
// --warmup seconds, then times single runs until both --min-time seconds
// and --min-runs runs are reached, and prints
//
//	{"engine":"ilmek-generated","workload":"chain-100","ckpt":"none","runs":…,
//	 "median_ns":…,"p10_ns":…,"p90_ns":…,"supersteps":100,"tasks":100,
//	 "unit":"superstep","ns_per_unit":…,"allocs_per_run":…,
//	 "bytes_per_run":…,"peak_rss_kb":…}
//
// ns_per_unit is the median divided by the supersteps (chain, loop) or the
// tasks (fanout, fanoutsend); allocations and bytes are averaged over the
// timed runs; peak_rss_kb is the process's peak resident set.
//
// --workload chat runs the chat workload instead (package workload, Chat:
// one thread of --n turns, 3000 by default, one 100-byte message appended
// per turn, a pause every tenth) once on --ckpt memory or sqlite, and
// prints ns per turn, the encoded bytes handed to the checkpointer per
// turn (on average and by the last turn) and the SQLite file's size after
// Close:
//
//	ilmek-bench --workload chat --n 3000 --ckpt sqlite
//
// Exit status: 0 ok, 1 the run failed or produced a wrong result, 2 usage
// errors, 3 the workload cannot be expressed (a generated program exists
// only for the sizes of chain, fanout and loop that have a package: 100,
// and, in a build with -tags bigbench, 200, 1000 and 2000; fanoutsend at
// any size).
//
// The 200-, 1,000- and 2,000-node packages are generated when the
// benchmarks run, not committed; build the command with them as `make
// bench` does:
//
//	go run ./internal/mkgraphs -big -dir graphs   # in the bench module; cached
//	go run -tags bigbench ./cmd/ilmek-bench --workload chain --n 1000
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
