package spec

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// decodeWithin decodes doc and fails the test when that takes longer than d,
// which would mean work out of proportion to the input.
func decodeWithin(t *testing.T, d time.Duration, doc []byte, opts ...Option) (*Graph, Diagnostics) {
	t.Helper()
	start := time.Now()
	g, ds := Decode("hostile.json", doc, opts...)
	if el := time.Since(start); el > d && !testing.Short() && !raceEnabled {
		t.Errorf("Decode took %v on %d bytes", el, len(doc))
	}
	return g, ds
}

func wantError(t *testing.T, g *Graph, ds Diagnostics, msg string) {
	t.Helper()
	if g != nil {
		t.Fatalf("accepted")
	}
	for _, d := range ds {
		if d.Severity == SeverityError && strings.Contains(d.Message, msg) {
			return
		}
	}
	t.Fatalf("no error containing %q:\n%s", msg, dump(ds))
}

func TestHostileNesting(t *testing.T) {
	const n = 100000
	for name, doc := range map[string]string{
		"arrays at top":     strings.Repeat("[", n) + strings.Repeat("]", n),
		"objects at top":    strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n),
		"in config":         `{"nodes": [{"id": "a", "type": "t", "config": {"x": ` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}]}`,
		"unclosed":          `{"x": ` + strings.Repeat("[", n),
		"in an extra field": `{"x": ` + strings.Repeat(`{"a":`, n),
	} {
		t.Run(name, func(t *testing.T) {
			g, ds := decodeWithin(t, time.Second, []byte(doc))
			wantError(t, g, ds, "nesting deeper than 64 levels")
			if len(ds) != 1 {
				t.Errorf("want one diagnostic:\n%s", dump(ds))
			}
			// Asking for more depth than the parser's hard cap gets the cap.
			g, ds = decodeWithin(t, time.Second, []byte(doc), WithLimits(Limits{MaxDepth: math.MaxInt}))
			wantError(t, g, ds, "nesting deeper than 10000 levels")
		})
	}
}

func TestHostileSize(t *testing.T) {
	big := make([]byte, 10<<20)
	copy(big, `{"name": "`)
	for i := 10; i < len(big)-2; i++ {
		big[i] = 'x'
	}
	copy(big[len(big)-2:], `"}`)
	g, ds := decodeWithin(t, 100*time.Millisecond, big)
	wantError(t, g, ds, "the document is over the limit of 8388608 bytes")
	if len(ds) != 1 || ds[0].Pos.Line != 1 || ds[0].Pos.Col != 1 {
		t.Errorf("got:\n%s", dump(ds))
	}

	// Allowed by the limits, a big document decodes in proportion to its size.
	var b bytes.Buffer
	b.WriteString(`{"nodes": [`)
	for i := 0; b.Len() < 9<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id": "n`)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(`", "type": "t", "config": {"v": [1.5, "s", null, {"k": true}]}}`)
	}
	b.WriteString(`], "edges": [{"from": "__start__", "to": "__end__"}]}`)
	_, ds = decodeWithin(t, 10*time.Second, b.Bytes(), WithLimits(Limits{MaxBytes: 16 << 20}))
	if len(ds) == 0 {
		t.Errorf("no diagnostics for a document full of duplicate and unreachable nodes")
	}
}

// Many problems of one kind are all reported, in time linear in their number.
func TestHostileManyProblems(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"nodes": [`)
	const n = 20000
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id": "same", "type": "t"}`)
	}
	b.WriteString(`], "edges": [`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"from": "ghost` + strings.Repeat("x", i%50) + `", "to": "same"}`)
	}
	b.WriteString(`]}`)
	g, ds := decodeWithin(t, 5*time.Second, []byte(b.String()))
	wantError(t, g, ds, `duplicate node "same"`)
	if got := len(ds.Errors()); got != 2*n {
		t.Errorf("%d errors, want %d", got, 2*n)
	}
}

func TestHostileNumbers(t *testing.T) {
	digits := "0." + strings.Repeat("9", 100000) // fits float64: it rounds to 1
	doc := `{"channels": {"n": {}}, "nodes": [{"id": "a", "type": "t", "config": {"long": ` + digits + `, "exp": 1e-99999999999999999999}}],
"edges": [{"from": "__start__", "to": "a", "when": {"channel": "n", "gt": 1e400}}, {"from": "a", "to": "__end__", "when": {"channel": "n", "lt": -1E+400}}]}`
	g, ds := decodeWithin(t, time.Second, []byte(doc))
	if g == nil {
		t.Fatal(dump(ds))
	}
	if f := g.Edges[0].When.Value.Float(); !math.IsInf(f, 1) {
		t.Errorf("Float(1e400) = %v, want +Inf", f)
	}
	if f := g.Edges[1].When.Value.Float(); !math.IsInf(f, -1) {
		t.Errorf("Float(-1E+400) = %v, want -Inf", f)
	}
	if !bytes.Contains(g.Encode(), []byte(`"long": `+digits)) {
		t.Errorf("the long number lost its text")
	}
	checkRoundTrip(t, "numbers", []byte(doc), g, ds)
}

// TestConfigNumbersBeyondFloat64: a config number beyond float64 — an
// exponent of nine digits, five million digits — is refused by the decoder
// (and so by every entry point that decodes a document), at its path,
// quickly, with the long number shortened in the message.
func TestConfigNumbersBeyondFloat64(t *testing.T) {
	huge := strings.Repeat("9", 5_000_000)
	doc := `{"channels": {"n": {}}, "nodes": [{"id": "a", "type": "t", "config": {"exp": 1e999999999, "digits": [` + huge + `], "ok": 1.7976931348623157e308}}],
"edges": [{"from": "__start__", "to": "a", "when": {"channel": "n", "gt": 1e999999999}}]}`
	g, ds := decodeWithin(t, 5*time.Second, []byte(doc))
	if g != nil {
		t.Fatal("accepted config numbers beyond float64")
	}
	errs := ds.Errors()
	if len(errs) != 2 || errs[0].Path != "nodes[0].config.exp" || errs[0].Message != "1e999999999 does not fit float64" ||
		errs[1].Path != "nodes[0].config.digits[0]" || errs[1].Message != "99999999999999999999…9999999999 (5000000 characters) does not fit float64" {
		t.Fatalf("got\n%s", dump(ds))
	}
}

func TestHostileText(t *testing.T) {
	for name, c := range map[string]struct{ doc, msg string }{
		"invalid byte in a key":      {"{\"n\xffame\": 1}", "invalid UTF-8 byte 0xff in a string"},
		"invalid byte in config":     {"{\"nodes\": [{\"id\": \"a\", \"type\": \"t\", \"config\": {\"k\": \"\xc3\"}}]}", "invalid UTF-8 byte 0xc3 in a string"},
		"overlong encoding":          {"{\"name\": \"\xc0\xaf\"}", "invalid UTF-8 byte 0xc0"},
		"surrogate encoded in UTF-8": {"{\"name\": \"\xed\xa0\x80\"}", "invalid UTF-8 byte 0xed"},
		"truncated rune at the end":  {"{\"name\": \"\xe2\x82", "invalid UTF-8 byte 0xe2"},
		"invalid byte outside":       {"{\"name\": 1 \x80}", "invalid UTF-8 byte 0x80"},
		"high surrogate alone":       {`{"name": "\ud83d"}`, `lone surrogate \ud83d`},
		"high then not low":          {`{"name": "\ud83d\u0041"}`, `lone surrogate \ud83d`},
		"high then high":             {`{"name": "\ud83d\ud83d\ude00"}`, `lone surrogate \ud83d`},
		"low alone":                  {`{"name": "\ude00"}`, `lone surrogate \ude00`},
		"high at the very end":       {`{"name": "\ud83d`, `lone surrogate \ud83d`},
		"NUL byte raw":               {"{\"name\": \"a\x00b\"}", "control character U+0000"},
		"NUL outside a string":       {"{\"name\": \"a\"\x00}", `invalid character '\x00'`},
		"escape at the very end":     {`{"name": "\`, "the string is not closed"},
		"escape of a UTF-8 rune":     {`{"name": "\é"}`, `invalid escape "\\é"`},
	} {
		t.Run(name, func(t *testing.T) {
			g, ds := Decode("t.json", []byte(c.doc))
			wantError(t, g, ds, c.msg)
		})
	}
	g, ds := Decode("t.json", []byte(`{"name": "\ud83d\ude00 \u00e9 \uFFFF \u2028 \u0000", "edges": [{"from": "__start__", "to": "__end__"}]}`))
	if g == nil || g.Name != "😀 é \uffff \u2028 \x00" {
		t.Errorf("valid escapes: %q\n%s", g.Name, dump(ds))
	}
}

// A name of a megabyte does not make a megabyte message.
func TestLongNamesAreShortened(t *testing.T) {
	long := strings.Repeat("é", 1<<19)
	doc := `{"nodes": [{"id": "a", "type": "t"}], "edges": [{"from": "__start__", "to": "a"}, {"from": "a", "to": "` + long + `"}]}`
	_, ds := Decode("l.json", []byte(doc))
	if len(ds) != 1 || len(ds[0].Message) > 200 || !strings.Contains(ds[0].Message, "unknown node") {
		t.Errorf("got %d diagnostics, the first %d bytes long", len(ds), len(ds[0].Message))
	}
}
