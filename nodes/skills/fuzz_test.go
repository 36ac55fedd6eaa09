package skills

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/nodes/internal/names"
)

// FuzzParse: a SKILL.md from anywhere (a downloaded skill is untrusted
// text) never panics the reader; it is refused with one of the codes, or
// read into a skill that keeps the format's rules.
func FuzzParse(f *testing.F) {
	for _, file := range []string{"pdf/SKILL.md", "brand-voice/SKILL.md"} {
		data, err := os.ReadFile("../../conformance/testdata/upstream/skills/" + file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	for _, s := range []string{
		"", "---", "---\n---\n", "---\nname: ok\ndescription: d\n---\nbody",
		"---\nx: &a [1]\ny: *a\n---\n", "---\nx: {a: b}\n---\n", "---\nx:\n  - k: v\n---\n",
		"---\nname: ok\ndescription: d\nmetadata:\n  a: 1\nallowed-tools: [a, b]\n---\n",
		"\uFEFF---\r\nname: ok\r\ndescription: >-\r\n  folded\r\n  text\r\n...\r\n",
	} {
		f.Add(s)
	}
	known := map[Code]bool{MissingFrontmatter: true, UnterminatedFrontmatter: true, BadIndentation: true, BadStructure: true,
		DuplicateKey: true, Unsupported: true, InvalidName: true, NameMismatch: true, InvalidDescription: true, InvalidField: true}
	f.Fuzz(func(t *testing.T, md string) {
		s, err := Parse(md, ParseOptions{})
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || !known[pe.Code] {
				t.Fatalf("err = %v (%T), want a *ParseError with a known code", err, err)
			}
			return
		}
		if !ValidName(s.Name) {
			t.Errorf("name %q breaks the rule", s.Name)
		}
		if n := names.LenUTF16(s.Description); n < 1 || n > DescriptionMax || s.Description != strings.TrimSpace(s.Description) {
			t.Errorf("description %q: %d units or untrimmed", s.Description, n)
		}
		for _, tool := range s.AllowedTools {
			if tool == "" || strings.ContainsAny(tool, " \t\n") {
				t.Errorf("allowed tool %q", tool)
			}
		}
	})
}
