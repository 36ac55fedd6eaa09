// Package rerun is scenario 5 of the behavioural scenarios (conformance/README.md) (after a crash or an error, completed steps are not executed again): spec.json, its
// runs and expectations (runs*.json), and the package rerungraph that
// ilmekgen generates from spec.json with the line below. The typed node
// implementations and the tests are in conformance/scenarios_*_test.go.
package rerun

//go:generate go tool ilmekgen -o rerungraph --type log=[]string spec.json
