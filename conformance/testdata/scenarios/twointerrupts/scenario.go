// Package twointerrupts is scenario 2 of the behavioural scenarios (conformance/README.md) (two interrupts in one node): spec.json, its
// runs and expectations (runs*.json), and the package twointerruptsgraph that
// ilmekgen generates from spec.json with the line below. The typed node
// implementations and the tests are in conformance/scenarios_*_test.go.
package twointerrupts

//go:generate go tool ilmekgen -o twointerruptsgraph --type answers=[]string spec.json
