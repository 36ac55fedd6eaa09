//go:build race

package gen

// raceAllocs is what the race detector adds to the generator's
// allocations per document byte (TestGenerateProportion measures about 95
// under -race where it measures about 70 without).
const raceAllocs = 40
