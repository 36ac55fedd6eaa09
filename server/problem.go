package server

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/ilmek-go/ilmek/runtime"
)

// Problem is an error response body (RFC 9457, application/problem+json).
// Type is a URN naming the kind of problem (urn:ilmek:problem:<slug>);
// the other members are those of the RFC, plus the extensions below.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	// Interrupt is the id of the interrupt a refused resume is about.
	Interrupt string `json:"interrupt,omitempty"`
	// Reasons lists why a thread's checkpoint cannot run on the graph
	// version (an incompatible thread).
	Reasons []Reason `json:"reasons,omitempty"`
	// ErrorID ties an internal error to the server's log record of it.
	ErrorID string `json:"error_id,omitempty"`
}

// Reason is one item of Problem.Reasons (a runtime.IncompatibleReason).
type Reason struct {
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// ProblemTypePrefix starts the Type of every Problem the server writes.
const ProblemTypePrefix = "urn:ilmek:problem:"

// problemOf maps an error to its HTTP status and problem. Errors it does
// not know are internal: their text is logged, never sent.
func problemOf(err error) (Problem, bool) {
	p := func(status int, slug, title string) Problem {
		return Problem{Type: ProblemTypePrefix + slug, Title: title, Status: status, Detail: err.Error()}
	}
	var (
		re  *runtime.ResumeError
		ie  *runtime.IncompatibleError
		in  *InputError
		he  *httpError
		mbe *http.MaxBytesError
		oe  *runtime.OptionError
	)
	switch {
	case errors.As(err, &he):
		return Problem{Type: ProblemTypePrefix + he.slug, Title: he.title, Status: he.status, Detail: he.detail}, true
	case errors.As(err, &mbe):
		return Problem{Type: ProblemTypePrefix + "body-too-large", Title: "Request body too large", Status: http.StatusRequestEntityTooLarge,
			Detail: "the request body is larger than the server accepts; send a smaller one"}, true
	case errors.As(err, &re):
		var q Problem
		switch {
		case errors.Is(re.Reason, runtime.ErrNotInterrupted):
			q = p(http.StatusConflict, "not-interrupted", "The thread is not waiting on an interrupt")
		case errors.Is(re.Reason, runtime.ErrWaitingOnPerson):
			q = p(http.StatusConflict, "waiting-on-person", "The thread is waiting on interrupts")
		case errors.Is(re.Reason, runtime.ErrAnswerConflict):
			q = p(http.StatusConflict, "answer-conflict", "The interrupt already holds a different answer")
		case errors.Is(re.Reason, runtime.ErrAmbiguousAnswer):
			q = p(http.StatusUnprocessableEntity, "ambiguous-answer", "Answer each open interrupt by id")
		case errors.Is(re.Reason, runtime.ErrUnknownInterrupt):
			q = p(http.StatusUnprocessableEntity, "unknown-interrupt", "No such pending interrupt")
		case errors.Is(re.Reason, runtime.ErrMissingAnswer):
			q = p(http.StatusUnprocessableEntity, "missing-answer", "An open interrupt has no answer")
		case errors.Is(re.Reason, runtime.ErrAnswerType):
			q = p(http.StatusUnprocessableEntity, "answer-type", "The answer does not fit the type the interrupt expects")
		default:
			q = p(http.StatusConflict, "resume-refused", "The resume was refused")
		}
		q.Interrupt = re.Interrupt
		return q, true
	case errors.As(err, &ie):
		q := p(http.StatusConflict, "incompatible", "The thread's checkpoint is incompatible with this graph version")
		q.Detail = "thread " + ie.ThreadID + "'s checkpoint was written by another graph version and cannot continue on this one; reasons says why"
		for _, r := range ie.Reasons {
			q.Reasons = append(q.Reasons, Reason{Kind: string(r.Kind), Subject: r.Subject, Message: r.Msg, Fix: r.Fix})
		}
		return q, true
	case errors.Is(err, runtime.ErrThreadID):
		return p(http.StatusBadRequest, "bad-thread-id", "The thread id is not allowed"), true
	case errors.Is(err, runtime.ErrThreadMoved):
		q := p(http.StatusConflict, "thread-moved", "The thread is not at the expected checkpoint")
		q.Detail = "the thread's latest checkpoint is not expected_checkpoint_id: it moved on (or this request was taken already); nothing was written, read the thread and decide again"
		return q, true
	case errors.Is(err, runtime.ErrThreadBusy):
		return p(http.StatusConflict, "thread-busy", "The thread is busy"), true
	case errors.As(err, &in):
		return p(http.StatusBadRequest, "bad-input", "The input does not fit the graph"), true
	case errors.As(err, &oe):
		return p(http.StatusBadRequest, "bad-options", "The run's options were refused"), true
	case errors.Is(err, runtime.ErrNotFound):
		return p(http.StatusNotFound, "not-found", "Not found"), true
	}
	return Problem{}, false
}

// httpError is an error the server makes itself, with its status.
type httpError struct {
	status      int
	slug, title string
	detail      string
}

func (e *httpError) Error() string { return e.detail }

func errf(status int, slug, title, detail string) error {
	return &httpError{status: status, slug: slug, title: title, detail: detail}
}

func badRequest(detail string) error {
	return errf(http.StatusBadRequest, "bad-request", "Bad request", detail)
}

func notFound(detail string) error {
	return errf(http.StatusNotFound, "not-found", "Not found", detail)
}

// writeProblem writes err as a problem. An error the mapping does not
// know is logged with an id, and the response carries only the id.
func (s *Server) writeProblem(w http.ResponseWriter, r *http.Request, err error) {
	p, ok := problemOf(err)
	if !ok {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		s.log.LogAttrs(r.Context(), slog.LevelError, "server: internal error", slog.String("error_id", id),
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
		p = Problem{Type: ProblemTypePrefix + "internal", Title: "Internal server error", Status: http.StatusInternalServerError,
			Detail: "the server failed; its log has the details under error_id", ErrorID: id}
	}
	p.Instance = r.URL.Path
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}
