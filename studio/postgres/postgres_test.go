package postgres_test

import (
	"context"
	"testing"

	"github.com/ilmek-go/ilmek/internal/pgtest"
	"github.com/ilmek-go/ilmek/studio"
	"github.com/ilmek-go/ilmek/studio/postgres"
	"github.com/ilmek-go/ilmek/studio/repotest"
)

func TestRepository(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	repotest.Run(t, func(t *testing.T) studio.Repository {
		r, db, err := postgres.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		for _, tb := range []string{"studio_revisions", "studio_versions", "studio_documents"} {
			if _, err := db.ExecContext(ctx, "DELETE FROM "+tb); err != nil {
				t.Fatal(err)
			}
		}
		return r
	})
}
