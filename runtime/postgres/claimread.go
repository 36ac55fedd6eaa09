package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/postgres/internal/pgside"
)

// The queue's worker reads a claimed thread's latest checkpoint in its
// claim's transaction (pgside.LatestRead): thread is an SQL expression of
// the worker's, not a document's or a caller's value.
func init() {
	pgside.LatestRead = func(st any, thread string) (string, func(context.Context, pgx.Rows) (*checkpoint.Checkpoint, error), bool) {
		s, ok := st.(*Store)
		if !ok {
			return "", nil, false
		}
		q := s.q.fill(withChain("SELECT thread_id, id, snap_id FROM S.ilmek_checkpoints WHERE thread_id = " + thread + " ORDER BY seq DESC LIMIT 1"))
		return q, s.readChain, true
	}
}
