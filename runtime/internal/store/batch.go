package store

import (
	"fmt"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// BatchWhat names what a batch (checkpoint.BatchLease) writes, for its
// error: the checkpoints of cs and the journal j, if any.
func BatchWhat(cs []checkpoint.Commit, j *checkpoint.JournalWrite) string {
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		if c.Checkpoint != nil {
			ids = append(ids, c.Checkpoint.ID)
		}
	}
	what := fmt.Sprintf("checkpoints %q", ids)
	if j != nil {
		what += fmt.Sprintf(" and the journal of task %q", j.TaskID)
	}
	return what
}
