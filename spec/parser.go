package spec

import (
	"bytes"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// This file holds the JSON reader every part of the package uses: a pull
// parser over a byte slice that knows the offset of every value, the JSON
// path it is at, and refuses what RFC 8259 refuses plus invalid UTF-8, lone
// surrogate escapes, duplicate object keys and nesting past a limit. It
// never panics and allocates only the strings it returns and one key set per
// open object.

// jsonKind is the kind of a JSON value, told by its first byte.
type jsonKind uint8

const (
	kindInvalid jsonKind = iota // no value starts here (or the input ended)
	kindNull
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// String names the kind with its article, for messages: "an object".
func (k jsonKind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindArray:
		return "an array"
	case kindObject:
		return "an object"
	}
	return "not a JSON value"
}

// seg is one step of a JSON path: an object member or an array element.
type seg struct {
	key   string
	index int
	isKey bool
	// digest identifies a long key that a path abbreviates (key then holds
	// the abbreviation's prefix); see PathKey.
	digest string
	// text caches the path segment of a long key while the parser is in it.
	text string
}

// syntaxError is the first fatal problem a parser met.
type syntaxError struct {
	off  int
	path string
	msg  string
	hint string
}

// dupKey is a repeated member name in one object.
type dupKey struct {
	path     string // path of the repeated member
	key      string
	off      int // offset of the repeated key
	firstOff int // offset of the key's first occurrence
}

// parser reads JSON values from data, starting at pos.
type parser struct {
	data     []byte
	pos      int
	maxDepth int
	depth    int
	segs     []seg
	err      *syntaxError
	// onDup is told about every repeated key; the parser then skips the
	// repeated member's value. Nil makes a repeated key a syntax error.
	onDup func(dupKey)
	// onNumber, when set, is told about every number the parser reads,
	// with its offset and the path of the value.
	onNumber func(off int, text string)
}

func newParser(data []byte, maxDepth int) *parser {
	return &parser{data: data, maxDepth: maxDepth}
}

// failed reports whether the parser met a fatal error; every method is then
// a no-op.
func (p *parser) failed() bool { return p.err != nil }

func (p *parser) fail(off int, msg, hint string) {
	if p.err == nil {
		p.err = &syntaxError{off: off, path: p.path(), msg: msg, hint: hint}
	}
	p.pos = len(p.data)
}

// path returns the JSON path of the value being read.
func (p *parser) path() string {
	var b []byte
	for _, s := range p.segs {
		switch {
		case s.text != "":
			b = append(b, s.text...)
		case s.isKey:
			b = appendPathKey(b, s.key)
		default:
			b = appendPathIndex(b, s.index)
		}
	}
	return string(b)
}

func (p *parser) ws() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// peek skips whitespace and tells the kind of the next value without
// consuming it. After peek, p.pos is the value's offset.
func (p *parser) peek() jsonKind {
	p.ws()
	if p.err != nil || p.pos >= len(p.data) {
		return kindInvalid
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return kindObject
	case c == '[':
		return kindArray
	case c == '"':
		return kindString
	case c == '-' || c >= '0' && c <= '9':
		return kindNumber
	case c == 't' || c == 'f':
		return kindBool
	case c == 'n':
		return kindNull
	}
	return kindInvalid
}

// unexpected fails at p.pos, saying what was wanted there.
func (p *parser) unexpected(want string) {
	if p.err != nil {
		return
	}
	if p.pos >= len(p.data) {
		if len(bytes.TrimLeft(p.data, " \t\r\n")) == 0 {
			p.fail(p.pos, "malformed JSON: the document is empty", `a spec is one JSON object, e.g. {"nodes": [], "edges": []}`)
			return
		}
		p.fail(p.pos, "malformed JSON: unexpected end of document, expecting "+want,
			"the document is cut short: close every open string, array and object")
		return
	}
	c := p.data[p.pos]
	if c >= utf8.RuneSelf {
		r, size := utf8.DecodeRune(p.data[p.pos:])
		if r == utf8.RuneError && size == 1 {
			p.fail(p.pos, fmt.Sprintf("malformed JSON: invalid UTF-8 byte 0x%02x, expecting %s", c, want), "save the document as UTF-8")
			return
		}
		if p.pos == 0 && r == '\uFEFF' {
			p.fail(p.pos, "malformed JSON: the document starts with a byte order mark", "save the document as UTF-8 without a byte order mark")
			return
		}
		p.fail(p.pos, fmt.Sprintf("malformed JSON: invalid character %q, expecting %s", r, want),
			"fix the JSON syntax here; strings need double quotes")
		return
	}
	p.fail(p.pos, fmt.Sprintf("malformed JSON: invalid character %q, expecting %s", c, want),
		"fix the JSON syntax here; strings need double quotes and members are separated by commas")
}

// skip consumes one value of any kind, checking it fully.
func (p *parser) skip() {
	switch p.peek() {
	case kindObject:
		p.object(func(string, int) { p.skip() })
	case kindArray:
		p.array(func(int) { p.skip() })
	case kindString:
		p.str()
	case kindNumber:
		p.num()
	case kindBool, kindNull:
		p.word()
	default:
		p.unexpected("a value")
	}
}

func (p *parser) enter(open int) bool {
	p.depth++
	if p.depth > p.maxDepth {
		p.fail(open, fmt.Sprintf("nesting deeper than %d levels", p.maxDepth),
			"flatten the structure, or raise Limits.MaxDepth with spec.WithLimits")
		return false
	}
	return true
}

// object consumes the object at p.pos (peek said kindObject). For each
// member it calls each with the key and the key's offset, with p.pos at the
// member's value; each must consume the value. A repeated key is reported
// and its value skipped without calling each.
func (p *parser) object(each func(key string, keyOff int)) {
	open := p.pos
	p.pos++
	defer func() { p.depth-- }()
	if !p.enter(open) {
		return
	}
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return
	}
	var seen map[string]int
	for p.err == nil {
		p.ws()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			p.unexpected("a member name in double quotes")
			return
		}
		keyOff := p.pos
		key := p.str()
		p.ws()
		if p.err != nil {
			return
		}
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			p.unexpected("':' after the member name")
			return
		}
		p.pos++
		p.ws()
		sg := seg{key: key, isKey: true}
		if len(key) > maxPathKey {
			sg.text = longKey(key)
		}
		p.segs = append(p.segs, sg)
		if first, dup := seen[key]; dup {
			d := dupKey{path: p.path(), key: key, off: keyOff, firstOff: first}
			if p.onDup == nil {
				p.fail(keyOff, fmt.Sprintf("duplicate key %q", key), "remove one of the two members")
			} else {
				p.onDup(d)
				p.skip()
			}
		} else {
			if seen == nil {
				seen = make(map[string]int)
			}
			seen[key] = keyOff
			start := p.pos
			each(key, keyOff)
			if p.pos == start && p.err == nil {
				p.skip()
			}
		}
		p.segs = p.segs[:len(p.segs)-1]
		if p.err != nil {
			return
		}
		p.ws()
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == '}' {
			p.pos++
			return
		}
		p.unexpected("',' or '}' after an object member")
	}
}

