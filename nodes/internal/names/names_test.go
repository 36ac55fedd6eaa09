package names

import "testing"

func TestSlug(t *testing.T) {
	for _, c := range []struct {
		raw     string
		max     int
		trimCut bool
		want    string
	}{
		{"Support Desk", 64, false, "support-desk"},
		{"github-Code Review", 64, true, "github-code-review"},
		{"Résumé Tool", 64, true, "r-sum-tool"},
		{"--a__b--", 64, true, "a-b"},
		{"!!!", 64, true, ""},
		{"abc-def", 4, true, "abc"},
		{"abc-def", 4, false, "abc-"},
	} {
		if got := Slug(c.raw, c.max, c.trimCut); got != c.want {
			t.Errorf("Slug(%q, %d, %v) = %q, want %q", c.raw, c.max, c.trimCut, got, c.want)
		}
	}
}

func TestUTF16(t *testing.T) {
	for _, c := range []struct {
		s       string
		n       int
		max     int
		wantCut string
	}{
		{"abc", 3, 2, "ab"},
		{"a🧶b", 4, 2, "a"},
		{"a🧶b", 4, 3, "a🧶"},
		{"örnek", 5, 10, "örnek"},
	} {
		if got := LenUTF16(c.s); got != c.n {
			t.Errorf("LenUTF16(%q) = %d, want %d", c.s, got, c.n)
		}
		if got := CutUTF16(c.s, c.max); got != c.wantCut {
			t.Errorf("CutUTF16(%q, %d) = %q, want %q", c.s, c.max, got, c.wantCut)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		`summarize`:   `"summarize"`,
		"a\"b\\c\nd":  `"a\"b\\c\nd"`,
		"\x01é<&>":    `"\u0001é<&>"`,
		"tab\there\r": `"tab\there\r"`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
