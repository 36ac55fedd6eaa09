// Package interruptloop is scenario 3 of the behavioural scenarios (conformance/README.md) (an interrupt in a loop keeps stable keys): spec.json, its
// runs and expectations (runs*.json), and the package interruptloopgraph that
// ilmekgen generates from spec.json with the line below. The typed node
// implementations and the tests are in conformance/scenarios_*_test.go.
package interruptloop

//go:generate go tool ilmekgen -o interruptloopgraph --type items=[]string --type verdicts=[]string spec.json
