package store

import (
	"fmt"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// Rows are the rows of a query as both database/sql and pgx give them.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Chains caches the links of delta chains by the id of the snapshot they
// start at, across the rows of one read.
type Chains map[string]map[string]checkpoint.ChainLink

// Rebuild sets cp.Channels, which holds the encoded writes of a delta of
// checkpoint base on entry, to the full channels: the chain from snapshot
// snap through base, then cp's writes. When chains has no entry for snap,
// query reads the chain's rows (id, base id, channels) and done closes
// them; chains (nil: no cache) then keeps them.
func Rebuild(cp *checkpoint.Checkpoint, base, snap string, chains Chains, query func() (rows Rows, done func(), err error)) error {
	links := chains[snap]
	if links == nil {
		rs, done, err := query()
		if err == nil {
			links, err = scanChain(rs)
			done()
		}
		if err != nil {
			return fmt.Errorf("checkpoint %s: read its chain: %w", cp.ID, err)
		}
		if chains != nil {
			chains[snap] = links
		}
	}
	full, err := checkpoint.RebuildChain(cp.Channels, base, links)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", cp.ID, err)
	}
	cp.Channels = full
	return nil
}

// scanChain reads rows of (id, base id, channels).
func scanChain(rs Rows) (map[string]checkpoint.ChainLink, error) {
	links := map[string]checkpoint.ChainLink{}
	for rs.Next() {
		var id string
		var l checkpoint.ChainLink
		if err := rs.Scan(&id, &l.Base, &l.Channels); err != nil {
			return nil, err
		}
		links[id] = l
	}
	return links, rs.Err()
}
