// Package retry is scenario 11 of the behavioural scenarios (conformance/README.md) (retry without re-running steps): spec.json, its
// runs and expectations (runs*.json), and the package retrygraph that
// ilmekgen generates from spec.json with the line below. The typed node
// implementations and the tests are in conformance/scenarios_*_test.go.
package retry

//go:generate go tool ilmekgen -o retrygraph --type receipt=string spec.json
