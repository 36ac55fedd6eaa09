package runtime

import (
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// WithThreadMeta gives the run's thread metadata: string pairs stored with
// the thread (unlike WithMeta, which only this run's nodes see), which
// ListThreads filters on. The pairs are merged into what the thread holds:
// each key is set to its value, a key given "" is removed, other keys stay.
// They are recorded with the run's first checkpoint write, so a refused
// run changes nothing. It needs a checkpointer that is a checkpoint.ThreadRecorder.
func WithThreadMeta(meta map[string]string) RunOption {
	return func(c *runConfig) { c.threadMeta = maps.Clone(meta) }
}

// checkThreadMeta refuses metadata a thread cannot hold.
func checkThreadMeta(meta map[string]string) error {
	keys := slices.Sorted(maps.Keys(meta))
	for _, k := range keys {
		if k == "" {
			return &OptionError{Msg: "runtime: WithThreadMeta: a key is empty; name every metadata key"}
		}
		if !utf8.ValidString(k) || !utf8.ValidString(meta[k]) {
			return &OptionError{Msg: fmt.Sprintf("runtime: WithThreadMeta: key %q or its value is not valid UTF-8", k)}
		}
	}
	return nil
}

// shortError cuts an error text to checkpoint.MaxOutcomeError bytes.
func shortError(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if len(s) <= checkpoint.MaxOutcomeError {
		return s
	}
	const ell = "…"
	cut := checkpoint.MaxOutcomeError - len(ell)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ell
}
