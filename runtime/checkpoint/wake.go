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

// PauseStatus is the status of a thread that stopped on pending: parked
// when every pause is a timer's (nobody is asked), interrupted when a
// person is asked (and when pending is empty).
func PauseStatus(pending []PendingInterrupt) Status {
	for _, p := range pending {
		if !p.Timer {
			return StatusInterrupted
		}
	}
	if len(pending) == 0 {
		return StatusInterrupted
	}
	return StatusParked
}
