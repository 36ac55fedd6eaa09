package suggest

import "testing"

// TestClosest: a likely misspelling gets the name it meant; a name that is
// far from every candidate, or equal to one, gets none.
func TestClosest(t *testing.T) {
	commands := []string{"gen", "check", "fmt", "mermaid", "schema", "diff", "version", "help"}
	for _, c := range []struct {
		in, want string
		cands    []string
	}{
		{"checkk", "check", commands},
		{"chek", "check", commands},
		{"mermiad", "mermaid", commands},
		{"verison", "version", commands},
		{"support.json", "", commands},
		{"check", "", commands},
		{"tyep", "type", []string{"out", "package", "type", "config", "bindings", "check"}},
		{"Approved", "approved", []string{"approved", "page"}},
		{"pgae", "page", []string{"approved", "page", "note"}},
		{"", "", commands},
	} {
		if got := Closest(c.in, c.cands); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := DidYouMean("chek", commands); got != `did you mean "check"? ` {
		t.Errorf("DidYouMean = %q", got)
	}
}
