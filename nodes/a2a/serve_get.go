package a2a

import (
	"context"
	"errors"
	"fmt"

	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// A task that waits (working on a timer, input-required) can end without
// a message to the Server: a waker wakes its thread when the timer is
// due, a person answers through the server's API or the ilmek command.
// tasks/get of such a task therefore reads its thread again, and the
// next message on its context settles it before it runs, so that the
// task shows how it went on under its id and the message is a task of its
// own. A task that ended (completed, failed, canceled) is read from the
// record.

// standing is where a thread stands: as a run ended, or as read
// (Server.stand).
type standing struct {
	status  runtime.Status
	pending []runtime.PendingInterrupt
	err     error
	output  func() string
}

// stand reads where a context's thread stands, changing nothing: the
// facts the server and ilmek give the status rule, the latest checkpoint
// and how the last run ended from the thread's record.
func (s *Server) stand(ctx context.Context, contextID string) (standing, error) {
	var outcome checkpoint.ThreadOutcome
	if s.readRecord != nil {
		info, err := s.readRecord(ctx, contextID)
		if err != nil {
			return standing{}, err
		}
		if info != nil {
			outcome = info.Outcome
		}
	}
	return s.standAt(ctx, contextID, outcome)
}

// getTask is tasks/get of task id: its record, read again from its
// thread while it waits. A task whose thread is gone (deleted) is not
// found; one the Server does not keep (MaxTasks, a restart) is read from
// its thread when the thread's record names it (recall), and is not
// found otherwise.
func (s *Server) getTask(ctx context.Context, id string) (*Task, error) {
	t, err := s.refresh(ctx, id, 0)
	if err == nil && t == nil {
		t, err = s.recall(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, &RPCError{Method: "tasks/get", Code: CodeTaskNotFound, Message: fmt.Sprintf("task %q not found", id)}
	}
	return t, nil
}

// settle brings the task contextID's last message left open up to where
// its thread stands (refresh), if there is one. It is called by a message
// of the context being answered (busy), before its run.
func (s *Server) settle(ctx context.Context, contextID string) error {
	s.mu.Lock()
	id, ok := s.open[contextID]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	_, err := s.refresh(ctx, id, 1)
	return err
}

// enter and leave count a message of contextID being answered.
func (s *Server) enter(contextID string) {
	s.mu.Lock()
	s.busy[contextID]++
	s.mu.Unlock()
}

func (s *Server) leave(contextID string) {
	s.mu.Lock()
	if s.busy[contextID]--; s.busy[contextID] == 0 {
		delete(s.busy, contextID)
	}
	s.mu.Unlock()
}

// refresh returns task id's record (nil when there is none), and for a
// task that waits, first records it as its thread stands when that is
// not what the record says. A task whose context has messages being
// answered beyond own (the caller's) is theirs to record: its record
// stands, as does one written while the thread was read.
func (s *Server) refresh(ctx context.Context, id string, own int) (*Task, error) {
	s.mu.Lock()
	t, seq := s.tasks[id], s.seq[id]
	waits := t != nil && s.open[t.ContextID] == id && s.busy[t.ContextID] <= own
	s.mu.Unlock()
	if !waits {
		return t, nil
	}
	st, err := s.stand(ctx, t.ContextID)
	if err != nil && !errors.Is(err, runtime.ErrNotFound) {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.seq[id] != seq || s.busy[t.ContextID] > own:
		return s.tasks[id], nil
	case err != nil:
		// The thread is gone (deleted): so is its task, and the context's
		// next message starts a task of its own.
		delete(s.open, t.ContextID)
		delete(s.tasks, id)
		delete(s.seq, id)
		return nil, nil
	case same(t, st):
		return t, nil
	}
	return s.record(id, t.ContextID, st), nil
}

// same reports whether t, a task that waits, says what st does: its
// state, and the interrupts it lists.
func same(t *Task, st standing) bool {
	if t.Status.State != stateOf(st.status) || t.Status.Message == nil {
		return false
	}
	text, _ := PendingParts(st.pending)
	return TextOf(t.Status.Message.Parts) == text
}
