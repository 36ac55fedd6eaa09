// Package taskorder is scenario 4 of the behavioural scenarios (conformance/README.md) (task-order reduce): spec.json, its
// runs and expectations (runs*.json), and the package taskordergraph that
// ilmekgen generates from spec.json with the line below. The typed node
// implementations and the tests are in conformance/scenarios_*_test.go.
package taskorder

//go:generate go tool ilmekgen -o taskordergraph --type winner=string --type trail=[]string spec.json
