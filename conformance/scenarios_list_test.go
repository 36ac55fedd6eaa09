package conformance

import (
	"time"

	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/command/commandgraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/fanout/fanoutgraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/interruptloop/interruptloopgraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/pauses/pausesgraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/rerun/rerungraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/retry/retrygraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/steponce/steponcegraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/strict/strictgraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/taskorder/taskordergraph"
	"github.com/ilmek-go/ilmek/conformance/testdata/scenarios/twointerrupts/twointerruptsgraph"
	"github.com/ilmek-go/ilmek/runtime"
)

// one is a single variant: runs.json with no options.
var one = []variant{{runs: "runs.json"}}

// retryPolicy gives node charge three attempts.
var retryPolicy = runtime.RetryPolicy{MaxAttempts: 3, Backoff: time.Millisecond}

// scenarios are the behavioural scenarios (conformance/README.md) but the round
// trip (6, which runs over all of these); README.md has the table.
var scenarios = []scenario{
	{
		dir: "steponce", number: 1, registry: stepOnceRegistry, code: stepOnceCode, variants: one,
		pkg: packageOf(steponcegraph.New, steponcegraph.FromRegistry, steponcegraph.UpdateOf,
			func(fx *Effects) steponcegraph.Nodes { return stepOnceNodes{fx} }),
	},
	{
		dir: "twointerrupts", number: 2, registry: twoInterruptsRegistry, code: twoInterruptsCode, variants: one,
		pkg: packageOf(twointerruptsgraph.New, twointerruptsgraph.FromRegistry, twointerruptsgraph.UpdateOf,
			func(fx *Effects) twointerruptsgraph.Nodes { return twoInterruptsNodes{fx} }),
	},
	{
		dir: "interruptloop", number: 3, registry: interruptLoopRegistry, code: interruptLoopCode, variants: one,
		pkg: packageOf(interruptloopgraph.New, interruptloopgraph.FromRegistry, interruptloopgraph.UpdateOf,
			func(fx *Effects) interruptloopgraph.Nodes { return interruptLoopNodes{fx} }),
	},
	{
		dir: "taskorder", number: 4, registry: taskOrderRegistry, code: taskOrderCode, variants: one,
		pkg: packageOf(taskordergraph.New, taskordergraph.FromRegistry, taskordergraph.UpdateOf,
			func(*Effects) taskordergraph.Nodes { return taskOrderNodes{} }),
	},
	{
		dir: "rerun", number: 5, registry: rerunRegistry, code: rerunCode, variants: one,
		pkg: packageOf(rerungraph.New, rerungraph.FromRegistry, rerungraph.UpdateOf,
			func(fx *Effects) rerungraph.Nodes { return rerunNodes{fx} }),
	},
	{
		dir: "strict", number: 7, registry: strictRegistry, code: strictCode,
		variants: []variant{
			{runs: "runs-strict.json"},
			{runs: "runs-lenient.json", run: []runtime.RunOption{runtime.WithStrictReplay(false)}},
		},
		pkg: packageOf(strictgraph.New, strictgraph.FromRegistry, strictgraph.UpdateOf,
			func(fx *Effects) strictgraph.Nodes { return strictNodes{fx} }),
	},
	{
		dir: "pauses", number: 8, registry: pausesRegistry, code: pausesCode, variants: one,
		pkg: packageOf(pausesgraph.New, pausesgraph.FromRegistry, pausesgraph.UpdateOf,
			func(fx *Effects) pausesgraph.Nodes { return pausesNodes{fx} }),
	},
	{
		dir: "fanout", number: 9, registry: fanoutRegistry, code: fanoutCode, variants: one,
		codeToSpec: "router",
		pkg: packageOf(fanoutgraph.New, fanoutgraph.FromRegistry, fanoutgraph.UpdateOf,
			func(fx *Effects) fanoutgraph.Nodes { return fanoutNodes{fx} }),
	},
	{
		dir: "command", number: 10, registry: commandRegistry, code: commandCode, variants: one,
		pkg: packageOf(commandgraph.New, commandgraph.FromRegistry, commandgraph.UpdateOf,
			func(*Effects) commandgraph.Nodes { return commandNodes{} }),
	},
	{
		dir: "retry", number: 11, registry: retryRegistry, code: retryCode,
		variants: []variant{
			{name: "retry-node", runs: "runs-retry.json", graph: []runtime.Option{runtime.WithNodeRetry("charge", retryPolicy)}, retries: []int{2}},
			{name: "retry-type", runs: "runs-retry.json", graph: []runtime.Option{runtime.WithTypeRetry("charge", retryPolicy)}, retries: []int{2}},
			{runs: "runs-noretry.json", retries: []int{0, 0, 0}},
		},
		pkg: packageOf(retrygraph.New, retrygraph.FromRegistry, retrygraph.UpdateOf,
			func(fx *Effects) retrygraph.Nodes { return retryNodes{fx} }),
	},
}
