package postgres_test

import (
	"testing"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
	"github.com/ilmek-go/ilmek/runtime/checkpointtest"
	"github.com/ilmek-go/ilmek/runtime/postgres"
)

// TestAdaptiveCompactionRows: under the default compaction (Bytes 0:
// adaptive, and DefaultCompaction's Every) a chat thread's chain of
// deltas (checkpointtest.RunChat) ends in a snapshot when its bytes reach
// the larger of the last snapshot's size and
// checkpoint.MinCompactionBytes, or its depth Every deltas, neither
// earlier nor later. (A delta's commit reads its snapshot's size only
// once its chain reaches MinCompactionBytes.)
func TestAdaptiveCompactionRows(t *testing.T) {
	s := openStore(t, "adaptive")
	const turns, msgBytes = 150, 3000
	checkpointtest.RunChat(t, s, "t", turns, msgBytes)
	rows, err := s.Pool().Query(t.Context(), "SELECT seq, base_id = '', depth, chain_bytes, coalesce(length(channels), 0) FROM "+
		s.SchemaName()+".ilmek_checkpoints WHERE thread_id = 't' ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	every := int64(postgres.DefaultCompaction.Every)
	var snaps []int64 // the sizes of the snapshots, in order
	var snap, prevChain, prevDepth int64
	bySize := 0 // snapshots due by the chain's bytes
	for rows.Next() {
		var seq, depth, chain, size int64
		var full bool
		if err := rows.Scan(&seq, &full, &depth, &chain, &size); err != nil {
			t.Fatal(err)
		}
		limit := max(snap, checkpoint.MinCompactionBytes)
		switch {
		case full:
			dueBySize := prevChain+msgBytes >= limit
			if len(snaps) > 0 && !dueBySize && prevDepth+1 < every {
				t.Errorf("row %d: a snapshot after a chain of %d bytes and %d deltas, early: its limits are %d bytes, %d deltas", seq, prevChain, prevDepth, limit, every)
			}
			if len(snaps) > 0 && dueBySize {
				bySize++
			}
			snaps, snap, prevChain, prevDepth = append(snaps, size), size, 0, 0
		case chain >= limit:
			t.Errorf("row %d: a delta whose chain holds %d bytes, at or past its limit %d (snapshot of %d)", seq, chain, limit, snap)
		case depth >= every:
			t.Errorf("row %d: a delta %d deltas past its snapshot, at or past Every (%d)", seq, depth, every)
		default:
			prevChain, prevDepth = chain, depth
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if bySize < 2 {
		t.Errorf("snapshots of %v bytes, %d of them due by the chain's bytes; want at least 2", snaps, bySize)
	}
}
