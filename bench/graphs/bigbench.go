//go:build bigbench

package graphs

import "github.com/ilmek-go/ilmek/bench/workload"

// bigBuild says that this build registers the graphs generated into _big/.
const bigBuild = true

// registerBig registers a graph generated into _big/; the gitignored glue
// files big_<pkg>.go that `go run ./internal/mkgraphs -big -dir graphs`
// writes call it.
func registerBig(name string, f func(workload.Workload) (workload.Program, error)) {
	generated[name] = f
}
