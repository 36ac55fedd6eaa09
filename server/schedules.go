package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// ActionSchedule is asked of the Access hook for every schedule route
// (list, read, create, pause, resume, delete), with a ThreadRef whose ID is
// empty, whose Graph is the schedule's graph and whose Meta is the
// schedule's metadata ("owner": the principal that created it) with
// "schedule": its name. A schedule starts runs unattended, so the default
// hook, OwnerOnly, refuses it: give the principals who may schedule runs
// an Access hook that allows it. The firings' threads carry the
// schedule's metadata and the server's thread keys, so the server lists
// and serves them like the threads it creates, owned by the schedule's
// creator.
const ActionSchedule Action = "schedule"

// ScheduleView is the JSON form of a stored schedule
// (checkpoint.Schedule).
type ScheduleView struct {
	Name       string                   `json:"name"`
	Graph      string                   `json:"graph"`
	Cron       string                   `json:"cron,omitempty"`
	TimeZone   string                   `json:"time_zone,omitempty"`
	Every      string                   `json:"every,omitempty"`
	Input      json.RawMessage          `json:"input,omitempty"`
	Thread     string                   `json:"thread"`
	Overlap    checkpoint.DoubleTexting `json:"overlap"`
	CatchUp    string                   `json:"catch_up"`
	MaxCatchUp int                      `json:"max_catch_up"`
	// Metadata is what every firing's thread gets ("owner": the schedule's
	// creator).
	Metadata map[string]string `json:"metadata"`
	Paused   bool              `json:"paused"`
	Created  time.Time         `json:"created"`
	Last     time.Time         `json:"last"`
	// Next is the schedule's next tick.
	Next time.Time `json:"next"`
	// Firings are the latest firings, newest first (GET of one schedule).
	Firings []checkpoint.Firing `json:"firings,omitempty"`
}

// createScheduleBody is the body of POST /schedules.
type createScheduleBody struct {
	Name       string                   `json:"name"`
	Graph      string                   `json:"graph"`
	Cron       string                   `json:"cron"`
	TimeZone   string                   `json:"time_zone"`
	Every      string                   `json:"every"`
	Input      json.RawMessage          `json:"input"`
	Thread     string                   `json:"thread"`
	Overlap    checkpoint.DoubleTexting `json:"overlap"`
	CatchUp    string                   `json:"catch_up"`
	MaxCatchUp int                      `json:"max_catch_up"`
	Metadata   map[string]string        `json:"metadata"`
}

// scheduleFirings is how many firings GET /schedules/{schedule} shows.
const scheduleFirings = 20

func viewSchedule(sc checkpoint.Schedule) ScheduleView {
	v := ScheduleView{Name: sc.Name, Graph: sc.Graph, Cron: sc.Cron, TimeZone: sc.TimeZone, Input: sc.Input, Thread: sc.Thread,
		Overlap: sc.Overlap, CatchUp: sc.CatchUp, MaxCatchUp: sc.MaxCatchUp, Paused: sc.Paused, Created: sc.Created, Last: sc.Last}
	if sc.Every > 0 {
		v.Every = sc.Every.String()
	}
	v.Metadata = map[string]string{}
	for k, val := range sc.Meta {
		if !reservedMeta(k) || k == metaOwner {
			v.Metadata[k] = val
		}
	}
	if tk, err := sc.Ticks(); err == nil {
		v.Next = tk.Next(sc.Last)
	}
	return v
}

// schedules returns the checkpointer's schedule store, or a 501.
func (s *Server) schedules() (checkpoint.ScheduleStore, error) {
	ss, ok := s.cfg.Checkpointer.(checkpoint.ScheduleStore)
	if !ok {
		return nil, errf(http.StatusNotImplemented, "no-schedules", "Schedules not kept",
			fmt.Sprintf("the server's store (%T) keeps no schedules; use the memory, SQLite or PostgreSQL store", s.cfg.Checkpointer))
	}
	return ss, nil
}

// scheduleRef is the ThreadRef of an Access check of a schedule.
func scheduleRef(sc checkpoint.Schedule) ThreadRef {
	meta := map[string]string{}
	for k, v := range sc.Meta {
		if !reservedMeta(k) || k == metaOwner {
			meta[k] = v
		}
	}
	meta["schedule"] = sc.Name
	return ThreadRef{Graph: sc.Graph, Meta: meta}
}

// scheduleAccess runs the Access hook for a schedule.
func (s *Server) scheduleAccess(ctx context.Context, p Principal, sc checkpoint.Schedule) error {
	name := sc.Name
	if err := s.cfg.Access(ctx, p, scheduleRef(sc), ActionSchedule); err != nil {
		s.log.Info("server: access refused", "principal", p.ID, "schedule", name, "action", ActionSchedule, "err", err)
		if !s.cfg.RevealForbidden {
			return notFound("no schedule " + name)
		}
		return errf(http.StatusForbidden, "forbidden", "Forbidden", "the principal may not manage schedule "+name)
	}
	return nil
}

