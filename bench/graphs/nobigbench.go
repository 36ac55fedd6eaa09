//go:build !bigbench

package graphs

// bigBuild says that this build registers the graphs generated into _big/:
// only with -tags bigbench.
const bigBuild = false
