package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

var _ checkpoint.ScheduleStore = (*Store)(nil)

// scheduleCols are the columns scanSchedule reads, in its order.
const scheduleCols = "name, graph, cron, time_zone, every_ns, input, meta, thread, overlap, catch_up, max_catch_up, paused, created_ns, last_ns"

// scanSchedule reads a row of scheduleCols.
func scanSchedule(row interface{ Scan(...any) error }) (checkpoint.Schedule, error) {
	var s checkpoint.Schedule
	var every, created, last int64
	var input []byte
	var meta string
	err := row.Scan(&s.Name, &s.Graph, &s.Cron, &s.TimeZone, &every, &input, &meta, &s.Thread, &s.Overlap, &s.CatchUp, &s.MaxCatchUp, &s.Paused, &created, &last)
	s.Every, s.Input = time.Duration(every), input
	if err == nil && meta != "{}" {
		if jerr := json.Unmarshal([]byte(meta), &s.Meta); jerr != nil {
			err = fmt.Errorf("schedule %q: its stored metadata is not a JSON object: %w", s.Name, jerr)
		}
	}
	s.Created, s.Last = time.Unix(0, created).UTC(), time.Unix(0, last).UTC()
	return s, err
}

// noSchedule is the error for an unknown schedule name.
func (s *Store) noSchedule(name string) error {
	return fmt.Errorf("sqlite: schedule %q in %q: %w", name, s.path, checkpoint.ErrNoSchedule)
}

// CreateSchedule stores sc (checkpoint.ScheduleStore).
func (s *Store) CreateSchedule(ctx context.Context, sc checkpoint.Schedule) (checkpoint.Schedule, error) {
	sc, err := checkpoint.ValidateSchedule(sc)
	if err != nil {
		return sc, err
	}
	now := time.Now().UTC()
	sc.Paused, sc.Created, sc.Last = false, now, now
	var input any
	if len(sc.Input) > 0 {
		input = []byte(sc.Input)
	}
	meta := []byte("{}")
	if len(sc.Meta) > 0 {
		meta, _ = json.Marshal(sc.Meta) // a map of strings always marshals
	}
	err = s.tx(ctx, nil, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO ilmek_schedules ("+scheduleCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
			sc.Name, sc.Graph, sc.Cron, sc.TimeZone, int64(sc.Every), input, string(meta), sc.Thread, sc.Overlap, sc.CatchUp, sc.MaxCatchUp, now.UnixNano(), now.UnixNano())
		return err
	})
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return sc, fmt.Errorf("sqlite: create schedule %q in %q: %w", sc.Name, s.path, checkpoint.ErrScheduleExists)
	}
	if err != nil {
		return sc, fmt.Errorf("sqlite: create schedule %q in %q: %w", sc.Name, s.path, err)
	}
	return sc, nil
}

// GetSchedule returns the named schedule (checkpoint.ScheduleStore).
func (s *Store) GetSchedule(ctx context.Context, name string) (checkpoint.Schedule, error) {
	sc, err := scanSchedule(s.r.QueryRowContext(ctx, "SELECT "+scheduleCols+" FROM ilmek_schedules WHERE name = ?", name))
	if errors.Is(err, sql.ErrNoRows) {
		return sc, s.noSchedule(name)
	}
	if err != nil {
		return sc, fmt.Errorf("sqlite: read schedule %q in %q: %w", name, s.path, err)
	}
	return sc, nil
}

// ListSchedules returns the schedules by name (checkpoint.ScheduleStore).
func (s *Store) ListSchedules(ctx context.Context) ([]checkpoint.Schedule, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT "+scheduleCols+" FROM ilmek_schedules ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("sqlite: list schedules in %q: %w", s.path, err)
	}
	defer rows.Close()
	var out []checkpoint.Schedule
	for rows.Next() {
		sc, err := scanSchedule(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list schedules in %q: %w", s.path, err)
		}
		out = append(out, sc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list schedules in %q: %w", s.path, err)
	}
	return out, nil
}

