package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Schedule is a stored schedule: a graph run at each tick of a cron
// expression (in a time zone) or of an interval, on a thread named by a
// template. The store keeps it (ScheduleStore); the PostgreSQL workers
// (runtime/postgres/workers) or the in-process waker (runtime/waker) fire
// it.
type Schedule struct {
	// Name names the schedule; unique in its store.
	Name string `json:"name"`
	// Graph names the graph that runs the firings (a worker's or a
	// waker's graph by that name).
	Graph string `json:"graph"`
	// Cron is a cron expression of five fields (minute, hour, day of
	// month, month, day of week) or a descriptor (@daily, @hourly),
	// parsed by github.com/robfig/cron/v3; "" when Every is set. An
	// expression without a tick in the next five years (a date that does
	// not exist: 30 February) is refused.
	Cron string `json:"cron,omitempty"`
	// TimeZone is the IANA zone the cron expression is read in (e.g.
	// "Europe/Istanbul"); "" is UTC. Across a daylight saving change the
	// expression follows the wall clock, as robfig/cron does: a time the
	// clocks skip has no tick that day ("30 2 * * *" in America/New_York
	// does not fire on 2026-03-08), and a time they repeat ticks twice,
	// once in each offset ("30 1 * * *" fires at 01:30 EDT and at 01:30
	// EST on 2026-11-01). Pick a time outside the change (or UTC) for a
	// job that must run exactly once a day.
	TimeZone string `json:"time_zone,omitempty"`
	// Every is a fixed interval of at least a second, in whole
	// microseconds, between ticks, which fall on its multiples since the
	// Unix epoch; 0 when Cron is set.
	Every time.Duration `json:"every,omitempty"`
	// Input is the JSON of each firing's start input; nil is the graph's
	// zero input.
	Input json.RawMessage `json:"input,omitempty"`
	// Meta is metadata every firing's thread gets, besides MetaSchedule
	// and MetaTick (which it may not set). In its values {schedule} stands
	// for Name, {tick} for the tick as in Thread, {time} for the tick in
	// RFC 3339 and {thread} for the firing's thread id; the server records
	// the schedule's creator as "owner" and its own thread keys there, so
	// that it serves the firings' threads.
	Meta map[string]string `json:"meta,omitempty"`
	// Thread is the template of a firing's thread id: {schedule} stands
	// for Name, {tick} for the tick in UTC (20060102T150405Z). Default
	// DefaultScheduleThread, a thread per tick; a template without {tick}
	// runs every firing on one thread.
	Thread string `json:"thread"`
	// Overlap is what a tick does while the schedule's previous firing
	// still runs, a runtime.DoubleTexting: "reject" (the default) skips the
	// tick, "enqueue" fires it anyway (on the same thread it runs after the
	// previous firing), "cancel-and-replace" stops the previous firing at
	// its next superstep boundary and fires.
	Overlap DoubleTexting `json:"overlap"`
	// CatchUp is what the ticks missed while nothing fired the schedule
	// (every process was down) become: CatchUpNone, CatchUpOne or
	// CatchUpAll (at most MaxCatchUp, the latest; 0 is
	// DefaultMaxCatchUp, at most MaxMaxCatchUp).
	CatchUp    string `json:"catch_up"`
	MaxCatchUp int    `json:"max_catch_up"`
	// Paused schedules do not fire; the ticks that pass while paused are
	// not caught up on resume.
	Paused bool `json:"paused"`
	// Created is when the store created the schedule.
	Created time.Time `json:"created"`
	// Last is the latest tick fired or passed over (Created before the
	// first): the next firing is the first tick after it.
	Last time.Time `json:"last"`
}

// Firing is one tick of a schedule that fired or was skipped.
type Firing struct {
	Schedule string    `json:"schedule"`
	Tick     time.Time `json:"tick"`
	// Thread is the firing's thread id.
	Thread string `json:"thread"`
	// Skipped says why the tick did not run (SkippedOverlap,
	// SkippedWaiting); "" for a firing that ran.
	Skipped string `json:"skipped,omitempty"`
	// Request is the id of the firing's run request on PostgreSQL (0 for
	// the in-process waker and for a skipped tick).
	Request int64 `json:"request,omitempty"`
	// At is when the firing was recorded.
	At time.Time `json:"at"`
}

