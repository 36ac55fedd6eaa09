package gen

import (
	"fmt"
	"go/token"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// initialisms are the words GoName writes in capitals: the list of golint
// (and of the Go wiki's CodeReviewComments) plus LLM.
var initialisms = map[string]bool{
	"acl": true, "api": true, "ascii": true, "cpu": true, "css": true, "dns": true,
	"eof": true, "guid": true, "html": true, "http": true, "https": true, "id": true,
	"ip": true, "json": true, "lhs": true, "llm": true, "qps": true, "ram": true,
	"rhs": true, "rpc": true, "sla": true, "smtp": true, "sql": true, "ssh": true,
	"tcp": true, "tls": true, "ttl": true, "udp": true, "ui": true, "uid": true,
	"uuid": true, "uri": true, "url": true, "utf8": true, "vm": true, "xml": true,
	"xmpp": true, "xsrf": true, "xss": true,
}

// GoName converts a name from the document (a channel, a node id, a node
// type, a config key) into the exported Go identifier the generated code
// uses for it. It is the only place where document text becomes part of an
// identifier.
//
// The name is split into words at every character that is not a letter or a
// digit (so "http_call", "http-call" and "http call" are the same words), and
// at case changes inside a word ("userId" is "user" "Id", "HTTPServer" is
// "HTTP" "Server"). A word that is a Go initialism (ID, HTTP, URL, JSON, LLM;
// the full list is golint's plus LLM) is written in capitals; any other word
// gets an upper-case first letter and keeps the rest as written. The words
// are joined without separator: "llm" → "LLM", "http_call" → "HTTPCall",
// "user_id" → "UserID", "support-agent" → "SupportAgent", "v2" → "V2".
//
// GoName returns an error, never a different name, when the result is not
// usable: empty (the name has no letter or digit), starting with a digit
// ("1st"), or starting with a letter that has no upper case (so the
// identifier would not be exported). Different names can convert to the same
// identifier ("user_id" and "userID"); the generator reports that as a
// collision naming both, and never renames one of them.
func GoName(name string) (string, error) {
	id := joinWords(name)
	r, _ := utf8.DecodeRuneInString(id)
	switch {
	case id == "":
		return "", fmt.Errorf("%s has no letter or digit, so it has no Go name", quote(name))
	case unicode.IsDigit(r):
		return "", fmt.Errorf("%s converts to %s, which starts with a digit and is not a Go identifier", quote(name), id)
	case !unicode.IsUpper(r):
		return "", fmt.Errorf("%s converts to %s, which does not start with an upper-case letter, so Go would not export it", quote(name), id)
	case !token.IsIdentifier(id):
		return "", fmt.Errorf("%s converts to %s, which is not a Go identifier", quote(name), id)
	}
	return id, nil
}

// GoSuffix converts a name the way GoName does, for identifiers that always
// follow a fixed exported prefix (node id "1st" is constant Node1st): the
// result may start with a digit or a letter without upper case, and is an
// error only when the name has no letter or digit.
func GoSuffix(prefix, name string) (string, error) {
	id := joinWords(name)
	if id == "" {
		return "", fmt.Errorf("%s has no letter or digit, so it has no Go name", quote(name))
	}
	if !token.IsIdentifier(prefix + id) {
		return "", fmt.Errorf("%s converts to %s, which is not a Go identifier", quote(name), prefix+id)
	}
	return prefix + id, nil
}

// joinWords joins the words of name as GoName describes, without checking
// that the result is an identifier.
func joinWords(name string) string {
	var b strings.Builder
	for _, w := range words(name) {
		lw := strings.ToLower(w)
		if initialisms[lw] {
			b.WriteString(strings.ToUpper(w))
			continue
		}
		r, size := utf8.DecodeRuneInString(w)
		b.WriteRune(unicode.ToUpper(r))
		b.WriteString(w[size:])
	}
	return b.String()
}

// words splits s into the words GoName joins.
func words(s string) []string {
	var out []string
	rs := []rune(s)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, string(rs[start:end]))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		switch {
		case unicode.IsLower(prev) && unicode.IsUpper(r):
			// "userId": a lower-case letter followed by an upper-case one.
			flush(i)
			start = i
		case unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			// "HTTPServer": the last capital of a run starts the next word.
			flush(i)
			start = i
		}
	}
	flush(len(rs))
	return out
}

// quote writes a document string for a message: Go-quoted, so control
// characters and line breaks never reach a terminal or a comment raw.
func quote(s string) string { return fmt.Sprintf("%q", s) }

// flagName writes a name or type for a command line shown in a hint
// (--type NAME=GOTYPE): as it is when every rune is printable and none is
// a space or a quote, else Go-quoted, so document text never reaches a
// terminal raw.
func flagName(s string) string {
	for _, r := range s {
		if !strconv.IsPrint(r) || r == ' ' || r == '"' || r == '\\' || r == '\'' || r == '`' {
			return quote(s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}

// CheckPackageName reports why name cannot be the name of the generated
// package: not an identifier, a keyword, a predeclared identifier, or the
// blank identifier.
func CheckPackageName(name string) error {
	switch {
	case !token.IsIdentifier(name):
		return fmt.Errorf("package name %s is not a Go identifier", quote(name))
	case token.IsKeyword(name):
		return fmt.Errorf("package name %s is a Go keyword", quote(name))
	case predeclared[name]:
		return fmt.Errorf("package name %s is a predeclared Go identifier", quote(name))
	case name == "_" || name == "main" || name == "init":
		return fmt.Errorf("package name %s cannot be imported without an alias (it names no value a program can use); choose another with -p", quote(name))
	}
	return nil
}

// predeclared are Go's predeclared identifiers (types, constants, zero
// value and builtin functions).
var predeclared = map[string]bool{
	"any": true, "bool": true, "byte": true, "comparable": true, "complex64": true,
	"complex128": true, "error": true, "float32": true, "float64": true, "int": true,
	"int8": true, "int16": true, "int32": true, "int64": true, "rune": true,
	"string": true, "uint": true, "uint8": true, "uint16": true, "uint32": true,
	"uint64": true, "uintptr": true, "true": true, "false": true, "iota": true,
	"nil": true, "append": true, "cap": true, "clear": true, "close": true,
	"complex": true, "copy": true, "delete": true, "imag": true, "len": true,
	"make": true, "max": true, "min": true, "new": true, "panic": true,
	"print": true, "println": true, "real": true, "recover": true,
}

// scope is one namespace of generated identifiers (the package block, the
// fields and methods of State, of Update, the methods of Nodes, the fields
// of one config struct). Every identifier it hands out is owned by one
// origin; a second origin asking for the same identifier is a collision.
type scope struct {
	what  string // "package", "State", ... for messages
	names map[string]origin
}

// origin is what an identifier was made for: a generated name (path "") or
// the document element at path.
type origin struct {
	desc string // e.g. `node "agent"` or "the generated type State"
	path string // JSON path, "" for generated names
}

func newScope(what string, reserved ...string) *scope {
	s := &scope{what: what, names: map[string]origin{}}
	for _, r := range reserved {
		s.names[r] = origin{desc: "the generated " + r}
	}
	return s
}

// claim records id for o and returns the origin that already holds it, if
// any.
func (s *scope) claim(id string, o origin) (origin, bool) {
	if prev, ok := s.names[id]; ok {
		return prev, true
	}
	s.names[id] = o
	return origin{}, false
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
