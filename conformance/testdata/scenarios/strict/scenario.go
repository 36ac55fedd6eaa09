// Package strict is scenario 7 of the behavioural scenarios (conformance/README.md) (strict mode): spec.json, its
// runs and expectations (runs*.json), and the package strictgraph that
// ilmekgen generates from spec.json with the line below. The typed node
// implementations and the tests are in conformance/scenarios_*_test.go.
package strict

//go:generate go tool ilmekgen -o strictgraph --type answer=string spec.json
