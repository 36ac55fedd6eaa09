package runtime

import (
	"context"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// pauseJournal is a pending interrupt with its task's journal: at is the
// index of the interrupt's entry in entries, -1 when it has none.
type pauseJournal struct {
	p       PendingInterrupt
	entries []checkpoint.JournalEntry
	at      int
}

// answered reports whether the interrupt's answer is journaled.
func (pj pauseJournal) answered() bool { return pj.at >= 0 && pj.entries[pj.at].Answered }

// readPauses reads the journal of each pending interrupt's task and returns
// them, and the interrupts still open: those whose answer is not journaled.
// It is the one place that decides which interrupts are open, for
// Thread.Pending, a run's start and Resume.
func readPauses(ctx context.Context, cp Checkpointer, thread string, pending []PendingInterrupt) ([]pauseJournal, []PendingInterrupt, error) {
	pauses := make([]pauseJournal, len(pending))
	var open []PendingInterrupt
	for i, p := range pending {
		j, err := cp.GetJournal(ctx, thread, p.TaskID)
		if err != nil {
			return nil, nil, err
		}
		pauses[i] = pauseJournal{p: p, entries: j, at: -1}
		for k := range j {
			if j[k].Key == p.Key {
				pauses[i].at = k
			}
		}
		if !pauses[i].answered() {
			open = append(open, p)
		}
	}
	return pauses, open, nil
}
