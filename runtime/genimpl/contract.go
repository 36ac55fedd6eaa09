package genimpl

import (
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/internal/contract"
)

// GenVersion is the version of the contract between the code ilmekgen
// generates and this package, and the version ilmekgen stamps in the
// header of every file it writes. Generated code pins it with
// EnforceVersion constants, so that a generated package and a genimpl that
// do not match fail `go build` with a pointer to re-run `go generate`, as
// protoimpl does for protobuf.
//
// Version 2 moved the fixed machinery (the JSON object writer, the
// adapter's conversions, the builder of New, the registry lookup) out of
// every generated package into genimpl. Version 3 added EncodeWrites
// (WriteEncoder). Version 4 moved the contract itself (Program, Planner,
// Target, the version) from package runtime into genimpl, had Run return
// a command's targets, and moved what every package repeated (the
// program's fixed methods, the registry adapter, the node names) here.
// Version 5 evaluates a guard on a channel typed any with the predicate's
// own method (spec.Predicate.Holds), which package runtime no longer
// exports.
const GenVersion = 5

// MinGenVersion is the oldest generated code this package still builds:
// code of version 4 and before called runtime.Holds or named the contract
// in package runtime, which no longer export them.
const MinGenVersion = 5

// EnforceVersion is used by generated code in constant expressions that
// overflow (and so fail to compile) when the versions do not match:
//
//	const _, _ = genimpl.EnforceVersion(genimpl.GenVersion - 5), genimpl.EnforceVersion(5 - genimpl.MinGenVersion)
type EnforceVersion uint

// Program is the graph-specific half of a run, the half a generated
// package implements; the runtime's executor is the other half. The
// methods' contract is documented on contract.Program: Describe, Zero,
// Reduce, Plan, Run, EncodeState, DecodeState and Spec.
type Program[S, U any] = contract.Program[*runtime.Ctx, *runtime.Shape, S, U]

// WriteEncoder is implemented by a program that encodes what a superstep's
// updates wrote (EncodeWrites), so that a checkpoint stored as a delta
// costs the size of the update, not of the state.
type WriteEncoder[S, U any] = contract.WriteEncoder[runtime.ChannelWrite, S, U]

// Planner collects the tasks of the next superstep: a program's Plan adds
// the targets of static edges with Node.
type Planner[S any] = contract.Planner[S]

// Target is one destination of a command: a node index (or EndNode), and
// for a send the input that becomes the task's state. Build it with To or
// Send; a generated package aliases it as its own Target.
type Target[S any] = contract.Target[S]

// EndNode is the node index of spec.End in a Target.
const EndNode = contract.EndNode

// StartNode is the index Plan receives to plan the edges that leave
// spec.Start.
const StartNode = contract.StartNode

// To is the target that plans node (EndNode: nowhere).
func To[S any](node int) Target[S] { return contract.To[S](node) }

// Send is the target that plans one task of node whose state is input.
func Send[S any](node int, input S) Target[S] { return contract.Send(node, input) }

// bridge is what package runtime lends genimpl of its internals; runtime
// initialises before genimpl, which imports it.
var bridge = contract.Linked.(*contract.Bridge[*runtime.Ctx, runtime.Goto, runtime.Option])

// New wraps a generated program in the runtime's executor: the graph a
// generated package's New returns.
func New[S, U any](p Program[S, U], opts ...runtime.Option) (*runtime.Graph[S, U], error) {
	g := new(runtime.Graph[S, U])
	if err := bridge.Build(g, p, opts); err != nil {
		return nil, err
	}
	return g, nil
}

// ProgramOf returns the program g runs, for tests that call a generated
// program's methods (Reduce, Plan...) directly.
func ProgramOf[S, U any](g *runtime.Graph[S, U]) Program[S, U] {
	p, _ := bridge.Program(g).(Program[S, U])
	return p
}
