// Package testhook holds switches that the module's tests turn on to make
// the runtime check itself on every superstep. Nothing outside tests sets
// them; their cost when off is one atomic load. Production code never
// reads the environment for them: only a binary built with the build tag
// ilmektest (the child programs a test builds) reads VerifyWritesEnv.
package testhook

import (
	"flag"
	"os"
	"sync/atomic"
)

// VerifyWritesEnv is the environment variable that turns the writes check
// on in a process built with the build tag ilmektest that starts with it
// set to 1: the programs a test builds and runs as child processes
// (conformance's generated kind, built with BuildTag when the check is on).
const VerifyWritesEnv = "ILMEK_VERIFY_WRITES"

// BuildTag is the build tag under which a binary reads VerifyWritesEnv.
const BuildTag = "ilmektest"

var verifyWrites atomic.Bool

// SetVerifyWrites turns on (or off) the check that the writes a program
// encodes for a superstep (runtime.WriteEncoder) turn the state before into
// the state after, byte for byte, as a full encoding would have stored it.
// A mismatch panics with both encodings. It also sets VerifyWritesEnv, so
// child processes the test starts check too.
func SetVerifyWrites(on bool) {
	verifyWrites.Store(on)
	if on {
		os.Setenv(VerifyWritesEnv, "1")
	} else {
		os.Unsetenv(VerifyWritesEnv)
	}
}

// VerifyWrites reports whether the writes check is on.
func VerifyWrites() bool { return verifyWrites.Load() }

// VerifyUnlessBenchmarking turns the writes check on for a test binary
// that runs tests, not benchmarks (whose figures it would distort). Call
// it from TestMain; it parses the flags.
func VerifyUnlessBenchmarking() {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		SetVerifyWrites(true)
	}
}
