package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckFindsDamage: Check passes an intact file, and on a file with
// one of its pages overwritten returns a DamageError matching ErrDamaged
// that names what SQLite found.
func TestCheckFindsDamage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "damaged.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for i := range 400 {
		if err := s.Put(ctx, cp("t", fmt.Sprintf("c%04d", i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check of an intact file: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	if len(data) < 20*page {
		t.Fatalf("the file has %d bytes, too few pages to damage one in the middle", len(data))
	}
	at := (len(data) / page / 2) * page // a page of the checkpoints' b-tree
	for i := at; i < at+page; i++ {
		data[i] = 0xA5
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path)
	if err != nil {
		t.Fatalf("Open of a file damaged in the middle: %v", err)
	}
	defer s.Close()
	err = s.Check(ctx)
	var de *DamageError
	if !errors.Is(err, ErrDamaged) || !errors.As(err, &de) || len(de.Problems) == 0 || de.Path != path {
		t.Fatalf("Check of a damaged file: %v, want a DamageError matching ErrDamaged", err)
	}
	t.Logf("%v (%d problems)", err, len(de.Problems))
}
