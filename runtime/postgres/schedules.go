package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

var _ checkpoint.ScheduleStore = (*Store)(nil)

// scheduleCols are the columns ScanSchedule reads, in its order.
const scheduleCols = "name, graph, cron, time_zone, every_ns, input, meta, thread, overlap, catch_up, max_catch_up, paused, created, last_tick"

// scanSchedule reads a row of scheduleCols.
func scanSchedule(row pgx.Row) (checkpoint.Schedule, error) {
	var s checkpoint.Schedule
	var every int64
	var meta map[string]string
	err := row.Scan(&s.Name, &s.Graph, &s.Cron, &s.TimeZone, &every, &s.Input, &meta, &s.Thread, &s.Overlap, &s.CatchUp, &s.MaxCatchUp, &s.Paused, &s.Created, &s.Last)
	s.Every = time.Duration(every)
	if len(meta) > 0 {
		s.Meta = meta
	}
	s.Created, s.Last = s.Created.UTC(), s.Last.UTC()
	return s, err
}

// CreateSchedule stores s (checkpoint.ScheduleStore).
func (s *Store) CreateSchedule(ctx context.Context, sc checkpoint.Schedule) (checkpoint.Schedule, error) {
	sc, err := checkpoint.ValidateSchedule(sc)
	if err != nil {
		return sc, err
	}
	tk, _ := sc.Ticks() // valid
	now := time.Now().UTC().Truncate(time.Microsecond)
	row := s.pool.QueryRow(ctx, "INSERT INTO "+s.t("ilmek_schedules")+" (name, graph, cron, time_zone, every_ns, input, meta, thread, overlap, catch_up, max_catch_up, created, last_tick, next_tick) "+
		"VALUES ($1, $2, $3, $4, $5, $6, $13, $7, $8, $9, $10, $11, $11, $12) RETURNING "+scheduleCols,
		sc.Name, sc.Graph, sc.Cron, sc.TimeZone, int64(sc.Every), []byte(sc.Input), sc.Thread, sc.Overlap, sc.CatchUp, sc.MaxCatchUp, now, tk.Next(now), metaJSON(sc.Meta))
	out, err := scanSchedule(row)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return sc, fmt.Errorf("postgres: create schedule %q in %s: %w", sc.Name, s.where(), checkpoint.ErrScheduleExists)
	}
	if err != nil {
		return sc, fmt.Errorf("postgres: create schedule %q in %s: %w", sc.Name, s.where(), err)
	}
	return out, nil
}

// metaJSON is a schedule's metadata as a JSON object.
func metaJSON(m map[string]string) []byte {
	if len(m) == 0 {
		return []byte("{}")
	}
	b, _ := json.Marshal(m) // a map of strings always marshals
	return b
}

// t names a table of the Store's schema.
func (s *Store) t(name string) string { return quote(s.schema) + "." + name }

// noSchedule is the error for an unknown schedule name.
func (s *Store) noSchedule(name string) error {
	return fmt.Errorf("postgres: schedule %q in %s: %w", name, s.where(), checkpoint.ErrNoSchedule)
}

// GetSchedule returns the named schedule (checkpoint.ScheduleStore).
func (s *Store) GetSchedule(ctx context.Context, name string) (checkpoint.Schedule, error) {
	sc, err := scanSchedule(s.pool.QueryRow(ctx, "SELECT "+scheduleCols+" FROM "+s.t("ilmek_schedules")+" WHERE name = $1", name))
	if errors.Is(err, pgx.ErrNoRows) {
		return sc, s.noSchedule(name)
	}
	if err != nil {
		return sc, fmt.Errorf("postgres: read schedule %q in %s: %w", name, s.where(), err)
	}
	return sc, nil
}

// ScheduleForUpdate locks the named schedule's row in tx, skipping it when
// another transaction holds it, and returns it; ok is false when the
// schedule is locked, paused or gone. It is how runtime/postgres/workers
// fires a schedule once: the tick's firing rows, its requests and the new
// last tick are written in tx.
func (s *Store) ScheduleForUpdate(ctx context.Context, tx pgx.Tx, name string) (sc checkpoint.Schedule, ok bool, err error) {
	sc, err = scanSchedule(tx.QueryRow(ctx, "SELECT "+scheduleCols+" FROM "+s.t("ilmek_schedules")+" WHERE name = $1 AND NOT paused FOR UPDATE SKIP LOCKED", name))
	if errors.Is(err, pgx.ErrNoRows) {
		return sc, false, nil
	}
	return sc, err == nil, err
}

// ListSchedules returns the schedules by name (checkpoint.ScheduleStore).
func (s *Store) ListSchedules(ctx context.Context) ([]checkpoint.Schedule, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+scheduleCols+" FROM "+s.t("ilmek_schedules")+" ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("postgres: list schedules in %s: %w", s.where(), err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (checkpoint.Schedule, error) { return scanSchedule(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: list schedules in %s: %w", s.where(), err)
	}
	return out, nil
}

