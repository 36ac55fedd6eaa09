// Package suggest finds the name a misspelt one most likely meant, for the
// "did you mean" hints of the document decoder, the runtime's answer checks
// and the command line, so that all of them suggest by one rule.
package suggest

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxSuggest bounds the work of one did-you-mean search: candidate lists
// longer than this, and strings longer than suggestLen bytes, get none.
const (
	maxSuggest = 1000
	suggestLen = 64
)

// Closest returns the candidate closest to s by edit distance when it is
// close enough to be a likely misspelling (case differences count as one
// edit), or "".
func Closest(s string, candidates []string) string {
	if len(candidates) > maxSuggest || len(s) > suggestLen || s == "" {
		return ""
	}
	best, bestD := "", 0
	for _, c := range candidates {
		if c == s || len(c) > suggestLen {
			continue
		}
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		if d == 0 {
			d = 1
		}
		limit := 1
		if utf8.RuneCountInString(c) > 4 {
			limit = 2
		}
		if d > limit && len(c) >= 2 && strings.HasPrefix(strings.ToLower(s), strings.ToLower(c)) {
			d = limit // "equals" for "eq": a known name with something appended
		}
		if d <= limit && d < len(c) && (best == "" || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// DidYouMean returns `did you mean "x"? ` for the closest candidate, or "".
func DidYouMean(s string, candidates []string) string {
	if c := Closest(s, candidates); c != "" {
		return "did you mean " + strconv.Quote(c) + "? "
	}
	return ""
}

// editDistance is the Damerau–Levenshtein distance (optimal string
// alignment) between a and b, by runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
