package cli

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// unifiedDiff returns the unified diff (three lines of context) that turns
// old into new, or nil when they are equal. It anchors on the lines that
// occur exactly once in each text (their longest common subsequence, as
// patience diff does) and grows each match outwards, so its cost is
// O(n log n) in the number of lines, whatever the document's size.
func unifiedDiff(oldName string, old []byte, newName string, new []byte) []byte {
	if bytes.Equal(old, new) {
		return nil
	}
	x, y := diffLines(old), diffLines(new)
	var out bytes.Buffer
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	const context = 3
	var (
		done  linePair // x[:done.x] and y[:done.y] are written
		chunk linePair // the first lines of the current hunk
		count linePair // the lines of each side in the current hunk
		text  []string // the current hunk's lines
	)
	for _, m := range uniqueMatches(x, y) {
		if m.x < done.x {
			continue // inside a match already grown
		}
		start, end := m, m
		for start.x > done.x && start.y > done.y && x[start.x-1] == y[start.y-1] {
			start.x--
			start.y--
		}
		for end.x < len(x) && end.y < len(y) && x[end.x] == y[end.y] {
			end.x++
			end.y++
		}
		for _, s := range x[done.x:start.x] {
			text = append(text, "-"+s)
			count.x++
		}
		for _, s := range y[done.y:start.y] {
			text = append(text, "+"+s)
			count.y++
		}
		atEOF := end.x >= len(x) && end.y >= len(y)
		if !atEOF && (end.x-start.x < context || (len(text) > 0 && end.x-start.x < 2*context)) {
			// Too few common lines to close the hunk: keep them in it.
			for _, s := range x[start.x:end.x] {
				text = append(text, " "+s)
				count.x++
				count.y++
			}
			done = end
			continue
		}
		if len(text) > 0 {
			n := min(end.x-start.x, context)
			for _, s := range x[start.x : start.x+n] {
				text = append(text, " "+s)
				count.x++
				count.y++
			}
			done = linePair{start.x + n, start.y + n}
			if count.x > 0 {
				chunk.x++ // 1-based; an empty side is 0,0
			}
			if count.y > 0 {
				chunk.y++
			}
			fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", chunk.x, count.x, chunk.y, count.y)
			for _, s := range text {
				out.WriteString(s)
			}
			count, text = linePair{}, text[:0]
		}
		if atEOF {
			break
		}
		chunk = linePair{end.x - context, end.y - context}
		for _, s := range x[chunk.x:end.x] {
			text = append(text, " "+s)
			count.x++
			count.y++
		}
		done = end
	}
	return out.Bytes()
}

// linePair is a line index in each of two texts.
type linePair struct{ x, y int }

// diffLines splits text into lines that keep their "\n"; a last line
// without one carries diff's marker for it.
func diffLines(text []byte) []string {
	l := strings.SplitAfter(string(text), "\n")
	if l[len(l)-1] == "" {
		return l[:len(l)-1]
	}
	l[len(l)-1] += "\n\\ No newline at end of file\n"
	return l
}

// uniqueMatches returns the longest increasing sequence of pairs (i, j)
// with x[i] == y[j] where the line occurs once in x and once in y, with
// the sentinels (0, 0) first and (len(x), len(y)) last.
func uniqueMatches(x, y []string) []linePair {
	// Count each line in x as 0, -1 (once) or -2 (more), and in y as 0, -4
	// or -8: a line unique in both sums to -5.
	m := map[string]int{}
	for _, s := range x {
		if c := m[s]; c > -2 {
			m[s] = c - 1
		}
	}
	for _, s := range y {
		if c := m[s]; c > -8 {
			m[s] = c - 4
		}
	}
	var xi, yi, inv []int
	for j, s := range y {
		if m[s] == -5 {
			m[s] = len(yi)
			yi = append(yi, j)
		}
	}
	for i, s := range x {
		if k, ok := m[s]; ok && k >= 0 {
			xi = append(xi, i)
			inv = append(inv, k)
		}
	}
	// The longest increasing subsequence of inv (patience sorting).
	n := len(inv)
	tails := make([]int, n)
	for i := range tails {
		tails[i] = n + 1
	}
	length := make([]int, n)
	longest := 0
	for i, v := range inv {
		k := sort.SearchInts(tails, v)
		tails[k] = v
		length[i] = k + 1
		longest = max(longest, k+1)
	}
	seq := make([]linePair, longest+2)
	seq[longest+1] = linePair{len(x), len(y)}
	k, last := longest, n
	for i := n - 1; i >= 0 && k > 0; i-- {
		if length[i] == k && inv[i] < last {
			seq[k] = linePair{xi[i], yi[inv[i]]}
			last = inv[i]
			k--
		}
	}
	return seq
}
