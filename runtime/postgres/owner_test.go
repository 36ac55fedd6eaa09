package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres"
)

// fillOwners stores n threads, thread i owned by owners[i%len(owners)]
// and in team t(i%2), in one statement.
func fillOwners(tb testing.TB, s *postgres.Store, n int, owners ...string) {
	tb.Helper()
	_, err := s.Pool().Exec(context.Background(), `INSERT INTO "`+s.SchemaName()+`".ilmek_threads (thread_id, meta, updated_ns)
		SELECT format('th-%s', lpad(i::text, 6, '0')), jsonb_build_object('owner', ($2::text[])[i % cardinality($2::text[]) + 1], 'team', 't' || (i % 2)), i + 1
		FROM generate_series(0, $1 - 1) i`, n, owners)
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
	fillOwners(t, s, 3000, "alice", "bob", "carol")
	for _, tc := range []struct {
		name string
		meta map[string]string
		want int
	}{
		{"owner", map[string]string{"owner": "bob"}, 1000},
		{"owner and team", map[string]string{"owner": "bob", "team": "t0"}, 500},
		{"no such owner", map[string]string{"owner": "dave"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []checkpoint.ThreadInfo
			q := checkpoint.ThreadQuery{Meta: tc.meta, Limit: 400}
			for {
				page, err := s.ListThreads(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, page.Threads...)
				if page.Next == "" {
					break
				}
				q.Cursor = page.Next
			}
			if len(got) != tc.want {
				t.Fatalf("%d threads, want %d", len(got), tc.want)
			}
			for i, th := range got {
				for k, v := range tc.meta {
					if th.Meta[k] != v {
						t.Errorf("thread %s has %s=%q, want %q", th.ID, k, th.Meta[k], v)
					}
				}
				if i > 0 && !got[i-1].Updated.After(th.Updated) {
					t.Errorf("thread %s not older than %s", th.ID, got[i-1].ID)
				}
			}
		})
	}
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

// BenchmarkListOtherOwner lists the threads of an owner who has none in a
// schema of 10,000 threads of another owner: with the owner index
// (migration 6), without it (the listing before it), and on an empty
// schema for scale.
func BenchmarkListOtherOwner(b *testing.B) {
	for _, tc := range []struct {
		name    string
		threads int
		drop    bool
	}{
		{"indexed", 10000, false},
		{"no-index", 10000, true},
		{"empty", 0, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := openStore(b, "owners")
			fillOwners(b, s, tc.threads, "alice")
			if tc.drop {
				if _, err := s.Pool().Exec(b.Context(), `DROP INDEX "`+s.SchemaName()+`".ilmek_threads_owner`); err != nil {
					b.Fatal(err)
				}
			}
			q := checkpoint.ThreadQuery{Meta: map[string]string{"owner": "bob"}}
			for b.Loop() {
				page, err := s.ListThreads(b.Context(), q)
				if err != nil || len(page.Threads) != 0 {
					b.Fatal(len(page.Threads), err)
				}
			}
		})
	}
}