// The reasons of a skipped tick (Firing.Skipped).
const (
	// SkippedOverlap: the schedule's previous firing still ran under the
	// reject overlap policy.
	SkippedOverlap = "overlap"
	// SkippedWaiting: the one thread of a template without {tick} waits
	// on open interrupts, so a run started on it would be refused
	// (runtime.ErrWaitingOnPerson); answer them and the next tick runs.
	// The in-process waker records it; on PostgreSQL such a tick's
	// request is queued and ends in state error with that refusal.
	SkippedWaiting = "waiting"
)

// The metadata keys of a firing's thread: the schedule's name and the
// tick (TickFormat). The firers set them when they start the thread, so
// ListThreads finds a schedule's threads (ThreadQuery.Meta).
const (
	MetaSchedule = "ilmek.schedule"
	MetaTick     = "ilmek.tick"
)

// The catch-up policies of a schedule.
const (
	CatchUpNone = "none"
	CatchUpOne  = "one"
	CatchUpAll  = "all"
)

// The defaults of a schedule's fields.
const (
	DefaultScheduleThread = "{schedule}@{tick}"
	DefaultMaxCatchUp     = 100
	// MaxMaxCatchUp is the largest MaxCatchUp a store keeps (PostgreSQL
	// keeps it in an integer column).
	MaxMaxCatchUp = math.MaxInt32
	// TickFormat spells a tick in a firing's thread id.
	TickFormat = "20060102T150405Z"
)

// ScheduleStore is a store that keeps schedules and their firings:
// checkpoint.Memory, runtime/sqlite and runtime/postgres implement it.
type ScheduleStore interface {
	// CreateSchedule validates s (ValidateSchedule), fills in its
	// defaults, sets Created and Last to the store's clock, stores it and
	// returns it. It fails with ErrScheduleExists for a name taken.
	CreateSchedule(ctx context.Context, s Schedule) (Schedule, error)
	// GetSchedule returns the schedule, or ErrNoSchedule.
	GetSchedule(ctx context.Context, name string) (Schedule, error)
	// ListSchedules returns every schedule, by name.
	ListSchedules(ctx context.Context) ([]Schedule, error)
	// PauseSchedule pauses the schedule (paused true) or resumes it;
	// resuming moves Last to the store's clock, so the ticks of the pause
	// do not fire. ErrNoSchedule for an unknown name.
	PauseSchedule(ctx context.Context, name string, paused bool) error
	// DeleteSchedule deletes the schedule and its firings; the runs it
	// started are not touched. ErrNoSchedule for an unknown name.
	DeleteSchedule(ctx context.Context, name string) error
	// RecordFirings moves the schedule's Last from from to to and records
	// the firings, in one transaction, only while Last is still from and
	// the schedule is not paused: it fails with ErrScheduleMoved when
	// another firer moved it first or the schedule was paused since the
	// firer read it (then nothing is recorded), so a tick is recorded
	// once however many firers race, and none after PauseSchedule
	// returned.
	RecordFirings(ctx context.Context, name string, from, to time.Time, firings []Firing) error
	// ListFirings returns the schedule's latest firings, newest first, at
	// most limit (all when limit <= 0).
	ListFirings(ctx context.Context, name string, limit int) ([]Firing, error)
}

var (
	// ErrNoSchedule is matched by the error for a schedule name the store
	// does not hold.
	ErrNoSchedule = errors.New("no such schedule")
	// ErrScheduleExists is matched by CreateSchedule's error for a name
	// taken: delete the schedule first, or pick another name.
	ErrScheduleExists = errors.New("a schedule of that name exists")
	// ErrScheduleMoved is matched by RecordFirings' error when the
	// schedule's Last is no longer the one its caller read: another firer
	// recorded those ticks.
	ErrScheduleMoved = errors.New("the schedule fired elsewhere")
	// ErrInvalidSchedule is matched by the error of a schedule that cannot
	// run (ValidateSchedule).
	ErrInvalidSchedule = errors.New("invalid schedule")
)

