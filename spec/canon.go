package spec

import (
	"sort"
	"unicode/utf8"
)

// This file writes JSON in the canonical form Encode uses: two-space
// indentation, object members sorted by key, strings escaped one way, and
// number text either kept verbatim (Encode) or normalised to its value
// (JSONEqual).

// writer accumulates canonical JSON.
type writer struct {
	b []byte
	// normNumbers rewrites every number into normNumber form.
	normNumbers bool
}

func (w *writer) newline(level int) {
	w.b = append(w.b, '\n')
	for range level {
		w.b = append(w.b, "  "...)
	}
}

func (w *writer) str(s string) { w.b = appendQuoted(w.b, s) }

func (w *writer) number(text string) {
	if w.normNumbers {
		text = normNumber(text)
	}
	w.b = append(w.b, text...)
}

// raw writes the JSON text raw canonically at the given indentation level,
// or null when raw is not exactly one well-formed JSON value.
func (w *writer) raw(raw []byte, level int) {
	if checkJSON(raw) != nil {
		w.b = append(w.b, "null"...)
		return
	}
	p := newParser(raw, hardMaxDepth)
	w.value(p, level)
}

// value writes the value at p.pos, which must be well-formed.
func (w *writer) value(p *parser, level int) {
	switch p.peek() {
	case kindObject:
		type member struct {
			key string
			off int
		}
		var ms []member
		p.object(func(key string, _ int) {
			ms = append(ms, member{key, p.pos})
			p.skip()
		})
		if len(ms) == 0 {
			w.b = append(w.b, "{}"...)
			return
		}
		end := p.pos
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].key < ms[j].key })
		w.b = append(w.b, '{')
		for i, m := range ms {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.newline(level + 1)
			w.str(m.key)
			w.b = append(w.b, ": "...)
			p.pos = m.off
			w.value(p, level+1)
		}
		w.newline(level)
		w.b = append(w.b, '}')
		p.pos = end
	case kindArray:
		n := 0
		w.b = append(w.b, '[')
		p.array(func(int) {
			if n > 0 {
				w.b = append(w.b, ',')
			}
			n++
			w.newline(level + 1)
			w.value(p, level+1)
		})
		if n > 0 {
			w.newline(level)
		}
		w.b = append(w.b, ']')
	case kindString:
		w.str(p.str())
	case kindNumber:
		w.number(p.num())
	default:
		w.b = append(w.b, p.word()...)
	}
}

// canonical returns raw in canonical form, or the first problem in it.
func canonical(raw []byte, normNumbers bool) ([]byte, *syntaxError) {
	if err := checkJSON(raw); err != nil {
		return nil, err
	}
	w := &writer{normNumbers: normNumbers}
	w.value(newParser(raw, hardMaxDepth), 0)
	return w.b, nil
}

const hexDigits = "0123456789abcdef"

// appendQuoted appends s as a JSON string: '"' and '\' escaped, control
// characters as \b \f \n \r \t or \u00XX, U+2028 and U+2029 as \u2028 and
// \u2029 (so the text is also a valid JavaScript literal), everything else
// as UTF-8, HTML characters included. Invalid UTF-8 bytes become U+FFFD.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
