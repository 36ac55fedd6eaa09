package spec

import (
	isuggest "github.com/ilmek-go/ilmek/internal/suggest"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The known members of each object of the document.
var (
	topFields       = []string{"name", "channels", "nodes", "edges"}
	channelFields   = []string{"reducer"}
	nodeFields      = []string{"id", "type", "config", "goto"}
	edgeFields      = []string{"from", "to", "when"}
	predicateFields = []string{"channel", "eq", "neq", "in", "gt", "lt", "truthy"}
)

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// suggest returns the candidate closest to s when it is close enough to be
// a likely misspelling, or "" (the rule is internal/suggest's, shared with
// the runtime and the command line).
func suggest(s string, candidates []string) string { return isuggest.Closest(s, candidates) }

// didYouMean returns `did you mean "x"? ` for the closest candidate, or "".
func didYouMean(s string, candidates []string) string { return isuggest.DidYouMean(s, candidates) }

// quote quotes a name from the document for a message, shortening very long
// ones so one diagnostic stays one readable line.
func quote(s string) string {
	const max = 64
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}

// list joins names as "a, b, c".
func list[T ~string](names []T) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = string(n)
	}
	return strings.Join(parts, ", ")
}
