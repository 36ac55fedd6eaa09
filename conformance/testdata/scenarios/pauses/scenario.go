// Package pauses is scenario 8 of the behavioural scenarios (conformance/README.md) (concurrent pauses answered by id; a bare answer is refused when several are pending): spec.json, its
// runs and expectations (runs*.json), and the package pausesgraph that
// ilmekgen generates from spec.json with the line below. The typed node
// implementations and the tests are in conformance/scenarios_*_test.go.
package pauses

//go:generate go tool ilmekgen -o pausesgraph --type signatures=[]string --type filed=bool spec.json
