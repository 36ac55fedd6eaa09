package checkpoint

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestScheduleEveryFromTheUnixEpoch: an interval's ticks fall on its
// multiples since the Unix epoch, as the Schedule doc says, also for an
// interval that does not divide two days (time.Time.Truncate counts from
// January 1 of year 1): a weekly one ticks on Thursdays 00:00 UTC, the
// epoch's weekday.
func TestScheduleEveryFromTheUnixEpoch(t *testing.T) {
	epoch := time.Unix(0, 0).UTC()
	for _, c := range []struct {
		every time.Duration
		at    time.Time
		want  time.Time // zero: only check the multiple
	}{
		{7 * 24 * time.Hour, time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC), time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC)},
		{7 * 24 * time.Hour, time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 17, 0, 0, 0, 0, time.UTC)},
		{7 * time.Hour, time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC), time.Time{}},
		{time.Hour, time.Date(2026, 12, 6, 12, 30, 0, 0, time.UTC), time.Date(2026, 12, 6, 13, 0, 0, 0, time.UTC)},
		{1500 * time.Millisecond, time.Date(2026, 12, 6, 12, 0, 0, 1, time.UTC), time.Time{}},
		{100 * 365 * 24 * time.Hour, time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC), time.Date(2069, 12, 7, 0, 0, 0, 0, time.UTC)},
		{37 * time.Second, time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{}},
	} {
		s := Schedule{Name: "s", Graph: "g", Every: c.every}
		tk, err := s.Ticks()
		if err != nil {
			t.Fatal(err)
		}
		next := tk.Next(c.at)
		if since := next.Sub(epoch); since%c.every != 0 || !next.After(c.at) || next.Add(-c.every).After(c.at) {
			t.Errorf("every %v after %v: %v (%v since the epoch); want the first multiple of the interval since the epoch after it", c.every, c.at, next, since)
		}
		if !c.want.IsZero() && !next.Equal(c.want) {
			t.Errorf("every %v after %v: %v, want %v", c.every, c.at, next, c.want)
		}
	}
}

// TestScheduleRefusesWhatCannotFire: ValidateSchedule (and so every
// store's CreateSchedule) refuses, with an error matching
// ErrInvalidSchedule that names the fix, a cron expression that never
// ticks (which made every firer walk a million empty ticks each poll, and
// move Last to the zero time), an interval PostgreSQL cannot keep to the
// nanosecond (whose first tick was then found due again, and the schedule
// stuck), and a MaxCatchUp PostgreSQL cannot store; it accepts a date
// that comes only in leap years and the largest MaxCatchUp.
func TestScheduleRefusesWhatCannotFire(t *testing.T) {
	for _, c := range []struct {
		name string
		s    Schedule
		bad  string // a word of the error; "" when valid
	}{
		{"30 February", Schedule{Cron: "0 0 30 2 *"}, "no tick"},
		{"31 April in a zone", Schedule{Cron: "15 4 31 4 *", TimeZone: "Europe/Istanbul"}, "no tick"},
		{"29 February", Schedule{Cron: "0 0 29 2 *"}, ""},
		{"a nanosecond past a second", Schedule{Every: time.Second + time.Nanosecond}, "microseconds"},
		{"an hour over seven", Schedule{Every: time.Hour / 7}, "microseconds"},
		{"1.5 s", Schedule{Every: 1500 * time.Millisecond}, ""},
		{"max catch-up past an int32", Schedule{Every: time.Hour, CatchUp: CatchUpAll, MaxCatchUp: MaxMaxCatchUp + 1}, "max catch-up"},
		{"the largest max catch-up", Schedule{Every: time.Hour, CatchUp: CatchUpAll, MaxCatchUp: MaxMaxCatchUp}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.s.Name, c.s.Graph = "s", "g"
			t0 := time.Now()
			_, err := ValidateSchedule(c.s)
			if took := time.Since(t0); took > time.Second {
				t.Errorf("validation took %v", took)
			}
			switch {
			case c.bad == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.bad != "" && (!errors.Is(err, ErrInvalidSchedule) || !strings.Contains(err.Error(), c.bad)):
				t.Fatalf("err %v; want ErrInvalidSchedule saying %q", err, c.bad)
			}
			if c.bad == "" {
				return
			}
			// A schedule a store kept before the check: Due refuses it at once.
			c.s.Last = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			if _, _, err := c.s.Due(c.s.Last.Add(time.Hour), time.Second); c.bad != "max catch-up" && !errors.Is(err, ErrInvalidSchedule) {
				t.Errorf("Due: %v; want ErrInvalidSchedule", err)
			}
			if took := time.Since(t0); took > time.Second {
				t.Errorf("validation and Due took %v", took)
			}
		})
	}
}

