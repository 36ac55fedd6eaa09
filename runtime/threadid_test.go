package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/spec"
)

// touchCounter is a checkpointer that counts every call, to prove a bad
// thread id is refused before the store is touched.
type touchCounter struct {
	runtime.Checkpointer
	calls int
}

func (c *touchCounter) Get(ctx context.Context, thread, id string) (*runtime.Checkpoint, error) {
	c.calls++
	return c.Checkpointer.Get(ctx, thread, id)
}

func (c *touchCounter) Lease(ctx context.Context, thread string, o checkpoint.LeaseOptions) (checkpoint.Lease, error) {
	c.calls++
	return c.Checkpointer.Lease(ctx, thread, o)
}

func (c *touchCounter) GetJournal(ctx context.Context, thread, task string) ([]checkpoint.JournalEntry, error) {
	c.calls++
	return c.Checkpointer.GetJournal(ctx, thread, task)
}

// TestCheckThreadID: every hostile id is refused with an error matching
// ErrThreadID that names the offending character with the id quoted in
// ASCII, by CheckThreadID and by every entry point that takes an id,
// before the store is touched; good ids pass.
func TestCheckThreadID(t *testing.T) {
	cases := []struct {
		name string
		id   string
		want string // a part of the refusal; "" for a good id
	}{
		{"plain", "order-42", ""},
		{"unicode letters", "sipariş-42 ünlü", ""},
		{"space and punctuation", "a b.c_d:e@f+g=h~i", ""},
		{"200 bytes", strings.Repeat("a", 200), ""},
		{"replacement character written out", "a\uFFFDb", ""},
		{"empty", "", "is empty"},
		{"201 bytes", strings.Repeat("a", 201), "is 201 bytes, over the 200 allowed"},
		{"100 two-byte runes", strings.Repeat("ş", 101), "is 202 bytes, over the 200 allowed"},
		{"NUL", "a\x00b", "U+0000, a control character at byte 1"},
		{"ESC", "a\x1b[31mred", "U+001B, a control character"},
		{"DEL", "a\x7f", "U+007F, a control character"},
		{"CR", "a\rb", "U+000D, a control character"},
		{"LF", "a\nSet-Cookie: x", "U+000A, a control character"},
		{"tab", "a\tb", "U+0009, a control character"},
		{"C1", "a\u0085b", "U+0085, a control character"},
		{"RLO", "invoice\u202Egpj.exe", "U+202E, a bidirectional override"},
		{"LRE", "\u202Aa", "U+202A, a bidirectional override"},
		{"LRI", "a\u2066b", "U+2066, a bidirectional override"},
		{"PDI", "a\u2069", "U+2069, a bidirectional override"},
		{"zero-width joiner", "a\u200Db", "U+200D, which is not a printable character"},
		{"no-break space", "a\u00A0b", "U+00A0, which is not a printable character"},
		{"invalid UTF-8", "a\xffb", "is not valid UTF-8 at byte 1"},
		{"slash", "a/b", `'/', which changes the meaning of a URL`},
		{"question mark", "a?b", `'?'`},
		{"hash", "a#b", `'#'`},
		{"percent", "a%2Fb", `'%'`},
	}
	ctx := context.Background()
	g := mustCompile(t, runtime.NewBuilder("ids").Channel("x", "").
		Node("a", func(*runtime.Ctx, runtime.Values) (runtime.Values, error) { return nil, nil }).Edge(spec.Start, "a"))
	vs, err := runtime.NewVersions(g)
	if err != nil {
		t.Fatal(err)
	}
	cp := &touchCounter{Checkpointer: checkpoint.NewMemory()}
	for _, c := range cases {
		entries := map[string]func() error{
			"CheckThreadID": func() error { return runtime.CheckThreadID(c.id) },
			"Invoke": func() error {
				_, err := g.Thread(cp, c.id).Invoke(ctx, nil)
				return err
			},
			"Resume": func() error {
				_, err := g.Thread(cp, c.id).Resume(ctx, runtime.Answer(true))
				return err
			},
			"Stream": func() error {
				for _, err := range g.Thread(cp, c.id).Stream(ctx, nil) {
					if err != nil {
						return err
					}
				}
				return nil
			},
			"Thread.State": func() error {
				_, err := g.Thread(cp, c.id).State(ctx)
				return err
			},
			"Thread.Pending": func() error {
				_, err := g.Thread(cp, c.id).Pending(ctx)
				return err
			},
			"Versions.For": func() error {
				_, err := vs.For(ctx, cp, c.id)
				return err
			},
			"Migrate": func() error {
				_, err := runtime.Migrate(ctx, cp, c.id, g, g, func(s runtime.Values, p []string) (runtime.Values, []string, error) { return s, p, nil }, true)
				return err
			},
		}
		for entry, call := range entries {
			before := cp.calls
			err := call()
			if c.want == "" {
				if errors.Is(err, runtime.ErrThreadID) {
					t.Errorf("%s: %s refused a good id: %v", c.name, entry, err)
				}
				continue
			}
			if !errors.Is(err, runtime.ErrThreadID) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %s: %v; want ErrThreadID saying %q", c.name, entry, err, c.want)
				continue
			}
			if cp.calls != before {
				t.Errorf("%s: %s touched the store before refusing the id", c.name, entry)
			}
			msg := err.Error()
			for _, r := range msg {
				if r < 0x20 || r == 0x7f || (r >= 0x80 && r != '…') {
					t.Errorf("%s: %s: the message holds %U: %q", c.name, entry, r, msg)
					break
				}
			}
			if len(msg) > 300 {
				t.Errorf("%s: %s: the message is %d bytes long", c.name, entry, len(msg))
			}
		}
	}
}
