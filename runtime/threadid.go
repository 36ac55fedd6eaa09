package runtime

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxThreadIDBytes is the longest thread id, in bytes of its UTF-8.
const MaxThreadIDBytes = 200

// ErrThreadID matches (errors.Is) every refusal of a thread id by
// CheckThreadID.
var ErrThreadID = errors.New("runtime: invalid thread id")

// CheckThreadID reports whether id may name a thread, and why not: a
// thread id is 1 to MaxThreadIDBytes bytes of valid UTF-8 whose every
// character is printable (unicode.IsPrint: letters, marks, numbers,
// punctuation, symbols and the ASCII space), so none of the control
// characters (NUL, ESC, DEL, CR, LF, the C1 range), no bidirectional
// override or isolate (U+202A–U+202E, U+2066–U+2069) nor any other
// invisible format character, and none of '/', '?', '#', '%', which
// would change the meaning of a URL that holds the id. Ids are matched as
// written: no normalisation, no case folding.
//
// Every runtime entry point that takes a thread id (Thread, ThreadState,
// Thread.Pending, Versions.For, Migrate) checks it before it touches
// the store, and the server answers 400 for a bad one, so a thread id is
// always safe to put in a header, a log line, a URL path segment or a
// terminal. The error matches ErrThreadID and names the id (quoted, and
// shortened when long) and the offending character.
func CheckThreadID(id string) error {
	switch {
	case id == "":
		return &threadIDError{id: id, why: "is empty; name the thread"}
	case len(id) > MaxThreadIDBytes:
		return &threadIDError{id: id, why: fmt.Sprintf("is %d bytes, over the %d allowed", len(id), MaxThreadIDBytes)}
	}
	for i, r := range id {
		var what string
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(id[i:], "\uFFFD"):
			return &threadIDError{id: id, why: fmt.Sprintf("is not valid UTF-8 at byte %d", i)}
		case r == '/' || r == '?' || r == '#' || r == '%':
			what = fmt.Sprintf("%q, which changes the meaning of a URL", r)
		case unicode.IsControl(r):
			what = fmt.Sprintf("%U, a control character", r)
		case 0x202A <= r && r <= 0x202E || 0x2066 <= r && r <= 0x2069:
			what = fmt.Sprintf("%U, a bidirectional override", r)
		case !unicode.IsPrint(r):
			what = fmt.Sprintf("%U, which is not a printable character", r)
		default:
			continue
		}
		return &threadIDError{id: id, why: fmt.Sprintf("holds %s at byte %d", what, i)}
	}
	return nil
}

// threadIDError is a refusal of CheckThreadID.
type threadIDError struct {
	id  string
	why string
}

// Error names the id and what is wrong with it, in one sentence; the
// rule (at most 200 bytes of printable UTF-8 without / ? # or %) is
// CheckThreadID's doc.
func (e *threadIDError) Error() string {
	return "runtime: thread id " + quoteID(e.id) + " " + e.why
}

// Is makes the error match ErrThreadID.
func (e *threadIDError) Is(target error) bool { return target == ErrThreadID }

// quoteID quotes an id for a message with every non-ASCII or unprintable
// character escaped, shortened (…) when the quoted form passes 64 bytes.
func quoteID(id string) string {
	const max = 64
	q := strconv.QuoteToASCII(id)
	if len(q) <= max {
		return q
	}
	end := 0
	for i := range id {
		if len(strconv.QuoteToASCII(id[:i])) > max {
			break
		}
		end = i
	}
	return strconv.QuoteToASCII(id[:end]) + "…"
}
