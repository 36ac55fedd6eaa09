// Package steponce is scenario 1 of the behavioural scenarios (conformance/README.md) (a step runs once across interrupt and resume): spec.json, its
// runs and expectations (runs*.json), and the package steponcegraph that
// ilmekgen generates from spec.json with the line below. The typed node
// implementations and the tests are in conformance/scenarios_*_test.go.
package steponce

//go:generate go tool ilmekgen -o steponcegraph --type cart=[]string --type order=[]string --type log=[]string spec.json