// exec runs one write of the named schedule and fails with ErrNoSchedule
// when it touched no row.
func (s *Store) exec(ctx context.Context, what, name, query string, args ...any) error {
	err := s.tx(ctx, nil, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return s.noSchedule(name)
		}
		if what == "delete" {
			_, err = tx.ExecContext(ctx, "DELETE FROM ilmek_schedule_firings WHERE schedule = ?", name)
		}
		return err
	})
	if err != nil && !errors.Is(err, checkpoint.ErrNoSchedule) {
		return fmt.Errorf("sqlite: %s schedule %q in %q: %w", what, name, s.path, err)
	}
	return err
}

// PauseSchedule pauses or resumes the named schedule
// (checkpoint.ScheduleStore).
func (s *Store) PauseSchedule(ctx context.Context, name string, paused bool) error {
	return s.exec(ctx, "pause", name, "UPDATE ilmek_schedules SET last_ns = CASE WHEN paused AND NOT ? THEN max(last_ns, ?) ELSE last_ns END, paused = ? WHERE name = ?",
		paused, time.Now().UnixNano(), paused, name)
}

// DeleteSchedule deletes the named schedule and its firings
// (checkpoint.ScheduleStore).
func (s *Store) DeleteSchedule(ctx context.Context, name string) error {
	return s.exec(ctx, "delete", name, "DELETE FROM ilmek_schedules WHERE name = ?", name)
}

// RecordFirings records firings and moves Last while it is still from and
// the schedule is not paused (checkpoint.ScheduleStore).
func (s *Store) RecordFirings(ctx context.Context, name string, from, to time.Time, firings []checkpoint.Firing) error {
	now := time.Now().UnixNano()
	err := s.tx(ctx, nil, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE ilmek_schedules SET last_ns = ? WHERE name = ? AND last_ns = ? AND NOT paused", to.UnixNano(), name, from.UnixNano())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			var one int
			if err := tx.QueryRowContext(ctx, "SELECT 1 FROM ilmek_schedules WHERE name = ?", name).Scan(&one); errors.Is(err, sql.ErrNoRows) {
				return s.noSchedule(name)
			}
			return fmt.Errorf("sqlite: record the firings of schedule %q from %v: %w (or it is paused)", name, from, checkpoint.ErrScheduleMoved)
		}
		for _, f := range firings {
			if _, err := tx.ExecContext(ctx, "INSERT INTO ilmek_schedule_firings (schedule, tick_ns, thread_id, skipped, request_id, fired_ns) VALUES (?, ?, ?, ?, ?, ?)",
				name, f.Tick.UnixNano(), f.Thread, f.Skipped, f.Request, now); err != nil {
				if strings.Contains(err.Error(), "UNIQUE constraint failed") {
					return fmt.Errorf("sqlite: record the firing of schedule %q at %v: %w (that tick is recorded)", name, f.Tick, checkpoint.ErrScheduleMoved)
				}
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, checkpoint.ErrScheduleMoved) && !errors.Is(err, checkpoint.ErrNoSchedule) {
		return fmt.Errorf("sqlite: record the firings of schedule %q in %q: %w", name, s.path, err)
	}
	return err
}

// ListFirings returns the schedule's latest firings, newest first
// (checkpoint.ScheduleStore).
func (s *Store) ListFirings(ctx context.Context, name string, limit int) ([]checkpoint.Firing, error) {
	if _, err := s.GetSchedule(ctx, name); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.r.QueryContext(ctx, "SELECT schedule, tick_ns, thread_id, skipped, request_id, fired_ns FROM ilmek_schedule_firings WHERE schedule = ? ORDER BY tick_ns DESC LIMIT ?", name, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list the firings of schedule %q in %q: %w", name, s.path, err)
	}
	defer rows.Close()
	var out []checkpoint.Firing
	for rows.Next() {
		var f checkpoint.Firing
		var tick, at int64
		if err := rows.Scan(&f.Schedule, &tick, &f.Thread, &f.Skipped, &f.Request, &at); err != nil {
			return nil, fmt.Errorf("sqlite: list the firings of schedule %q in %q: %w", name, s.path, err)
		}
		f.Tick, f.At = time.Unix(0, tick).UTC(), time.Unix(0, at).UTC()
		out = append(out, f)
	}
	return out, rows.Err()
}
