package skills

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFrontmatterRefusals(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       Code
	}{
		{"empty document", "", MissingFrontmatter},
		{"only an opening fence", "---", UnterminatedFrontmatter},
		{"fence not first", "\n---\nname: x\n---\n", MissingFrontmatter},
		{"only a BOM", "\uFEFF", MissingFrontmatter},
		{"unterminated flow sequence", "---\nx: [a, b\n---\n", BadStructure},
		{"unterminated double quote", "---\nx: \"abc\n---\n", BadStructure},
		{"unterminated single quote", "---\nx: 'abc\n---\n", BadStructure},
		{"text after a closing quote", "---\nx: \"a\" b\n---\n", BadStructure},
		{"top-level sequence", "---\n- a\n---\n", BadStructure},
		{"top-level scalar", "---\njust text\n---\n", BadStructure},
		{"alias", "---\na: &r x\nx: *r\n---\n", Unsupported},
		{"anchor", "---\nx: &ref y\n---\n", Unsupported},
		{"tag", "---\nx: !!str y\n---\n", Unsupported},
		{"flow mapping", "---\nx: {a: b}\n---\n", Unsupported},
		{"sequence of mappings", "---\nx:\n  - k: v\n---\n", Unsupported},
		{"nested sequence", "---\nx:\n  -\n    - y\n---\n", Unsupported},
		{"duplicate key", "---\nconstructor: a\nconstructor: b\n---\n", DuplicateKey},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseFrontmatter(c.text)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want code %s", err, c.want)
			}
		})
	}
}

func TestFrontmatterValues(t *testing.T) {
	for _, c := range []struct {
		name, text string
		data       map[string]any
		body       string
	}{
		{"dots close", "---\nname: x\n...\nbody", map[string]any{"name": "x"}, "body"},
		{"empty block", "---\n---\n\n\nbody", map[string]any{}, "body"},
		{"comments", "---\n# c\n\nname: x # trailing\n  # indented comment\n---\n", map[string]any{"name": "x"}, ""},
		{"quoted sequence item", "---\nx:\n  - \"k: v\"\n---\n", map[string]any{"x": []string{"k: v"}}, ""},
		{"quoted keys", "---\n\"a key\": 1\n'b': 2\n---\n", map[string]any{"a key": "1", "b": "2"}, ""},
		{"escapes", "---\nx: \"tab\\tnl\\nbs\\\\q\\\"\"\ny: 'a''b'\n---\n", map[string]any{"x": "tab\tnl\nbs\\q\"", "y": "a'b"}, ""},
		{"quoted with comment", "---\nx: \"v\" # note\n---\n", map[string]any{"x": "v"}, ""},
		{"hash inside a value", "---\nx: C#\n---\n", map[string]any{"x": "C#"}, ""},
		{"scalars stay text", "---\nv: 1.2\nb: true\nn: null\n---\n", map[string]any{"v": "1.2", "b": "true", "n": "null"}, ""},
		{"chomping", "---\nclip: |\n  a\n  b\n\n\nstrip: |-\n  a\n\nkeep: |+\n  a\n\n\nfold: >\n  x\n  y\nempty: |\n---\n",
			map[string]any{"clip": "a\nb\n", "strip": "a", "keep": "a\n\n\n", "fold": "x y\n", "empty": ""}, ""},
		{"nested block scalar", "---\nm:\n  lit: |\n    deep\n  next: v\n---\n", map[string]any{"m": map[string]any{"lit": "deep\n", "next": "v"}}, ""},
		{"flow sequences", "---\na: []\nb: [x, y]\n---\n", map[string]any{"a": []string{}, "b": []string{"x", "y"}}, ""},
		{"CR line ends", "---\rname: x\r---\rbody", map[string]any{"name": "x"}, "body"},
		{"CRLF and BOM", "\uFEFF---\r\nname: x\r\n---\r\n\r\nbody\r\nmore", map[string]any{"name": "x"}, "body\nmore"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fm, err := ParseFrontmatter(c.text)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.data, fm.Data); d != "" {
				t.Errorf("data (-want +got):\n%s", d)
			}
			if fm.Body != c.body {
				t.Errorf("body = %q, want %q", fm.Body, c.body)
			}
		})
	}
}

// Where a YAML parser and the reference's reader differ on unusual blocks
// (conformance/README.md lists these).
func TestFrontmatterDivergences(t *testing.T) {
	if _, err := ParseFrontmatter("---\nx: \"a\\/b\"\n---\n"); !errors.Is(err, BadStructure) {
		t.Errorf(`"\/" escape: err = %v, want %s (the reference reads "/")`, err, BadStructure)
	}
	fm, err := ParseFrontmatter("---\nx:\n  - a\n    - b\n---\n")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]any{"x": []string{"a - b"}}, fm.Data); d != "" {
		t.Errorf("over-indented item (the reference refuses it with bad_indentation) (-want +got):\n%s", d)
	}
}
