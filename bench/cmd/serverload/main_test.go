package main

import (
	"context"
	"testing"
	"time"
)

// TestLoad runs a small load on both checkpointers: every run ends, with
// its final state checked.
func TestLoad(t *testing.T) {
	for _, ckpt := range []string{"memory", "sqlite"} {
		rep, err := Load(context.Background(), 8, 80, 60*time.Second, ckpt)
		if err != nil {
			t.Fatalf("%s: %v (%+v)", ckpt, err, rep)
		}
		if rep.Runs != 80 || rep.Checked != 80 || rep.Errors != 0 || rep.Requests != 80*5 {
			t.Fatalf("%s: %+v", ckpt, rep)
		}
		t.Logf("%s: %+v", ckpt, rep)
	}
}
