package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrDamaged is matched (errors.Is) by the error of Check when SQLite's
// integrity check finds the file damaged.
var ErrDamaged = errors.New("the SQLite file is damaged")

// DamageError lists what SQLite's integrity check found wrong with the
// file, one problem a line as SQLite reports it (a page that is not a
// well-formed b-tree page, a row missing from an index, ...). It matches
// ErrDamaged. Restore the file from a backup: a damaged page may have lost
// checkpoints or journals, which no check can bring back.
type DamageError struct {
	Path     string
	Problems []string
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("sqlite: %q is damaged: the integrity check found %d problem(s), the first: %s", e.Path, len(e.Problems), e.Problems[0])
}

// Is makes a DamageError match ErrDamaged.
func (e *DamageError) Is(target error) bool { return target == ErrDamaged }

// maxProblems bounds the problems one Check reports.
const maxProblems = 100

// Check runs SQLite's quick integrity check (PRAGMA quick_check) over the
// whole file and returns nil when it is intact, a *DamageError naming what
// is damaged otherwise, or the error that kept the check from running. It
// reads every page of the file, so it takes about as long as reading the
// file once; the store stays usable meanwhile (it reads a snapshot).
//
// What it detects: pages that are not well-formed (torn or overwritten
// b-tree pages, bad free lists, pages used twice or never), rows whose
// index entries are missing or out of order, and records whose format is
// malformed. What it does not: a row whose bytes were changed into other
// well-formed bytes (SQLite keeps no checksums of content, and quick_check
// skips comparing indexes with their tables' content), a lost write that
// left the file consistent (a commit the disk acknowledged and dropped),
// and damage in the write-ahead log not yet copied into the file, which
// SQLite reads as it is. A checkpoint whose stored JSON or delta chain does
// not decode is reported by the read that meets it (Get, List).
func (s *Store) Check(ctx context.Context) error {
	rows, err := s.r.QueryContext(ctx, "PRAGMA quick_check("+fmt.Sprint(maxProblems)+")")
	if err != nil {
		return s.checkFailed(err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return s.checkFailed(err)
		}
		if line != "ok" {
			problems = append(problems, strings.TrimSpace(line))
		}
	}
	if err := rows.Err(); err != nil {
		return s.checkFailed(err)
	}
	if len(problems) > 0 {
		return &DamageError{Path: s.path, Problems: problems}
	}
	return nil
}

// checkFailed is the error of a check that could not run to its end. A
// file damaged where the check needs it fails the check itself: that is
// reported as damage too.
func (s *Store) checkFailed(err error) error {
	msg := err.Error()
	if strings.Contains(msg, "malformed") || strings.Contains(msg, "corrupt") || strings.Contains(msg, "not a database") {
		return &DamageError{Path: s.path, Problems: []string{msg}}
	}
	return fmt.Errorf("sqlite: integrity check of %q: %w", s.path, err)
}
