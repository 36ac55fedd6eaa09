package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionsStory runs the program's story (the body of its command) and
// checks each turn: the old version finishes its thread, a new
// thread runs on the new one, the new version alone refuses the paused
// thread with its reason, and the migrated thread finishes on version 2.
func TestVersionsStory(t *testing.T) {
	var b strings.Builder
	if err := run(t.Context(), filepath.Join(t.TempDir(), "versions.db"), &b); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	out := b.String()
	for _, want := range []string{
		`invoice-1: interrupted on version 1, asking "Approve the payment?"`,
		`invoice-1: done on version 1, log ["drafted 100.00" "approved"]`,
		`invoice-3: done on version 2, log ["drafted 300.00" "approved" "notified: 300.00 approved=true"]`,
		`invoice-2 on version 2 alone: refused, node-config-changed "review"`,
		`invoice-2 migration, dry run: plan [review] -> [review], changes [log], drops interrupts [review:interrupt#0]`,
		`invoice-2: migrated, interrupted on version 2, asking "Approve the payment of this amount?"`,
		`invoice-2: done on version 2, log ["drafted 200.00" "migrated to version 2" "approved" "notified: 200.00 approved=true"]`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}
