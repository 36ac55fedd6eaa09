package checkpoint

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// memSchedule is a schedule Memory keeps, with its firings, oldest first.
type memSchedule struct {
	s       Schedule
	firings []Firing
}

var _ ScheduleStore = (*Memory)(nil)

// CreateSchedule stores s (ScheduleStore).
func (m *Memory) CreateSchedule(ctx context.Context, s Schedule) (Schedule, error) {
	s, err := ValidateSchedule(s)
	if err != nil {
		return s, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.scheds == nil {
		m.scheds = map[string]*memSchedule{}
	}
	if m.scheds[s.Name] != nil {
		return s, fmt.Errorf("create schedule %q: %w", s.Name, ErrScheduleExists)
	}
	s.Paused = false
	s.Created = time.Now().UTC()
	s.Last = s.Created
	s.Input, s.Meta = slices.Clone(s.Input), maps.Clone(s.Meta)
	m.scheds[s.Name] = &memSchedule{s: s}
	return s, nil
}

// schedule returns the named schedule; m.mu is held.
func (m *Memory) schedule(name string) (*memSchedule, error) {
	if ms := m.scheds[name]; ms != nil {
		return ms, nil
	}
	return nil, fmt.Errorf("schedule %q: %w", name, ErrNoSchedule)
}

// GetSchedule returns the named schedule (ScheduleStore).
func (m *Memory) GetSchedule(ctx context.Context, name string) (Schedule, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, err := m.schedule(name)
	if err != nil {
		return Schedule{}, err
	}
	s := ms.s
	s.Input, s.Meta = slices.Clone(s.Input), maps.Clone(s.Meta)
	return s, nil
}

// ListSchedules returns the schedules by name (ScheduleStore).
func (m *Memory) ListSchedules(ctx context.Context) ([]Schedule, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Schedule, 0, len(m.scheds))
	for _, ms := range m.scheds {
		s := ms.s
		s.Input, s.Meta = slices.Clone(s.Input), maps.Clone(s.Meta)
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Schedule) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// PauseSchedule pauses or resumes the named schedule (ScheduleStore).
func (m *Memory) PauseSchedule(ctx context.Context, name string, paused bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, err := m.schedule(name)
	if err != nil {
		return err
	}
	if ms.s.Paused && !paused {
		if now := time.Now().UTC(); now.After(ms.s.Last) {
			ms.s.Last = now
		}
	}
	ms.s.Paused = paused
	return nil
}

// DeleteSchedule deletes the named schedule and its firings
// (ScheduleStore).
func (m *Memory) DeleteSchedule(ctx context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.schedule(name); err != nil {
		return err
	}
	delete(m.scheds, name)
	return nil
}

// RecordFirings records firings and moves Last while it is still from and
// the schedule is not paused (ScheduleStore).
func (m *Memory) RecordFirings(ctx context.Context, name string, from, to time.Time, firings []Firing) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, err := m.schedule(name)
	if err != nil {
		return err
	}
	if !ms.s.Last.Equal(from) {
		return fmt.Errorf("record the firings of schedule %q from %v: %w (its last tick is %v)", name, from, ErrScheduleMoved, ms.s.Last)
	}
	if ms.s.Paused {
		return fmt.Errorf("record the firings of schedule %q from %v: %w (it is paused)", name, from, ErrScheduleMoved)
	}
	now := time.Now().UTC()
	for _, f := range firings {
		for _, old := range ms.firings {
			if old.Tick.Equal(f.Tick) {
				return fmt.Errorf("record the firing of schedule %q at %v: %w (that tick is recorded)", name, f.Tick, ErrScheduleMoved)
			}
		}
	}
	for _, f := range firings {
		f.Schedule, f.At = name, now
		ms.firings = append(ms.firings, f)
	}
	ms.s.Last = to
	return nil
}

// ListFirings returns the schedule's latest firings, newest first
// (ScheduleStore).
func (m *Memory) ListFirings(ctx context.Context, name string, limit int) ([]Firing, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, err := m.schedule(name)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(ms.firings)
	slices.SortFunc(out, func(a, b Firing) int { return b.Tick.Compare(a.Tick) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
