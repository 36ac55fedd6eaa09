package store

import (
	"strconv"
	"strings"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// OwnerKey is the thread metadata key both stores index: a listing with
// Meta{OwnerKey: o} reads only the rows of owner o.
const OwnerKey = "owner"

// ThreadSQL is the statement of a thread listing as it is built: its text
// and its arguments.
type ThreadSQL struct {
	strings.Builder
	// Args are the statement's arguments, Limit the page size.
	Args  []any
	Limit int
	mark  string
}

// ListThreadsSQL checks q and starts its statement: head (a SELECT of the
// thread rows ending in a WHERE clause), then q's conditions but its
// metadata. mark is the placeholder's prefix ("?" or "$"; placeholders are
// numbered); after is the condition that a row comes after the cursor,
// given the placeholders of the cursor's update time and id. The store
// adds its metadata conditions, then calls End.
func ListThreadsSQL(q checkpoint.ThreadQuery, head, mark string, after func(updated, id string) string) (*ThreadSQL, error) {
	limit, cursor, err := checkpoint.CheckThreadQuery(q)
	if err != nil {
		return nil, err
	}
	b := &ThreadSQL{Limit: limit, mark: mark}
	b.WriteString(head)
	if q.ID != "" {
		// The primary key: one record, however many the table holds.
		b.WriteString(" AND thread_id = " + b.Arg(q.ID))
	}
	if q.Status != "" {
		b.WriteString(" AND status = " + b.Arg(string(q.Status)))
	}
	if !q.UpdatedAfter.IsZero() {
		b.WriteString(" AND updated_ns > " + b.Arg(q.UpdatedAfter.UnixNano()))
	}
	if !q.UpdatedBefore.IsZero() {
		b.WriteString(" AND updated_ns < " + b.Arg(q.UpdatedBefore.UnixNano()))
	}
	if cursor != nil {
		b.WriteString(" AND " + after(b.Arg(cursor.Updated), b.Arg(cursor.ID)))
	}
	return b, nil
}

// Arg adds the argument v and returns its placeholder.
func (b *ThreadSQL) Arg(v any) string {
	b.Args = append(b.Args, v)
	return b.mark + strconv.Itoa(len(b.Args))
}

// End orders the rows, newest first, reads one more than the page (so
// Page knows whether there is more) and returns the statement.
func (b *ThreadSQL) End() string {
	b.WriteString(" ORDER BY updated_ns DESC, thread_id DESC LIMIT " + b.Arg(b.Limit+1))
	return b.String()
}
