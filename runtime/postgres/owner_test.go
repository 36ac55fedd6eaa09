package postgres_test

import (
	"cmp"
	"context"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/internal/store/storetest"
	"github.com/ilmek-go/ilmek/runtime/postgres"
)

// fillOwners stores n threads in one statement, thread i owned by
// storetest.OwnerOf(i) in team storetest.TeamOf(i), or all by owner when
// it is not "".
func fillOwners(tb testing.TB, s *postgres.Store, n int, owner string) {
	tb.Helper()
	owners, teams := make([]string, n), make([]string, n)
	for i := range n {
		owners[i], teams[i] = cmp.Or(owner, storetest.OwnerOf(i)), storetest.TeamOf(i)
	}
	_, err := s.Pool().Exec(context.Background(), `INSERT INTO "`+s.SchemaName()+`".ilmek_threads (thread_id, meta, updated_ns)
		SELECT format('th-%s', lpad((i - 1)::text, 6, '0')), jsonb_build_object('owner', o, 'team', t), i
		FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(o, t, i)`, owners, teams)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := s.Pool().Exec(context.Background(), `ANALYZE "`+s.SchemaName()+`".ilmek_threads`); err != nil {
		tb.Fatal(err)
	}
}

// TestListByOwner: a listing by owner (the indexed key, alone or with
// other keys) returns exactly that owner's threads, newest first, across
// pages, and such a statement reads the owner index.
func TestListByOwner(t *testing.T) {
	s := openStore(t, "owner")
	fillOwners(t, s, 3000, "")
	storetest.ListByOwner(t, s, 3000, 400)
	rows, err := s.Pool().Query(t.Context(), `EXPLAIN SELECT thread_id FROM "`+s.SchemaName()+`".ilmek_threads
		WHERE meta @> '{"owner":"dave"}'::jsonb AND (meta ->> 'owner') = 'dave' ORDER BY updated_ns DESC, thread_id DESC LIMIT 51`)
	if err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.String(), "ilmek_threads_owner") {
		t.Errorf("the listing by owner does not read the owner index:\n%s", plan.String())
	}
}

// BenchmarkListOtherOwner is storetest.ListOtherOwner: the owner index is
// migration 6.
func BenchmarkListOtherOwner(b *testing.B) {
	storetest.ListOtherOwner(b, func(b *testing.B, threads int, drop bool) checkpoint.ThreadLister {
		s := openStore(b, "owners")
		fillOwners(b, s, threads, "alice")
		if drop {
			if _, err := s.Pool().Exec(b.Context(), `DROP INDEX "`+s.SchemaName()+`".ilmek_threads_owner`); err != nil {
				b.Fatal(err)
			}
		}
		return s
	})
}

// TestThreadTouch: a checkpoint rewrites its thread's row (Updated) only
// when the row is a grain older (migration 12), and a run's end leaves
// Updated no earlier than its last checkpoint.
func TestThreadTouch(t *testing.T) {
	storetest.Touch(t, openStore(t, "touch"))
}