// PauseSchedule pauses or resumes the named schedule
// (checkpoint.ScheduleStore).
func (s *Store) PauseSchedule(ctx context.Context, name string, paused bool) error {
	// A resumed schedule is scanned at once (next_tick): the scan moves
	// next_tick to its next tick.
	tag, err := s.pool.Exec(ctx, "UPDATE "+s.t("ilmek_schedules")+" SET last_tick = CASE WHEN paused AND NOT $2 THEN greatest(last_tick, $3) ELSE last_tick END, "+
		"next_tick = CASE WHEN paused AND NOT $2 THEN $3 ELSE next_tick END, paused = $2 WHERE name = $1", name, paused, time.Now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return fmt.Errorf("postgres: pause schedule %q in %s: %w", name, s.where(), err)
	}
	if tag.RowsAffected() == 0 {
		return s.noSchedule(name)
	}
	return nil
}

// DeleteSchedule deletes the named schedule and its firings
// (checkpoint.ScheduleStore).
func (s *Store) DeleteSchedule(ctx context.Context, name string) error {
	tag, err := s.pool.Exec(ctx, "DELETE FROM "+s.t("ilmek_schedules")+" WHERE name = $1", name)
	if err != nil {
		return fmt.Errorf("postgres: delete schedule %q in %s: %w", name, s.where(), err)
	}
	if tag.RowsAffected() == 0 {
		return s.noSchedule(name)
	}
	return nil
}

// RecordFirings records firings and moves Last while it is still from and
// the schedule is not paused (checkpoint.ScheduleStore).
func (s *Store) RecordFirings(ctx context.Context, name string, from, to time.Time, firings []checkpoint.Firing) error {
	sc, err := s.GetSchedule(ctx, name)
	if err != nil {
		return err
	}
	sc.Last = from
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return s.RecordFiringsTx(ctx, tx, sc, to, firings)
	})
	if err != nil && !errors.Is(err, checkpoint.ErrScheduleMoved) && !errors.Is(err, checkpoint.ErrNoSchedule) {
		return fmt.Errorf("postgres: record the firings of schedule %q in %s: %w", name, s.where(), err)
	}
	return err
}

// RecordFiringsTx is RecordFirings of sc's firings from sc.Last to to in
// the caller's transaction (the workers insert the firings' requests in
// it too); it also moves the schedule's next_tick to the tick after to.
func (s *Store) RecordFiringsTx(ctx context.Context, tx pgx.Tx, sc checkpoint.Schedule, to time.Time, firings []checkpoint.Firing) error {
	name, from := sc.Name, sc.Last
	tk, err := sc.Ticks()
	if err != nil {
		return err
	}
	tag, err := tx.Exec(ctx, "UPDATE "+s.t("ilmek_schedules")+" SET last_tick = $3, next_tick = $4 WHERE name = $1 AND last_tick = $2 AND NOT paused", name, from, to, tk.Next(to))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		if _, err := s.GetSchedule(ctx, name); err != nil {
			return err
		}
		return fmt.Errorf("postgres: record the firings of schedule %q from %v: %w (or it is paused)", name, from, checkpoint.ErrScheduleMoved)
	}
	for _, f := range firings {
		var req *int64
		if f.Request != 0 {
			req = &f.Request
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+s.t("ilmek_schedule_firings")+" (schedule, tick, thread_id, skipped, request_id) VALUES ($1, $2, $3, $4, $5)",
			name, f.Tick, f.Thread, f.Skipped, req); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "23505" {
				return fmt.Errorf("postgres: record the firing of schedule %q at %v: %w (that tick is recorded)", name, f.Tick, checkpoint.ErrScheduleMoved)
			}
			return err
		}
	}
	return nil
}

// ListFirings returns the schedule's latest firings, newest first
// (checkpoint.ScheduleStore).
func (s *Store) ListFirings(ctx context.Context, name string, limit int) ([]checkpoint.Firing, error) {
	if _, err := s.GetSchedule(ctx, name); err != nil {
		return nil, err
	}
	lim := "ALL"
	if limit > 0 {
		lim = fmt.Sprint(limit)
	}
	rows, err := s.pool.Query(ctx, "SELECT schedule, tick, thread_id, skipped, coalesce(request_id, 0), fired_at FROM "+s.t("ilmek_schedule_firings")+" WHERE schedule = $1 ORDER BY tick DESC LIMIT "+lim, name)
	if err != nil {
		return nil, fmt.Errorf("postgres: list the firings of schedule %q in %s: %w", name, s.where(), err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (checkpoint.Firing, error) {
		var f checkpoint.Firing
		err := r.Scan(&f.Schedule, &f.Tick, &f.Thread, &f.Skipped, &f.Request, &f.At)
		f.Tick, f.At = f.Tick.UTC(), f.At.UTC()
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list the firings of schedule %q in %s: %w", name, s.where(), err)
	}
	return out, nil
}
