package checkpoint

import (
	"slices"
	"testing"
	"time"
)

// TestScheduleDue: the ticks a schedule fires at now: the on-time ones
// (within grace), and the missed ones as its catch-up policy says.
func TestScheduleDue(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(secs ...int) []time.Time {
		var out []time.Time
		for _, s := range secs {
			out = append(out, base.Add(time.Duration(s)*time.Second))
		}
		return out
	}
	for _, c := range []struct {
		name    string
		s       Schedule
		now     int
		grace   time.Duration
		fire    []time.Time
		lastSec int
	}{
		{"on time", Schedule{Every: time.Second, CatchUp: CatchUpNone}, 2, 5 * time.Second, at(1, 2), 2},
		{"none missed", Schedule{Every: time.Second, CatchUp: CatchUpNone}, 10, 2 * time.Second, at(8, 9, 10), 10},
		{"one missed", Schedule{Every: time.Second, CatchUp: CatchUpOne}, 10, 2 * time.Second, at(7, 8, 9, 10), 10},
		{"all missed, bounded", Schedule{Every: time.Second, CatchUp: CatchUpAll, MaxCatchUp: 3}, 10, 2 * time.Second, at(5, 6, 7, 8, 9, 10), 10},
		{"long downtime", Schedule{Every: time.Second, CatchUp: CatchUpAll, MaxCatchUp: 2}, 100000, 0, at(99998, 99999, 100000), 100000},
		{"nothing due", Schedule{Every: time.Minute, CatchUp: CatchUpAll}, 30, time.Second, nil, 0},
		{"cron in a zone", Schedule{Cron: "0 3 * * *", TimeZone: "Europe/Istanbul", CatchUp: CatchUpAll}, 86400, 0, at(0), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.s.Name, c.s.Graph, c.s.Last = "s", "g", base
			if c.s.MaxCatchUp == 0 {
				c.s.MaxCatchUp = DefaultMaxCatchUp
			}
			if c.s.Cron != "" {
				// 03:00 Istanbul is 00:00 UTC: the first tick after base is a day on.
				c.fire, c.lastSec = at(86400), 86400
			}
			fire, last, err := c.s.Due(base.Add(time.Duration(c.now)*time.Second), c.grace)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(fire, c.fire, time.Time.Equal) || !last.Equal(base.Add(time.Duration(c.lastSec)*time.Second)) {
				t.Errorf("fire %v last %v; want %v last +%ds", fire, last, c.fire, c.lastSec)
			}
		})
	}
}

// TestScheduleDaylightSaving pins the cron ticks across daylight saving
// changes that the Schedule doc describes (robfig/cron's behaviour): a
// wall-clock time the spring-forward gap skips has no tick that day, and
// one the fall-back repeats ticks twice, once in each offset.
func TestScheduleDaylightSaving(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skipf("no time zone database: %v", err)
	}
	edt, est := time.FixedZone("EDT", -4*3600), time.FixedZone("EST", -5*3600)
	for _, c := range []struct {
		name     string
		cron     string
		from, to time.Time // Last, and now
		want     []time.Time
	}{
		{"spring forward skips 02:30", "30 2 * * *", time.Date(2026, 3, 7, 3, 0, 0, 0, ny), time.Date(2026, 3, 9, 3, 0, 0, 0, ny),
			[]time.Time{time.Date(2026, 3, 9, 2, 30, 0, 0, edt)}},
		{"fall back repeats 01:30", "30 1 * * *", time.Date(2026, 10, 31, 3, 0, 0, 0, ny), time.Date(2026, 11, 1, 3, 0, 0, 0, ny),
			[]time.Time{time.Date(2026, 11, 1, 1, 30, 0, 0, edt), time.Date(2026, 11, 1, 1, 30, 0, 0, est)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Schedule{Name: "s", Graph: "g", Cron: c.cron, TimeZone: "America/New_York", CatchUp: CatchUpAll, MaxCatchUp: 10, Last: c.from}
			fire, _, err := s.Due(c.to, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(fire, c.want, time.Time.Equal) {
				t.Errorf("ticks %v, want %v", fire, c.want)
			}
		})
	}
}
