package spec

import (
	"testing"
)

// FuzzCompare: for every document Decode accepts, re-encoding keeps the
// fingerprint, a document compared with itself (and with its canonical
// form) has no changes, and Compare finds a change exactly when the
// fingerprints of two documents differ.
func FuzzCompare(f *testing.F) {
	docs := readDir(f, "valid")
	for _, a := range docs {
		for _, b := range docs {
			f.Add(a, b)
			break
		}
		f.Add(a, []byte(fpBase))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ga, da := Decode("a.json", a)
		if da.HasErrors() {
			return
		}
		again, d2 := Decode("again.json", ga.Encode())
		if d2.HasErrors() {
			t.Fatalf("the canonical form does not decode: %v", d2.Err())
		}
		if ga.Fingerprint() != again.Fingerprint() {
			t.Fatalf("re-encoding changed the fingerprint")
		}
		if cs := Compare(ga, again); len(cs) != 0 {
			t.Fatalf("a document differs from its canonical form: %+v", cs)
		}
		gb, db := Decode("b.json", b)
		if db.HasErrors() {
			return
		}
		cs := Compare(ga, gb)
		if (len(cs) == 0) != (ga.Fingerprint() == gb.Fingerprint()) {
			t.Fatalf("%d changes, fingerprints equal %v:\n%s\n%s", len(cs), ga.Fingerprint() == gb.Fingerprint(), ga.FingerprintForm(), gb.FingerprintForm())
		}
	})
}
