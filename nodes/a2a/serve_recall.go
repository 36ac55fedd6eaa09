package a2a

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/ilmek-go/ilmek/runtime"
)

// A task the Server's memory does not hold (the process restarted,
// another replica answered it, or MaxTasks dropped its record) is found
// again from its thread when the checkpointer keeps thread records: a
// task's id names its context (newTaskID), and each run a message starts
// or resumes records its task's id in the thread's metadata (MetaTask),
// with the run's first checkpoint. tasks/get of the context's latest task
// then reads it as its thread stands, and the next message on a context
// whose thread waits continues that task under its id, as it would have
// in the process that answered it.

// MetaTask is the thread metadata key of the task of the last run a
// message started or resumed on the thread (a Server on a checkpointer
// that keeps thread records).
const MetaTask = "a2a.task"

// newTaskID mints the id of a new task of context contextID: an id of
// ServeConfig.NewID, a dot, and the context id in unpadded base64url
// (which holds no dot), so that the id alone finds the task's thread.
func (s *Server) newTaskID(contextID string) string {
	return s.mint() + "." + base64.RawURLEncoding.EncodeToString([]byte(contextID))
}

// contextOfTask returns the context a task id names (newTaskID); ok is
// false for an id not minted so.
func contextOfTask(id string) (contextID string, ok bool) {
	i := strings.LastIndexByte(id, '.')
	if i < 0 {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(id[i+1:])
	if err != nil || len(b) == 0 {
		return "", false
	}
	return string(b), true
}

// recall returns task id read from its thread when the thread's record
// names it as its latest task (MetaTask), and keeps it as the Server's
// record; nil when the checkpointer keeps no thread records, the id names
// no context, or the context's latest task is another. While a message of
// the context is being answered, the task is returned as its thread
// stands and not kept: that message's run records it.
func (s *Server) recall(ctx context.Context, id string) (*Task, error) {
	contextID, ok := contextOfTask(id)
	if !ok || s.readRecord == nil {
		return nil, nil
	}
	info, err := s.readRecord(ctx, contextID)
	if err != nil || info == nil || info.Meta[MetaTask] != id {
		return nil, err
	}
	st, err := s.standAt(ctx, contextID, info.Outcome)
	if errors.Is(err, runtime.ErrNotFound) {
		return nil, nil // deleted since the record was read
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.tasks[id] != nil:
		return s.tasks[id], nil // recorded meanwhile
	case s.busy[contextID] > 0:
		return s.taskAt(id, contextID, st), nil
	}
	return s.record(id, contextID, st), nil
}

// recallOpen makes the task of a waiting thread's last message the
// context's open task again when the Server does not hold it, as the
// thread's record names it: the next message then continues it, under
// its id. It is called by a message of the context being answered,
// before its run.
func (s *Server) recallOpen(ctx context.Context, contextID string) error {
	if s.readRecord == nil {
		return nil
	}
	s.mu.Lock()
	_, open := s.open[contextID]
	s.mu.Unlock()
	if open {
		return nil
	}
	info, err := s.readRecord(ctx, contextID)
	if err != nil || info == nil {
		return err
	}
	id := info.Meta[MetaTask]
	if c, ok := contextOfTask(id); !ok || c != contextID {
		return nil
	}
	s.mu.Lock()
	known := s.tasks[id] != nil
	s.mu.Unlock()
	if known {
		return nil // it ended here: the message is a task of its own
	}
	st, err := s.standAt(ctx, contextID, info.Outcome)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, open := s.open[contextID]; !open && s.tasks[id] == nil {
		s.record(id, contextID, st)
	}
	return nil
}

// taskFor is the task a run of contextID answers with: the context's open
// task, or a new one.
func (s *Server) taskFor(contextID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.open[contextID]; ok {
		return id
	}
	return s.newTaskID(contextID)
}
