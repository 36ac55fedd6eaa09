//go:build !race

package conformance

// raceFlags build the generated kind's program with the race detector when
// the tests run with it.
var raceFlags []string
