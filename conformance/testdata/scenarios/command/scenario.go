// Package command is scenario 10 of the behavioural scenarios (conformance/README.md) (a command's goto and the order of its update): spec.json, its
// runs and expectations (runs*.json), and the package commandgraph that
// ilmekgen generates from spec.json with the line below. The typed node
// implementations and the tests are in conformance/scenarios_*_test.go.
package command

//go:generate go tool ilmekgen -o commandgraph --type mode=string --type stage=string --type seen=string --type path=[]string spec.json
