// Command testreport reads `go test -json` on its standard input and prints
// what `go test` would print without -json — each package's ok, FAIL or
// "no test files" line, the output of failed tests, build errors, and the
// output of the tests still running when a package's binary died (a
// timeout's panic and goroutine dump, which test2json files under the test
// that was running and which no fail event of that test follows) — plus,
// right after a package's line, one line for a package whose PostgreSQL
// tests skipped for want of a server (internal/pgtest's notice), which a
// plain `go test` hides behind "ok":
//
//	go test -race -json ./... | go run ./internal/testreport
//
// It exits 1 when a package or its build failed, or when the input held
// no test events at all (go test failed before testing anything); 0
// otherwise. make test and .ci/run run the tests through it.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ilmek-go/ilmek/internal/pgtest"
)

// event is one line of go test -json (cmd/test2json's TestEvent) or of the
// build events go test -json interleaves.
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

func main() { os.Exit(report(os.Stdin, os.Stdout)) }

// report filters in to out and returns the exit status.
func report(in io.Reader, out io.Writer) int {
	type key struct{ pkg, test string }
	buf := map[key]*strings.Builder{}
	started := map[string][]string{} // the tests of a package with output, in order
	pkgOut := map[string]*strings.Builder{}
	pgSkips := map[string]int{}
	failed, packages := false, 0
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(out, "%s\n", line) // not an event: pass it on
			continue
		}
		switch {
		case e.Action == "build-output":
			io.WriteString(out, e.Output)
		case e.Action == "build-fail":
			failed = true
		case e.Test == "" && e.Action == "output":
			if e.Output != "PASS\n" {
				if pkgOut[e.Package] == nil {
					pkgOut[e.Package] = &strings.Builder{}
				}
				pkgOut[e.Package].WriteString(e.Output)
			}
		case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			packages++
			for _, test := range started[e.Package] {
				k := key{e.Package, test}
				if b := buf[k]; b != nil && e.Action == "fail" {
					// A test with no end of its own: the binary died in it.
					io.WriteString(out, b.String())
				}
				delete(buf, k)
			}
			delete(started, e.Package)
			if b := pkgOut[e.Package]; b != nil {
				io.WriteString(out, b.String())
				delete(pkgOut, e.Package)
			}
			if e.Action == "fail" {
				failed = true
			}
			if n := pgSkips[e.Package]; n > 0 {
				fmt.Fprintf(out, "SKIP\t%s\t%d PostgreSQL tests skipped: no server (%s is not set; README, \"PostgreSQL tests\")\n", e.Package, n, pgtest.EnvDSN)
			}
		case e.Action == "output":
			k := key{e.Package, e.Test}
			if buf[k] == nil {
				buf[k] = &strings.Builder{}
				started[e.Package] = append(started[e.Package], e.Test)
			}
			buf[k].WriteString(e.Output)
		case e.Action == "fail":
			k := key{e.Package, e.Test}
			if b := buf[k]; b != nil {
				io.WriteString(out, b.String())
			}
			delete(buf, k)
		case e.Action == "skip":
			k := key{e.Package, e.Test}
			if b := buf[k]; b != nil && strings.Contains(b.String(), pgtest.EnvDSN+" not set") {
				pgSkips[e.Package]++
			}
			delete(buf, k)
		case e.Action == "pass":
			delete(buf, key{e.Package, e.Test})
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(out, "testreport: reading go test -json: %v\n", err)
		return 1
	}
	if failed || packages == 0 {
		return 1
	}
	return 0
}
