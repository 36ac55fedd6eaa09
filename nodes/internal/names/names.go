// Package names holds the text rules the node families share with the
// ilmek reference, whose implementations (TypeScript and .NET) measure and
// quote strings as JavaScript does: lengths in UTF-16 code units, quoting
// as JSON.stringify.
package names

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Slug lowercases raw, turns every run of characters outside [a-z0-9] into
// one hyphen, trims hyphens at both ends and keeps at most max characters.
// With trimCut, hyphens the cut leaves at the end are trimmed too.
func Slug(raw string, max int, trimCut bool) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(raw) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	s := b.String()
	if len(s) > max {
		s = s[:max]
		if trimCut {
			s = strings.TrimRight(s, "-")
		}
	}
	return s
}

// LenUTF16 is the length of s in UTF-16 code units, the length the
// reference's implementations check.
func LenUTF16(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// CutUTF16 keeps the first max UTF-16 code units of s; a character that
// would be split in two is left out whole.
func CutUTF16(s string, max int) string {
	n := 0
	for i, r := range s {
		w := 1
		if r > 0xFFFF {
			w = 2
		}
		if n+w > max {
			return s[:i]
		}
		n += w
	}
	return s
}

// Quote quotes s as JSON.stringify does: quotes, backslashes and control
// characters escaped, everything else as it is.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				h := strconv.FormatInt(int64(r), 16)
				if len(h) < 2 {
					b.WriteByte('0')
				}
				b.WriteString(h)
				continue
			}
			if r == utf8.RuneError {
				b.WriteString(`\ufffd`)
				continue
			}
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// List quotes each name and joins them with ", ", or says "none".
func List(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = Quote(n)
	}
	return strings.Join(q, ", ")
}
