package runtime

import (
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

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
