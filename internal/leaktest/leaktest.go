// Package leaktest is the project's goroutine-leak check for tests: a test
// calls Check first, and fails if goroutines it started outlive it.
package leaktest

import (
	"bytes"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Wait is how long Check waits for goroutines to exit once the test is over.
const Wait = 5 * time.Second

// Check snapshots the live goroutines and, when the test and its subtests
// are over (and the cleanups registered after the call have run, such as
// closing a store), waits up to Wait for every goroutine started since to
// exit. It fails the test with the stacks of those still alive. Call it first
// in a test that must not leak; it cannot tell leaks apart in parallel tests.
func Check(t testing.TB) {
	t.Helper()
	base := Stacks()
	t.Cleanup(func() {
		deadline := time.Now().Add(Wait)
		for {
			var extra []string
			for id, stack := range Stacks() {
				if _, ok := base[id]; !ok {
					extra = append(extra, stack)
				}
			}
			if len(extra) == 0 {
				return
			}
			if time.Now().After(deadline) {
				slices.Sort(extra)
				t.Errorf("%d goroutine(s) leaked (%d before the test, %d now); their stacks:\n\n%s",
					len(extra), len(base), len(base)+len(extra), strings.Join(extra, "\n\n"))
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// Stacks returns the stack of every live goroutine, keyed by its id.
func Stacks() map[int64]string {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 2); err != nil {
		panic(err)
	}
	out := map[int64]string{}
	for _, block := range strings.Split(buf.String(), "\n\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(block), "goroutine ")
		if !ok {
			continue
		}
		id, _, _ := strings.Cut(rest, " ")
		if n, err := strconv.ParseInt(id, 10, 64); err == nil {
			out[n] = block
		}
	}
	return out
}
