package gen

import (
	"encoding/json"
	"strings"
)

// specWidth is the longest line specText writes an object or array on
// before it breaks the value over several lines.
const specWidth = 100

// specText lays out the canonical encoding of a document (text) compactly:
// every object or array that fits on a line of specWidth is written on one
// line, the others one member per line, indented by two spaces; strings
// and numbers keep their canonical text, so the result decodes to the
// same document. Every line but the first and the last is indented, so no
// line starts a //go: directive. Text that does not parse is returned as
// it is.
func specText(text string) string {
	t := strings.TrimSpace(text)
	if !json.Valid([]byte(t)) || (t[0] != '{' && t[0] != '[') {
		return text
	}
	l := &specLayout{s: t}
	l.b.Grow(len(t) + len(t)/4)
	l.write(0, "", true)
	l.b.WriteByte('\n')
	return l.b.String()
}

func closing(open byte) byte {
	if open == '{' {
		return '}'
	}
	return ']'
}

// specLayout writes the layout of specText from the document's text as it
// reads it, without a tree of the document: a value's flat length is
// counted from its text, only as far as the line width.
type specLayout struct {
	s string
	b strings.Builder
}

// skip returns i moved past JSON whitespace.
func (l *specLayout) skip(i int) int {
	for i < len(l.s) && (l.s[i] == ' ' || l.s[i] == '\t' || l.s[i] == '\r' || l.s[i] == '\n') {
		i++
	}
	return i
}

// scalarEnd returns the end of the string, number or literal at i.
func (l *specLayout) scalarEnd(i int) int {
	if l.s[i] == '"' {
		for j := i + 1; j < len(l.s); j++ {
			switch l.s[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(l.s)
	}
	j := i
	for j < len(l.s) && !strings.ContainsRune(",]} \t\r\n:", rune(l.s[j])) {
		j++
	}
	return j
}

// members calls each for every member of the object or array at i (the
// start of its name for an object, of its value for an array) until each
// returns false; each returns the end of the member's value. members
// returns the end of the object or array, or -1 when each stopped.
func (l *specLayout) members(i int, each func(first bool, j int) int) int {
	j := l.skip(i + 1)
	if l.s[j] == closing(l.s[i]) {
		return j + 1
	}
	for first := true; ; first = false {
		end := each(first, j)
		if end < 0 {
			return -1
		}
		j = l.skip(end)
		if l.s[j] != ',' {
			return j + 1
		}
		j = l.skip(j + 1)
	}
}

// value returns the start of the value of the object member whose name
// starts at j, and the name.
func (l *specLayout) value(j int) (int, string) {
	ke := l.scalarEnd(j)
	return l.skip(l.skip(ke) + 1), l.s[j:ke]
}

// flatFits returns the length of the value at i on one line (with a space
// after every comma and colon) and its end when the length is at most
// limit; past limit it returns a length over limit and end -1.
func (l *specLayout) flatFits(i, limit int) (n, end int) {
	c := l.s[i]
	if c != '{' && c != '[' {
		e := l.scalarEnd(i)
		return e - i, e
	}
	n = 2
	end = l.members(i, func(first bool, j int) int {
		if !first {
			n += 2
		}
		if c == '{' {
			var key string
			j, key = l.value(j)
			n += len(key) + 2
		}
		if n > limit {
			return -1
		}
		m, e := l.flatFits(j, limit-n)
		n += m
		if n > limit {
			return -1
		}
		return e
	})
	return n, end
}

// flat writes the value at i on one line and returns its end.
func (l *specLayout) flat(i int) int {
	c := l.s[i]
	if c != '{' && c != '[' {
		e := l.scalarEnd(i)
		l.b.WriteString(l.s[i:e])
		return e
	}
	l.b.WriteByte(c)
	end := l.members(i, func(first bool, j int) int {
		if !first {
			l.b.WriteString(", ")
		}
		if c == '{' {
			var key string
			j, key = l.value(j)
			l.b.WriteString(key + ": ")
		}
		return l.flat(j)
	})
	l.b.WriteByte(closing(c))
	return end
}

// write writes the value at i at the given indent and returns its end: a
// value that fits on the rest of its line is written on it, unless expand
// says to break it; the others one member per line, indented by two
// spaces.
func (l *specLayout) write(i int, indent string, expand bool) int {
	c := l.s[i]
	if c != '{' && c != '[' {
		return l.flat(i)
	}
	if j := l.skip(i + 1); l.s[j] == closing(c) {
		return l.flat(i)
	}
	if n, _ := l.flatFits(i, specWidth-len(indent)); !expand && len(indent)+n <= specWidth {
		return l.flat(i)
	}
	inner := indent + "  "
	l.b.WriteByte(c)
	end := l.members(i, func(first bool, j int) int {
		if !first {
			l.b.WriteByte(',')
		}
		l.b.WriteString("\n" + inner)
		if c == '{' {
			var key string
			j, key = l.value(j)
			l.b.WriteString(key + ": ")
		}
		return l.write(j, inner, false)
	})
	l.b.WriteString("\n" + indent)
	l.b.WriteByte(closing(c))
	return end
}
