package gen

import "strings"

// specWidth is the longest line specText writes an object or array on
// before it breaks the value over several lines.
const specWidth = 100

// jsonValue is a parsed JSON value that keeps the text of its strings and
// numbers exactly as the document's canonical encoding wrote them.
type jsonValue struct {
	kind  byte        // '{', '[' or 0 for a scalar
	raw   string      // a scalar's text
	keys  []string    // an object's member names, as JSON strings
	elems []jsonValue // an object's member values or an array's elements
}

// specText lays out the canonical encoding of a document (text) compactly:
// every object or array that fits on a line of specWidth is written on one
// line, the others one member per line, indented by two spaces; strings
// and numbers keep their canonical text, so the result decodes to the
// same document. Every line but the first and the last is indented, so no
// line starts a //go: directive. Text that does not parse is returned as
// it is.
func specText(text string) string {
	v, rest, ok := parseJSON(strings.TrimSpace(text))
	if !ok || strings.TrimSpace(rest) != "" || v.kind == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + len(text)/4)
	v.write(&b, "", true)
	b.WriteByte('\n')
	return b.String()
}

// write writes v at the given indent; a value that fits on the rest of its
// line is written on it, unless expand says to break it.
func (v *jsonValue) write(b *strings.Builder, indent string, expand bool) {
	if v.kind == 0 || len(v.elems) == 0 {
		b.WriteString(v.flat())
		return
	}
	if !expand && len(indent)+v.flatLen(specWidth-len(indent)) <= specWidth {
		b.WriteString(v.flat())
		return
	}
	inner := indent + "  "
	b.WriteByte(v.kind)
	for i := range v.elems {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n" + inner)
		if v.kind == '{' {
			b.WriteString(v.keys[i] + ": ")
		}
		v.elems[i].write(b, inner, false)
	}
	b.WriteString("\n" + indent)
	b.WriteByte(closing(v.kind))
}

// flat is v on one line, with a space after every comma and colon.
func (v *jsonValue) flat() string {
	if v.kind == 0 {
		return v.raw
	}
	var b strings.Builder
	b.WriteByte(v.kind)
	for i := range v.elems {
		if i > 0 {
			b.WriteString(", ")
		}
		if v.kind == '{' {
			b.WriteString(v.keys[i] + ": ")
		}
		b.WriteString(v.elems[i].flat())
	}
	b.WriteByte(closing(v.kind))
	return b.String()
}

// flatLen is the length of v.flat() when it is at most limit; past limit
// it is some length over limit, found without writing v (a document's
// node list would otherwise be written out whole to learn that it does
// not fit on a line, at every level of nesting).
func (v *jsonValue) flatLen(limit int) int {
	if v.kind == 0 {
		return len(v.raw)
	}
	n := 2
	for i := range v.elems {
		if i > 0 {
			n += 2
		}
		if v.kind == '{' {
			n += len(v.keys[i]) + 2
		}
		if n > limit {
			return n
		}
		n += v.elems[i].flatLen(limit - n)
		if n > limit {
			return n
		}
	}
	return n
}

func closing(open byte) byte {
	if open == '{' {
		return '}'
	}
	return ']'
}

// parseJSON parses the JSON value at the start of s and returns it with
// the rest of s.
func parseJSON(s string) (jsonValue, string, bool) {
	s = strings.TrimLeft(s, " \t\r\n")
	if s == "" {
		return jsonValue{}, s, false
	}
	switch s[0] {
	case '{', '[':
		v := jsonValue{kind: s[0]}
		s = strings.TrimLeft(s[1:], " \t\r\n")
		if s != "" && s[0] == closing(v.kind) {
			return v, s[1:], true
		}
		for {
			if v.kind == '{' {
				key, rest, ok := parseJSON(s)
				if !ok || key.kind != 0 || key.raw[0] != '"' {
					return v, s, false
				}
				rest = strings.TrimLeft(rest, " \t\r\n")
				if rest == "" || rest[0] != ':' {
					return v, s, false
				}
				v.keys = append(v.keys, key.raw)
				s = rest[1:]
			}
			e, rest, ok := parseJSON(s)
			if !ok {
				return v, s, false
			}
			v.elems = append(v.elems, e)
			rest = strings.TrimLeft(rest, " \t\r\n")
			switch {
			case rest == "":
				return v, rest, false
			case rest[0] == ',':
				s = rest[1:]
			case rest[0] == closing(v.kind):
				return v, rest[1:], true
			default:
				return v, rest, false
			}
		}
	case '"':
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '"':
				return jsonValue{raw: s[:i+1]}, s[i+1:], true
			}
		}
		return jsonValue{}, s, false
	}
	i := 0
	for i < len(s) && !strings.ContainsRune(",]} \t\r\n:", rune(s[i])) {
		i++
	}
	if i == 0 {
		return jsonValue{}, s, false
	}
	return jsonValue{raw: s[:i]}, s[i:], true
}
