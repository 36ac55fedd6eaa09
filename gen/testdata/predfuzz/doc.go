// Package predfuzz holds the predicate probe graph that gen's
// FuzzPredicatesAgree runs: spec.json, written from predSpec in
// gen/fuzz_predicates_test.go by
//
//	go test ./gen -run TestPredfuzzSpec -update
//
// and the package predgraph, generated from it with the bindings of the
// line below (go generate ./gen/testdata/predfuzz), which are those of
// predChans.
// The probe node's edges guard every operator, with every kind of literal,
// on channels of every Go type the generator compiles guards for.
package predfuzz

//go:generate go tool ilmekgen -o predgraph --type s=string --type f=float64 --type f32=float32 --type i=int --type u=uint64 --type d=time.Duration --type b=bool --type ps=*string --type pf=*float64 --type ls=[]string --type lm=map[string]int --type as=[]string --type ms=map[string]int --type hits=[]string spec.json
