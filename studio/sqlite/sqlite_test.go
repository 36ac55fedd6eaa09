package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ilmek-go/ilmek/studio"
	"github.com/ilmek-go/ilmek/studio/repotest"
	"github.com/ilmek-go/ilmek/studio/sqlite"
)

func TestRepository(t *testing.T) {
	repotest.Run(t, func(t *testing.T) studio.Repository {
		path := filepath.Join(t.TempDir(), "studio.db")
		r, db, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		// Opening again applies no migration twice.
		_, db2, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatalf("reopening: %v", err)
		}
		db2.Close()
		return r
	})
}
