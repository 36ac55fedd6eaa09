package checkpoint

import (
	"fmt"
	"math"
	"time"

	"github.com/robfig/cron/v3"
)

// Ticker gives a schedule's ticks: Next returns the first after t.
type Ticker interface{ Next(t time.Time) time.Time }

// every ticks on multiples of d since the Unix epoch.
type every time.Duration

// Next returns the first multiple of e since the Unix epoch after t.
// (time.Time.Truncate counts from the zero time, January 1 of year 1,
// which is a multiple of e since the epoch only for intervals that
// divide two days: a weekly interval would tick on Mondays, not on the
// epoch's Thursdays.)
func (e every) Next(t time.Time) time.Time {
	d := time.Duration(e)
	epoch := time.Unix(0, 0)
	r := epoch.Sub(epoch.Truncate(d)) // the epoch's offset from the zero time's multiples, in [0, d)
	return t.Add(-r).Truncate(d).Add(r).Add(d)
}

// Ticks parses the schedule's cron expression (in its time zone) or its
// interval; the error matches ErrInvalidSchedule.
func (s Schedule) Ticks() (Ticker, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidSchedule, s.Name, fmt.Sprintf(format, a...))
	}
	switch {
	case (s.Cron == "") == (s.Every == 0):
		return nil, bad("set exactly one of a cron expression and an interval")
	case s.Every < 0 || (s.Every > 0 && s.Every < time.Second):
		return nil, bad("interval %v is under a second", s.Every)
	case s.Every%time.Microsecond != 0:
		// PostgreSQL keeps a tick to the microsecond: a tick finer than
		// that would be recorded as an earlier time, and found due again.
		return nil, bad("interval %v is not a whole number of microseconds; round it (%v)", s.Every, s.Every.Round(time.Microsecond))
	case s.Every > 0:
		if s.TimeZone != "" {
			return nil, bad("a time zone applies to a cron expression, not to an interval")
		}
		return every(s.Every), nil
	}
	spec := s.Cron
	if s.TimeZone != "" {
		if _, err := time.LoadLocation(s.TimeZone); err != nil {
			return nil, bad("time zone %q: %v (want an IANA name such as Europe/Istanbul)", s.TimeZone, err)
		}
		spec = "CRON_TZ=" + s.TimeZone + " " + spec
	}
	c, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, bad("cron expression %q: %v", s.Cron, err)
	}
	if c.Next(time.Now()).IsZero() {
		// robfig/cron looks five years ahead and gives up: a date that
		// does not exist (30 February, 31 April) never fires.
		return nil, bad("cron expression %q has no tick in the next five years (a date that does not exist, such as 30 February?); fix its day of month or month", s.Cron)
	}
	return c, nil
}

// maxTickScan bounds how many ticks Due walks past a long downtime.
var maxTickScan = 1_000_000 // a variable for the tests

// Due plans the ticks of s due at now: those after s.Last up to now.
// A tick at most grace before now is on time and fires; older ones were
// missed (nothing fired the schedule then) and follow the catch-up
// policy: none fires none of them, one the latest, all the latest
// MaxCatchUp. It returns the ticks to fire, oldest first, and the latest
// tick due (s.Last when none is), to record as the new Last.
func (s Schedule) Due(now time.Time, grace time.Duration) (fire []time.Time, last time.Time, err error) {
	tk, err := s.Ticks()
	if err != nil {
		return nil, s.Last, err
	}
	last = s.Last
	from := s.Last
	if e, ok := tk.(every); ok {
		// Skip the ticks no policy fires without walking them (unless
		// keeping them all reaches past the oldest time a Duration
		// measures: then there is nothing to skip).
		n := int64(max(s.MaxCatchUp, 1)) + 1
		if n <= (math.MaxInt64-int64(max(grace, 0)))/int64(e) {
			keep := time.Duration(n)*time.Duration(e) + grace
			if cut := now.Add(-keep); cut.After(from) {
				from = cut
			}
		}
	}
	bound := 0
	switch s.CatchUp {
	case CatchUpOne:
		bound = 1
	case CatchUpAll:
		bound = max(s.MaxCatchUp, 1)
	}
	var missed []time.Time
	n := 0
	t := tk.Next(from)
	for ; !t.IsZero() && !t.After(now) && n < maxTickScan; t = tk.Next(t) {
		n++
		last = t
		if now.Sub(t) <= grace {
			fire = append(fire, t)
			continue
		}
		if bound > 0 {
			missed = append(missed, t)
			if len(missed) > bound {
				missed = missed[1:]
			}
		}
	}
	if n == maxTickScan && !t.IsZero() && !t.After(now) {
		// The scan stopped short of now: the ticks it saw are not the
		// latest, which the policies fire. Fire none of them; the next
		// call goes on from last.
		return nil, last, nil
	}
	return append(missed, fire...), last, nil
}
