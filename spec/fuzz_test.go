package spec

import (
	"reflect"
	"regexp"
	"sort"
	"testing"
)

// FuzzDecode checks that Decode never panics, that its diagnostics are
// sorted and point into the document, that a refused document has an error,
// and that an accepted one round-trips: its encoding is value-equal to it
// and a fixed point, and Clone and Validate agree with Decode.
func FuzzDecode(f *testing.F) {
	for _, dir := range []string{"valid", "invalid"} {
		for _, doc := range readDir(f, dir) {
			f.Add(doc)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, ds := Decode("fuzz.json", data)
		for i, d := range ds {
			if d.Pos.Offset < 0 || d.Pos.Offset > len(data) || d.Pos.Line < 1 || d.Pos.Col < 1 || d.Pos.File != "fuzz.json" {
				t.Fatalf("diagnostic %v has position %+v in %d bytes", d, d.Pos, len(data))
			}
			if i > 0 && d.Pos.Offset < ds[i-1].Pos.Offset {
				t.Fatalf("diagnostics out of order:\n%s", dump(ds))
			}
			if d.Message == "" || d.Hint == "" {
				t.Fatalf("diagnostic without message or hint: %#v", d)
			}
		}
		if g == nil {
			if !ds.HasErrors() {
				t.Fatalf("refused without an error:\n%s", dump(ds))
			}
			return
		}
		if ds.HasErrors() {
			t.Fatalf("accepted with errors:\n%s", dump(ds))
		}
		checkRoundTrip(t, "fuzz.json", data, g, ds)
		if p := g.Pos(""); p.Line < 1 {
			t.Fatalf("Pos(\"\") = %+v", p)
		}
		for i := range g.Nodes {
			if p := g.Pos(PathKey(PathIndex("nodes", i), "id")); p.Line < 1 || data[p.Offset] != '"' {
				t.Fatalf("Pos(nodes[%d].id) = %+v", i, p)
			}
		}
		// The same graph built in Go (no positions) gets the same findings.
		c := g.Clone()
		c.src = nil
		if got, want := findings(c.Validate()), findings(ds); !reflect.DeepEqual(got, want) {
			t.Fatalf("Validate on the Go graph finds\n%q\nDecode found\n%q", got, want)
		}
	})
}

var lineColInMessage = regexp.MustCompile(` \(\d+:\d+\)`)

// findings lists what diagnostics say, without positions, sorted.
func findings(ds Diagnostics) []string {
	out := []string{}
	for _, d := range ds {
		msg := lineColInMessage.ReplaceAllString(d.Message, "")
		out = append(out, d.Severity.String()+" "+d.Path+": "+msg+"; "+d.Hint)
	}
	sort.Strings(out)
	return out
}
