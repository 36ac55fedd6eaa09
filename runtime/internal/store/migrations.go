// Package store is the machinery the SQLite and PostgreSQL stores share.
package store

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one numbered version of a store's schema, from a file
// named NNNN_what.sql.
type Migration struct {
	Version int
	// Name is the file's name without .sql, e.g. "0002_requests".
	Name string
	SQL  string
}

// Migrations reads the files matching pattern (e.g. "migrations/*.sql") in
// fsys and returns them in version order, numbered 1, 2, 3, ... without
// gaps.
func Migrations(fsys fs.FS, pattern string) ([]Migration, error) {
	names, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, n := range names {
		base := path.Base(n)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration file %s is not named NNNN_what.sql", n)
		}
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: strings.TrimSuffix(base, ".sql"), SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration versions must be 1, 2, 3, ... without gaps; %s is version %d at place %d", m.Name, m.Version, i+1)
		}
	}
	return out, nil
}
