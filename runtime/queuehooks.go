package runtime

import "github.com/ilmek-go/ilmek/runtime/internal/queuehook"

// What the runtime lends the queue's worker (internal/queuehook).
func init() {
	queuehook.KeepFirst = RunOption(runOption(func(c *runConfig) { c.keepFirst = true }))
	queuehook.NewRunID = newID
	queuehook.RunID = func(id string) any { return RunOption(runOption(func(c *runConfig) { c.runID = id })) }
}
