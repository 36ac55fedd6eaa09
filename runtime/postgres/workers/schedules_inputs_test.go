package workers_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestScheduleInputsPostgreSQLCannotRun: the PostgreSQL store refuses,
// with an error matching checkpoint.ErrInvalidSchedule, the schedules its
// workers could not fire: an interval finer than a microsecond (its first
// tick was recorded to the microsecond, found due again and refused as
// recorded, every poll: the schedule never fired again), a cron
// expression without a tick (each poll walked a million empty ticks under
// the schedule's row lock), a MaxCatchUp its column cannot hold (a pgx
// encoding error before). A worker given such a schedule kept from before
// reports it each poll instead of hanging on it.
func TestScheduleInputsPostgreSQLCannotRun(t *testing.T) {
	q := openQueue(t)
	s := q.Store()
	ctx := context.Background()
	for _, sc := range []checkpoint.Schedule{
		{Name: "nanoseconds", Graph: "g", Every: time.Second + time.Nanosecond},
		{Name: "30 February", Graph: "g", Cron: "0 0 30 2 *"},
		{Name: "huge catch-up", Graph: "g", Every: time.Hour, CatchUp: checkpoint.CatchUpAll, MaxCatchUp: 1 << 40},
	} {
		t0 := time.Now()
		if _, err := s.CreateSchedule(ctx, sc); !errors.Is(err, checkpoint.ErrInvalidSchedule) {
			t.Errorf("schedule %q: %v; want ErrInvalidSchedule", sc.Name, err)
		}
		if took := time.Since(t0); took > time.Second {
			t.Errorf("schedule %q: CreateSchedule took %v", sc.Name, took)
		}
	}
	if list, err := s.ListSchedules(ctx); err != nil || len(list) != 0 {
		t.Fatalf("schedules stored: %v, %v; want none", list, err)
	}
	// A schedule kept from before the check, made so by hand.
	if _, err := s.CreateSchedule(ctx, checkpoint.Schedule{Name: "old", Graph: "g", Every: time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, "UPDATE "+s.SchemaName()+".ilmek_schedules SET every_ns = $1, next_tick = clock_timestamp() - interval '1 second' WHERE name = 'old'", int64(time.Second+time.Nanosecond)); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	fs, err := q.FireDueSchedules(ctx, time.Second)
	if !errors.Is(err, checkpoint.ErrInvalidSchedule) || len(fs) != 0 {
		t.Errorf("firing a schedule kept from before: %v, %v; want no firing and ErrInvalidSchedule", fs, err)
	}
	if took := time.Since(t0); took > 5*time.Second {
		t.Errorf("firing took %v", took)
	}
}