// array consumes the array at p.pos (peek said kindArray), calling each with
// the index of every element, with p.pos at the element; each must consume it.
func (p *parser) array(each func(i int)) {
	open := p.pos
	p.pos++
	defer func() { p.depth-- }()
	if !p.enter(open) {
		return
	}
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return
	}
	for i := 0; p.err == nil; i++ {
		p.ws()
		p.segs = append(p.segs, seg{index: i})
		start := p.pos
		each(i)
		if p.pos == start && p.err == nil {
			p.skip()
		}
		p.segs = p.segs[:len(p.segs)-1]
		if p.err != nil {
			return
		}
		p.ws()
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			p.pos++
			return
		}
		p.unexpected("',' or ']' after an array element")
	}
}

// str consumes the string at p.pos (peek said kindString) and returns its
// value.
func (p *parser) str() string {
	start := p.pos
	i := start + 1
	for i < len(p.data) {
		c := p.data[i]
		if c == '"' {
			p.pos = i + 1
			return string(p.data[start+1 : i])
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	b := append([]byte(nil), p.data[start+1:i]...)
	for {
		if i >= len(p.data) {
			p.fail(start, "malformed JSON: the string is not closed", "add the closing double quote")
			return ""
		}
		c := p.data[i]
		switch {
		case c == '"':
			p.pos = i + 1
			return string(b)
		case c < 0x20:
			p.fail(i, fmt.Sprintf("malformed JSON: control character U+%04X in a string", c),
				`write it as an escape, e.g. \n for a line feed or \u0000 for NUL`)
			return ""
		case c == '\\':
			r, n, ok := p.escape(i)
			if !ok {
				return ""
			}
			b = utf8.AppendRune(b, r)
			i += n
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(p.data[i:])
			if r == utf8.RuneError && size == 1 {
				p.fail(i, fmt.Sprintf("malformed JSON: invalid UTF-8 byte 0x%02x in a string", c), "save the document as UTF-8")
				return ""
			}
			b = append(b, p.data[i:i+size]...)
			i += size
		}
	}
}

// escape decodes the escape sequence at data[i] (a backslash), returning the
// rune and the number of bytes it took.
func (p *parser) escape(i int) (rune, int, bool) {
	if i+1 >= len(p.data) {
		p.fail(i, "malformed JSON: the string is not closed", "add the closing double quote")
		return 0, 0, false
	}
	switch e := p.data[i+1]; e {
	case '"', '\\', '/':
		return rune(e), 2, true
	case 'b':
		return '\b', 2, true
	case 'f':
		return '\f', 2, true
	case 'n':
		return '\n', 2, true
	case 'r':
		return '\r', 2, true
	case 't':
		return '\t', 2, true
	case 'u':
		r, ok := hex4(p.data, i+2)
		if !ok {
			p.fail(i, `malformed JSON: invalid \u escape in a string`, `write \u followed by four hex digits`)
			return 0, 0, false
		}
		if !utf16.IsSurrogate(r) {
			return r, 6, true
		}
		if r < 0xDC00 && i+12 <= len(p.data) && p.data[i+6] == '\\' && p.data[i+7] == 'u' {
			if r2, ok := hex4(p.data, i+8); ok && r2 >= 0xDC00 && r2 < 0xE000 {
				return utf16.DecodeRune(r, r2), 12, true
			}
		}
		p.fail(i, fmt.Sprintf(`malformed JSON: lone surrogate \u%04x in a string`, r),
			`an escape in \uD800-\uDBFF must be followed by one in \uDC00-\uDFFF; write the character itself or a valid pair`)
		return 0, 0, false
	}
	end := i + 2
	if c := p.data[i+1]; c >= utf8.RuneSelf {
		_, size := utf8.DecodeRune(p.data[i+1:])
		end = i + 1 + size
	}
	p.fail(i, fmt.Sprintf("malformed JSON: invalid escape %q in a string", p.data[i:end]),
		`the escapes are \" \\ \/ \b \f \n \r \t and \u followed by four hex digits`)
	return 0, 0, false
}

func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// num consumes the number at p.pos (peek said kindNumber) and returns its
// text exactly as written.
func (p *parser) num() string {
	n := numberLen(p.data[p.pos:])
	if n <= 0 {
		p.fail(p.pos, "malformed JSON: invalid number",
			"a JSON number is digits with an optional minus sign, fraction and exponent, e.g. -1.5e3")
		return ""
	}
	start := p.pos
	p.pos += n
	if p.pos < len(p.data) {
		if c := p.data[p.pos]; c >= '0' && c <= '9' {
			p.fail(start, "malformed JSON: a number has a leading zero", "write the number without leading zeros")
			return ""
		}
	}
	if p.onNumber != nil {
		p.onNumber(start, string(p.data[start:p.pos]))
	}
	return string(p.data[start:p.pos])
}

// numberLen returns the length of the JSON number at the start of b, or 0
// when b does not start with one.
func numberLen(b []byte) int {
	i := 0
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if digits() == 0 {
		return 0
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return 0
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0
		}
	}
	return i
}

// validNumber reports whether s is exactly one JSON number.
func validNumber(s string) bool {
	return s != "" && numberLen([]byte(s)) == len(s)
}

// word consumes true, false or null at p.pos and returns it ("" on error).
func (p *parser) word() string {
	for _, w := range [...]string{"true", "false", "null"} {
		if bytes.HasPrefix(p.data[p.pos:], []byte(w)) {
			p.pos += len(w)
			return w
		}
	}
	p.fail(p.pos, "malformed JSON: invalid literal", "the JSON literals are true, false and null, in lower case; quote strings")
	return ""
}

// end checks that only whitespace follows the value just read.
func (p *parser) end() bool {
	p.ws()
	return p.err == nil && p.pos == len(p.data)
}

// checkJSON reports whether raw is exactly one well-formed JSON value (with
// optional surrounding whitespace), without duplicate keys and no deeper than
// hardMaxDepth. The error describes the first problem.
func checkJSON(raw []byte) *syntaxError {
	p := newParser(raw, hardMaxDepth)
	p.skip()
	if p.err == nil && !p.end() {
		p.fail(p.pos, "trailing data after the JSON value", "remove what follows the value")
	}
	return p.err
}
