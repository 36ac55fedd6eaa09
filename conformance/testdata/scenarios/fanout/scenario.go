// Package fanout is scenario 9 of the behavioural scenarios (conformance/README.md) (send fan-out): spec.json, its
// runs and expectations (runs*.json), and the package fanoutgraph that
// ilmekgen generates from spec.json with the line below. The typed node
// implementations and the tests are in conformance/scenarios_*_test.go.
package fanout

//go:generate go tool ilmekgen -o fanoutgraph --type items=[]string --type item=string --type results=[]string --type total=int spec.json