// ThreadOf returns the thread id of the schedule's firing at tick.
func (s Schedule) ThreadOf(tick time.Time) string {
	t := s.Thread
	if t == "" {
		t = DefaultScheduleThread
	}
	return strings.NewReplacer("{schedule}", s.Name, "{tick}", tick.UTC().Format(TickFormat)).Replace(t)
}

// ThreadMeta returns the metadata of the schedule's firing at tick: Meta,
// its placeholders replaced, with MetaSchedule and MetaTick.
func (s Schedule) ThreadMeta(tick time.Time) map[string]string {
	r := strings.NewReplacer("{schedule}", s.Name, "{tick}", tick.UTC().Format(TickFormat),
		"{time}", tick.UTC().Format(time.RFC3339Nano), "{thread}", s.ThreadOf(tick))
	m := make(map[string]string, len(s.Meta)+2)
	for k, v := range s.Meta {
		m[k] = r.Replace(v)
	}
	m[MetaSchedule], m[MetaTick] = s.Name, tick.UTC().Format(TickFormat)
	return m
}

// ThreadPerTick reports whether each firing has a thread of its own (the
// template holds {tick}).
func (s Schedule) ThreadPerTick() bool {
	return s.Thread == "" || strings.Contains(s.Thread, "{tick}")
}

// ValidateSchedule checks s and returns it with its defaults filled in
// (Thread, Overlap, CatchUp, MaxCatchUp); its error matches
// ErrInvalidSchedule and names the field and the fix.
func ValidateSchedule(s Schedule) (Schedule, error) {
	bad := func(format string, a ...any) (Schedule, error) {
		return s, fmt.Errorf("%w %q: %s", ErrInvalidSchedule, s.Name, fmt.Sprintf(format, a...))
	}
	if s.Name == "" || strings.ContainsAny(s.Name, "/?#%{}") || len(s.Name) > 200 {
		return bad("a name must be non-empty, at most 200 bytes, without '/', '?', '#', '%%', '{' or '}'")
	}
	if s.Graph == "" {
		return bad("no graph: name the graph its firings run")
	}
	if s.Thread == "" {
		s.Thread = DefaultScheduleThread
	}
	if probe := s.ThreadOf(time.Unix(0, 0)); strings.ContainsAny(probe, "/?#%{}") {
		return bad("thread template %q: a thread id holds no '/', '?', '#', '%%', and the only placeholders are {schedule} and {tick}", s.Thread)
	}
	if len(s.Input) > 0 && !json.Valid(s.Input) {
		return bad("input is not JSON")
	}
	for k := range s.Meta {
		if k == "" || k == MetaSchedule || k == MetaTick {
			return bad("metadata key %q: keys are non-empty, and %s and %s are the firers'", k, MetaSchedule, MetaTick)
		}
	}
	if _, err := s.Ticks(); err != nil {
		return s, err
	}
	switch s.Overlap {
	case "", DoubleTextReject, "skip":
		s.Overlap = DoubleTextReject
	case DoubleTextEnqueue, DoubleTextCancelReplace:
	default:
		return bad("overlap %q: want reject (skip), enqueue or cancel-and-replace", s.Overlap)
	}
	switch s.CatchUp {
	case "":
		s.CatchUp = CatchUpNone
	case CatchUpNone, CatchUpOne, CatchUpAll:
	default:
		return bad("catch-up %q: want none, one or all", s.CatchUp)
	}
	switch {
	case s.MaxCatchUp < 0:
		return bad("max catch-up %d is negative", s.MaxCatchUp)
	case s.MaxCatchUp > MaxMaxCatchUp:
		return bad("max catch-up %d is over %d; use at most that (or CatchUpAll with the default, %d)", s.MaxCatchUp, MaxMaxCatchUp, DefaultMaxCatchUp)
	case s.MaxCatchUp == 0:
		s.MaxCatchUp = DefaultMaxCatchUp
	}
	return s, nil
}