// TestScheduleDueHugeCatchUp: a large MaxCatchUp does not overflow the
// span of ticks Due keeps (it made a daily schedule with MaxCatchUp
// 200000 never fire again): the on-time tick fires, and the missed ones
// as the policy says.
func TestScheduleDueHugeCatchUp(t *testing.T) {
	last := time.Date(2026, 12, 3, 23, 0, 0, 0, time.UTC)
	now := time.Date(2026, 12, 6, 0, 0, 5, 0, time.UTC)
	day := func(d int) time.Time { return time.Date(2026, 12, d, 0, 0, 0, 0, time.UTC) }
	for _, max := range []int{100, 200_000, 1_000_000, MaxMaxCatchUp} {
		for _, c := range []struct {
			catchUp string
			want    []time.Time
		}{
			{CatchUpNone, []time.Time{day(6)}},
			{CatchUpOne, []time.Time{day(5), day(6)}},
			{CatchUpAll, []time.Time{day(4), day(5), day(6)}},
		} {
			s, err := ValidateSchedule(Schedule{Name: "s", Graph: "g", Every: 24 * time.Hour, CatchUp: c.catchUp, MaxCatchUp: max})
			if err != nil {
				t.Fatal(err)
			}
			s.Last = last
			fire, got, err := s.Due(now, 10*time.Second)
			if err != nil || !slices.EqualFunc(fire, c.want, time.Time.Equal) || !got.Equal(day(6)) {
				t.Errorf("max catch-up %d, %s: fire %v, last %v, err %v; want %v, last %v", max, c.catchUp, fire, got, err, c.want, day(6))
			}
		}
	}
}

// TestScheduleDueLongScan: when the ticks missed are more than Due walks
// in one call (a minutely cron after a long downtime), the calls that stop
// short fire nothing, and the one that reaches now fires as the policy
// says: one tick in all for CatchUpOne, the latest, not a stale one of
// each call.
func TestScheduleDueLongScan(t *testing.T) {
	defer func(n int) { maxTickScan = n }(maxTickScan)
	maxTickScan = 1000
	now := time.Date(2026, 12, 6, 12, 0, 30, 0, time.UTC)
	for _, c := range []struct {
		catchUp string
		max     int
		want    []time.Time
	}{
		{CatchUpOne, 0, []time.Time{time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)}},
		{CatchUpAll, 2, []time.Time{time.Date(2026, 12, 6, 11, 59, 0, 0, time.UTC), time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)}},
		{CatchUpNone, 0, nil},
	} {
		s, err := ValidateSchedule(Schedule{Name: "s", Graph: "g", Cron: "* * * * *", CatchUp: c.catchUp, MaxCatchUp: c.max})
		if err != nil {
			t.Fatal(err)
		}
		s.Last = now.Add(-3500 * time.Minute)
		var fired []time.Time
		for range 10 {
			fire, last, err := s.Due(now, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			fired = append(fired, fire...)
			if last.Equal(s.Last) {
				break
			}
			s.Last = last
		}
		if !slices.EqualFunc(fired, c.want, time.Time.Equal) || !s.Last.Equal(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)) {
			t.Errorf("%s: fired %v, last %v; want %v, last 12:00", c.catchUp, fired, s.Last, c.want)
		}
	}
}
