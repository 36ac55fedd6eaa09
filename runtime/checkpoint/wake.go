package checkpoint

import "time"

// EarliestWake returns the earliest WakeAt of the pauses (zero when none
// has one): when a waker must run the thread next.
func EarliestWake(pending []PendingInterrupt) time.Time {
	var at time.Time
	for _, p := range pending {
		if !p.WakeAt.IsZero() && (at.IsZero() || p.WakeAt.Before(at)) {
			at = p.WakeAt
		}
	}
	return at
}