// scheduleProblem maps the schedule store's errors.
func scheduleProblem(err error) error {
	switch {
	case errors.Is(err, checkpoint.ErrNoSchedule):
		return notFound(err.Error())
	case errors.Is(err, checkpoint.ErrScheduleExists):
		return errf(http.StatusConflict, "schedule-exists", "Schedule exists", err.Error()+"; delete it first or pick another name")
	case errors.Is(err, checkpoint.ErrInvalidSchedule):
		return errf(http.StatusUnprocessableEntity, "invalid-schedule", "Invalid schedule", err.Error())
	}
	return err
}

func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request, p Principal) error {
	ss, err := s.schedules()
	if err != nil {
		return err
	}
	all, err := ss.ListSchedules(r.Context())
	if err != nil {
		return err
	}
	out := struct {
		Schedules []ScheduleView `json:"schedules"`
	}{Schedules: []ScheduleView{}}
	for _, sc := range all {
		if s.cfg.Access(r.Context(), p, scheduleRef(sc), ActionSchedule) == nil {
			out.Schedules = append(out.Schedules, viewSchedule(sc))
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) createSchedule(w http.ResponseWriter, r *http.Request, p Principal) error {
	ss, err := s.schedules()
	if err != nil {
		return err
	}
	var b createScheduleBody
	if err := decode(r, &b); err != nil {
		return err
	}
	if len(s.names) == 1 && b.Graph == "" {
		b.Graph = s.names[0]
	}
	if _, ok := s.graphs[b.Graph]; !ok {
		return errf(http.StatusUnprocessableEntity, "unknown-graph", "Unknown graph",
			fmt.Sprintf("no graph %q is served; GET /graphs lists them", b.Graph))
	}
	meta := map[string]string{}
	for k, v := range b.Metadata {
		if reservedMeta(k) || k == checkpoint.MetaSchedule || k == checkpoint.MetaTick {
			return badRequest("metadata key " + k + ` is reserved: the server keeps the threads' graph, creation time, id, owner, schedule and tick`)
		}
		meta[k] = v
	}
	// The firings' threads are the server's threads, owned by the
	// schedule's creator.
	meta[metaOwner], meta[metaGraph], meta[metaID], meta[metaCreated] = p.ID, b.Graph, "{thread}", "{time}"
	sc := checkpoint.Schedule{Name: b.Name, Graph: b.Graph, Cron: b.Cron, TimeZone: b.TimeZone, Input: b.Input,
		Thread: b.Thread, Overlap: b.Overlap, CatchUp: b.CatchUp, MaxCatchUp: b.MaxCatchUp, Meta: meta}
	if b.Every != "" {
		if sc.Every, err = time.ParseDuration(b.Every); err != nil {
			return errf(http.StatusUnprocessableEntity, "invalid-schedule", "Invalid schedule",
				fmt.Sprintf("every %q is not a duration such as 90s or 1h30m", b.Every))
		}
	}
	if err := s.scheduleAccess(r.Context(), p, sc); err != nil {
		return err
	}
	created, err := ss.CreateSchedule(r.Context(), sc)
	if err != nil {
		return scheduleProblem(err)
	}
	w.Header().Set("Location", "/schedules/"+created.Name)
	return writeJSON(w, http.StatusCreated, viewSchedule(created))
}

// schedule reads the route's schedule and checks the principal's access.
func (s *Server) schedule(r *http.Request, p Principal) (checkpoint.ScheduleStore, checkpoint.Schedule, error) {
	ss, err := s.schedules()
	if err != nil {
		return nil, checkpoint.Schedule{}, err
	}
	name := r.PathValue("schedule")
	sc, err := ss.GetSchedule(r.Context(), name)
	if err != nil {
		return nil, sc, scheduleProblem(err)
	}
	return ss, sc, s.scheduleAccess(r.Context(), p, sc)
}

func (s *Server) getSchedule(w http.ResponseWriter, r *http.Request, p Principal) error {
	ss, sc, err := s.schedule(r, p)
	if err != nil {
		return err
	}
	v := viewSchedule(sc)
	if v.Firings, err = ss.ListFirings(r.Context(), sc.Name, scheduleFirings); err != nil {
		return scheduleProblem(err)
	}
	return writeJSON(w, http.StatusOK, v)
}

func (s *Server) deleteSchedule(w http.ResponseWriter, r *http.Request, p Principal) error {
	ss, sc, err := s.schedule(r, p)
	if err != nil {
		return err
	}
	if err := ss.DeleteSchedule(r.Context(), sc.Name); err != nil {
		return scheduleProblem(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) pauseSchedule(w http.ResponseWriter, r *http.Request, p Principal) error {
	return s.setPaused(w, r, p, true)
}

func (s *Server) resumeSchedule(w http.ResponseWriter, r *http.Request, p Principal) error {
	return s.setPaused(w, r, p, false)
}

// setPaused pauses or resumes the route's schedule and answers with it.
func (s *Server) setPaused(w http.ResponseWriter, r *http.Request, p Principal, paused bool) error {
	ss, sc, err := s.schedule(r, p)
	if err != nil {
		return err
	}
	if err := ss.PauseSchedule(r.Context(), sc.Name, paused); err != nil {
		return scheduleProblem(err)
	}
	if sc, err = ss.GetSchedule(r.Context(), sc.Name); err != nil {
		return scheduleProblem(err)
	}
	return writeJSON(w, http.StatusOK, viewSchedule(sc))
}
