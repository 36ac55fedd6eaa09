package checkpoint

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// Ticker gives a schedule's ticks: Next returns the first after t.
type Ticker interface{ Next(t time.Time) time.Time }

// every ticks on multiples of d since the Unix epoch.
type every time.Duration

func (e every) Next(t time.Time) time.Time {
	d := time.Duration(e)
	return t.Truncate(d).Add(d)
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
	return c, nil
}

// maxTickScan bounds how many ticks Due walks past a long downtime.
const maxTickScan = 1_000_000

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
		// Skip the ticks no policy fires without walking them.
		keep := time.Duration(max(s.MaxCatchUp, 1)+1)*time.Duration(e) + grace
		if cut := now.Add(-keep); cut.After(from) {
			from = cut
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
	for t := tk.Next(from); !t.After(now) && n < maxTickScan; t = tk.Next(t) {
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
	return append(missed, fire...), last, nil
}
