package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ilmek-go/ilmek/internal/suggest"
	"github.com/ilmek-go/ilmek/runtime"
	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// run is what a command does once its flags are parsed.
type runFunc = func(ctx context.Context, st *store, args []string, out *output) error

// table maps each command to its flags and its work.
var table map[string]command

func init() {
	table = map[string]command{
		"threads": {flags: threadsCmd},
		"show":    {flags: showCmd},
		"history": {flags: historyCmd},
		"answer":  {flags: answerCmd},
		"fork":    {flags: forkCmd},
		"cancel":  {flags: cancelCmd},
		"delete":  {flags: deleteCmd},
		"prune":   {flags: pruneCmd},
		"check":   {flags: checkCmd},
		"version": {flags: versionCmd, noStore: true},
	}
}

// statuses are the runtime's statuses, in the order the help lists them.
var statuses = []runtime.Status{runtime.StatusNew, runtime.StatusInterrupted, runtime.StatusRunning, runtime.StatusParked,
	runtime.StatusDone, runtime.StatusError, runtime.StatusAborted}

// threadView is one thread as threads and show print it.
type threadView struct {
	ID     string         `json:"id"`
	Status runtime.Status `json:"status"`
	// Updated is when the thread was last written.
	Updated time.Time         `json:"updated"`
	Meta    map[string]string `json:"meta,omitempty"`
	// Run is the id of the thread's last ended run, Ended when it ended and
	// Error its error text.
	Run   string    `json:"run,omitempty"`
	Ended time.Time `json:"ended,omitzero"`
	Error string    `json:"error,omitempty"`
	// Pending are the interrupts of the latest checkpoint still waiting
	// for an answer (a person's questions, and the timers of a parked
	// thread).
	Pending []runtime.PendingInterrupt `json:"pending,omitempty"`
}

// statusOf is a thread's status by the runtime's one rule
// (checkpoint.ThreadStatus), the server's too: from the thread's record,
// its latest checkpoint (nil when it has none), the interrupts open there,
// and whether a worker holds it.
func statusOf(info checkpoint.ThreadInfo, latest *runtime.Checkpoint, open []runtime.PendingInterrupt, held bool) runtime.Status {
	f := checkpoint.ThreadFacts{Held: held, Open: open, Outcome: info.Outcome}
	if latest != nil {
		f.Checkpoint, f.Next, f.Created = true, len(latest.Next), latest.Created
	}
	return checkpoint.ThreadStatus(f)
}

// latestOf reads thread id's latest checkpoint (nil when it has none) and
// the interrupts open there.
func latestOf(ctx context.Context, st *store, id string) (*runtime.Checkpoint, []runtime.PendingInterrupt, error) {
	latest, err := st.cp.Get(ctx, id, "")
	if errors.Is(err, runtime.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read thread %q in %s: %w", id, st.name, err)
	}
	open, err := runtime.OpenInterrupts(ctx, st.cp, latest)
	if err != nil {
		return nil, nil, fmt.Errorf("read the interrupts of thread %q in %s: %w", id, st.name, err)
	}
	return latest, open, nil
}

func viewOf(info checkpoint.ThreadInfo, latest *runtime.Checkpoint, open []runtime.PendingInterrupt, held bool) threadView {
	return threadView{ID: info.ID, Status: statusOf(info, latest, open, held), Updated: info.Updated, Meta: info.Meta,
		Run: info.Outcome.RunID, Ended: info.Outcome.Ended, Error: info.Outcome.Error, Pending: open}
}

// parseStatus checks s against the runtime's statuses.
func parseStatus(s string) (runtime.Status, error) {
	if s == "" || slices.Contains(statuses, runtime.Status(s)) {
		return runtime.Status(s), nil
	}
	names := make([]string, len(statuses))
	for i, st := range statuses {
		names[i] = string(st)
	}
	return "", &usageError{fmt.Sprintf("--status %q is no status; %sthe statuses are %s", s, suggest.DidYouMean(s, names), strings.Join(names, ", "))}
}

// parseWhen reads a time: RFC 3339, or a duration back from now.
func parseWhen(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return time.Now().Add(-d), nil
	}
	return time.Time{}, &usageError{fmt.Sprintf("--%s %q: want a time (2026-01-02T15:04:05Z) or a duration back from now (72h)", flag, s)}
}

// threadsPage is what threads prints as JSON.
type threadsPage struct {
	Threads []threadView `json:"threads"`
	// Next is the cursor of the next page (--cursor), "" after the last.
	Next string `json:"next,omitempty"`
}

func threadsCmd(fs *pflag.FlagSet) runFunc {
	status := fs.String("status", "", "keep threads of this status (the server's too: checkpoint.ThreadStatus): new, interrupted, running, parked, done, error, aborted")
	meta := fs.StringArray("meta", nil, "keep threads whose metadata has KEY=VALUE (repeat for several)")
	after := fs.String("updated-after", "", "keep threads updated after this time (RFC 3339, or a duration back from now: 24h)")
	before := fs.String("updated-before", "", "keep threads updated before this time (RFC 3339, or a duration back from now)")
	limit := fs.Int("limit", checkpoint.DefaultThreadLimit, "the most threads a page holds")
	cursor := fs.String("cursor", "", "continue the listing where the page that printed this cursor ended")
	all := fs.Bool("all", false, "follow the cursor to the last page")
	return func(ctx context.Context, st *store, args []string, out *output) error {
		if len(args) > 0 {
			return &usageError{fmt.Sprintf("threads takes no arguments, not %q; filter with --status or --meta", args[0])}
		}
		s, err := parseStatus(*status)
		if err != nil {
			return err
		}
		// The store preselects by outcome what it can; each thread's
		// status is checked below.
		q := checkpoint.ThreadQuery{Status: checkpoint.OutcomeFilter(s), Limit: *limit, Cursor: *cursor}
		for _, kv := range *meta {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return &usageError{fmt.Sprintf("--meta %q: want KEY=VALUE", kv)}
			}
			if q.Meta == nil {
				q.Meta = map[string]string{}
			}
			q.Meta[k] = v
		}
		if q.UpdatedAfter, err = parseWhen("updated-after", *after); err != nil {
			return err
		}
		if q.UpdatedBefore, err = parseWhen("updated-before", *before); err != nil {
			return err
		}
		pageSize, _, err := checkpoint.CheckThreadQuery(q)
		if err != nil {
			return &usageError{fmt.Sprintf("threads: %v", err)}
		}
		// The store pages the threads its query selects; a status is
		// checked here, so a listing by status reads on (as the server's
		// does) until the page holds pageSize threads or the listing ends,
		// and its cursor is the position of the last thread it holds.
		page := threadsPage{Threads: []threadView{}}
		full := false
		for !full {
			p, err := st.lister().ListThreads(ctx, q)
			if err != nil {
				return fmt.Errorf("list the threads of %s: %w", st.name, err)
			}
			ids := make([]string, len(p.Threads))
			for i, t := range p.Threads {
				ids[i] = t.ID
			}
			running, err := runningThreads(ctx, st, ids)
			if err != nil {
				return err
			}
			page.Next = p.Next
			for i, t := range p.Threads {
				latest, open, err := latestOf(ctx, st, t.ID)
				if err != nil {
					return err
				}
				v := viewOf(t, latest, open, running[t.ID])
				if s != "" && v.Status != s {
					continue
				}
				page.Threads = append(page.Threads, v)
				if !*all && len(page.Threads) == pageSize {
					full = true
					if i < len(p.Threads)-1 {
						page.Next = checkpoint.EncodeThreadCursor(checkpoint.ThreadCursor{Updated: t.Updated.UnixNano(), ID: t.ID})
					}
					break
				}
			}
			if p.Next == "" || !*all && s == "" {
				break
			}
			q.Cursor = p.Next
		}
		return out.print(page, func(w io.Writer) {
			fmt.Fprintln(w, "THREAD\tSTATUS\tUPDATED\tPENDING\tMETA")
			for _, t := range page.Threads {
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", t.ID, t.Status, when(t.Updated), len(t.Pending), userMeta(t.Meta))
			}
			if len(page.Threads) == 0 {
				fmt.Fprintln(w, "(no threads)")
			}
			if page.Next != "" {
				fmt.Fprintf(w, "next page: --cursor %s\n", page.Next)
			}
		})
	}
}

// findThread returns the thread's record, ok false when the store has
// none: one record, read by its key.
func findThread(ctx context.Context, st *store, id string) (checkpoint.ThreadInfo, bool, error) {
	p, err := st.lister().ListThreads(ctx, checkpoint.ThreadQuery{ID: id, Limit: 1})
	if err != nil {
		return checkpoint.ThreadInfo{}, false, fmt.Errorf("find thread %q in %s: %w", id, st.name, err)
	}
	for _, t := range p.Threads {
		if t.ID == id {
			return t, true, nil
		}
	}
	return checkpoint.ThreadInfo{}, false, nil
}

// errNoThread is matched by the error for a thread the store does not hold.
var errNoThread = errors.New("no such thread")

// oneThread checks that args are exactly one thread id.
func oneThread(cmd string, args []string) (string, error) {
	if len(args) != 1 {
		return "", &usageError{fmt.Sprintf("%s takes one THREAD, not %d arguments", cmd, len(args))}
	}
	if err := runtime.CheckThreadID(args[0]); err != nil {
		return "", &usageError{err.Error()}
	}
	return args[0], nil
}

// taskView is one task planned next.
type taskView struct {
	Node string `json:"node"`
	Key  string `json:"key"`
}

// showView is what show prints as JSON.
type showView struct {
	threadView
	// Checkpoint is the checkpoint shown (the latest unless --checkpoint),
	// Step its superstep and Created when it was written.
	Checkpoint string    `json:"checkpoint,omitempty"`
	Step       int       `json:"step"`
	Created    time.Time `json:"created,omitzero"`
	// Next are the tasks planned for the next superstep.
	Next []taskView `json:"next"`
	// State is the thread's channels at the checkpoint.
	State json.RawMessage `json:"state,omitempty"`
}

func showCmd(fs *pflag.FlagSet) runFunc {
	at := fs.String("checkpoint", "", "show the thread at this earlier checkpoint (an id from history)")
	return func(ctx context.Context, st *store, args []string, out *output) error {
		id, err := oneThread("show", args)
		if err != nil {
			return err
		}
		latest, open, err := latestOf(ctx, st, id)
		if err != nil {
			return err
		}
		info, found, err := findThread(ctx, st, id)
		if err != nil {
			return err
		}
		if !found && latest == nil {
			return fmt.Errorf("thread %q: %w in %s; list them with 'ilmek threads'", id, errNoThread, st.name)
		}
		if !found {
			info = checkpoint.ThreadInfo{ID: id, Updated: latest.Created}
		}
		running, err := runningThreads(ctx, st, []string{id})
		if err != nil {
			return err
		}
		v := showView{threadView: viewOf(info, latest, open, running[id]), Next: []taskView{}}
		cp := latest
		if *at != "" {
			if cp, err = st.cp.Get(ctx, id, *at); err != nil {
				return fmt.Errorf("thread %q has no checkpoint %q (%w); list them with 'ilmek history %s'", id, *at, err, id)
			}
		}
		if cp != nil {
			v.Checkpoint, v.Step, v.Created, v.State = cp.ID, cp.Step, cp.Created, cp.Channels
			for _, t := range cp.Next {
				v.Next = append(v.Next, taskView{Node: t.Node, Key: t.Key})
			}
			if *at != "" {
				// the questions as they stood at the checkpoint shown
				v.Pending = cp.Pending
			}
		}
		return out.print(v, func(w io.Writer) {
			fmt.Fprintf(w, "Thread:\t%s\n", v.ID)
			fmt.Fprintf(w, "Status:\t%s\n", v.Status)
			fmt.Fprintf(w, "Updated:\t%s\n", when(v.Updated))
			fmt.Fprintf(w, "Metadata:\t%s\n", userMeta(v.Meta))
			if v.Run != "" {
				fmt.Fprintf(w, "Last run:\t%s, ended %s\n", v.Run, when(v.Ended))
			}
			if v.Error != "" {
				fmt.Fprintf(w, "Error:\t%s\n", short(v.Error, 200))
			}
			fmt.Fprintf(w, "Checkpoint:\t%s (superstep %d, %s)\n", orDash(v.Checkpoint), v.Step, when(v.Created))
			nodes := make([]string, len(v.Next))
			for i, t := range v.Next {
				nodes[i] = t.Node
			}
			fmt.Fprintf(w, "Next:\t%s\n", list(nodes))
			if len(v.Pending) > 0 {
				fmt.Fprintf(w, "Pending questions:\n")
				for _, p := range v.Pending {
					typ := ""
					if p.Expects != nil {
						typ = " (answer: " + p.Expects.Type + ")"
					}
					fmt.Fprintf(w, "  %s\tat node %s%s: %s\n", p.ID, p.Node, typ, short(string(p.Payload), 200))
				}
			}
			if len(v.State) > 0 {
				fmt.Fprintf(w, "State:\n%s\n", indentJSON(v.State, "  "))
			}
		})
	}
}

// historyEntry is one checkpoint as history prints it.
type historyEntry struct {
	ID       string    `json:"id"`
	ParentID string    `json:"parent_id,omitempty"`
	Step     int       `json:"step"`
	Created  time.Time `json:"created"`
	// Next are the nodes planned for the next superstep.
	Next []string `json:"next"`
	// Pending are the ids of the questions the checkpoint waits on.
	Pending []string `json:"pending,omitempty"`
	// Writes are the channels the checkpoint changed since its parent (a
	// channel's whole new value, or with append or merge set, what was
	// appended or merged in); every channel when the parent is gone or
	// the checkpoint has none.
	Writes []checkpoint.ChannelWrite `json:"writes"`
}

func historyCmd(fs *pflag.FlagSet) runFunc {
	limit := fs.Int("limit", 0, "the most checkpoints to list, newest first (0: all)")
	return func(ctx context.Context, st *store, args []string, out *output) error {
		id, err := oneThread("history", args)
		if err != nil {
			return err
		}
		cps, err := st.cp.List(ctx, id, *limit)
		if err != nil {
			return fmt.Errorf("list the checkpoints of thread %q: %w", id, err)
		}
		if len(cps) == 0 {
			return fmt.Errorf("thread %q has no checkpoints (%w in %s); list the threads with 'ilmek threads'", id, errNoThread, st.name)
		}
		byID := map[string]*runtime.Checkpoint{}
		for _, cp := range cps {
			byID[cp.ID] = cp
		}
		entries := make([]historyEntry, 0, len(cps))
		for _, cp := range cps {
			e := historyEntry{ID: cp.ID, ParentID: cp.ParentID, Step: cp.Step, Created: cp.Created, Next: []string{}}
			for _, t := range cp.Next {
				e.Next = append(e.Next, t.Node)
			}
			for _, p := range cp.Pending {
				e.Pending = append(e.Pending, p.ID)
			}
			parent := byID[cp.ParentID]
			if parent == nil && cp.ParentID != "" {
				if p, err := st.cp.Get(ctx, id, cp.ParentID); err == nil {
					parent = p
				}
			}
			if e.Writes, err = writesOf(parent, cp); err != nil {
				return fmt.Errorf("checkpoint %s of thread %q: %w", cp.ID, id, err)
			}
			entries = append(entries, e)
		}
		return out.print(entries, func(w io.Writer) {
			fmt.Fprintln(w, "CHECKPOINT\tSTEP\tCREATED\tNEXT\tPENDING\tWRITES")
			for _, e := range entries {
				names := make([]string, len(e.Writes))
				for i, wr := range e.Writes {
					names[i] = wr.Channel
					if wr.Append {
						names[i] += "+"
					}
				}
				fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\n", e.ID, e.Step, when(e.Created), list(e.Next), list(e.Pending), short(list(names), 60))
			}
		})
	}
}

// writesOf is what cp changed since parent (every channel when parent is
// nil): the delta the store would keep when the channel lists match,
// else each channel whose value differs, whole.
func writesOf(parent, cp *runtime.Checkpoint) ([]checkpoint.ChannelWrite, error) {
	ws := []checkpoint.ChannelWrite{}
	if parent != nil {
		var d checkpoint.Differ
		if got, ok := d.Writes(parent.Channels, cp.Channels); ok {
			return append(ws, got...), nil
		}
	}
	var chans, before map[string]json.RawMessage
	if err := json.Unmarshal(cp.Channels, &chans); err != nil {
		return nil, fmt.Errorf("its channels are not a JSON object: %w", err)
	}
	if parent != nil {
		json.Unmarshal(parent.Channels, &before) // a parent that does not decode counts as none
	}
	for _, k := range slices.Sorted(maps.Keys(chans)) {
		if old, ok := before[k]; !ok || !jsonEqual(old, chans[k]) {
			ws = append(ws, checkpoint.ChannelWrite{Channel: k, Value: chans[k]})
		}
	}
	return ws, nil
}

// jsonEqual reports whether a and b are the same JSON text up to
// insignificant space.
func jsonEqual(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// existingThreads checks, before a command changes any thread, that ids
// are well-formed thread ids (a usage error names the first that is not)
// and that the store holds each: a checkpoint or a thread record. The
// error for those it does not hold names them all and says that nothing
// was done (done: "deleted", "pruned").
func existingThreads(ctx context.Context, st *store, ids []string, done string) error {
	for _, id := range ids {
		if err := runtime.CheckThreadID(id); err != nil {
			return &usageError{err.Error()}
		}
	}
	var missing []string
	for _, id := range ids {
		_, err := st.cp.Get(ctx, id, "")
		switch {
		case err == nil:
			continue
		case !errors.Is(err, runtime.ErrNotFound):
			return fmt.Errorf("read thread %q in %s: %w", id, st.name, err)
		}
		_, found, err := findThread(ctx, st, id)
		if err != nil {
			return err
		}
		if !found {
			missing = append(missing, strconv.Quote(id))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w in %s: %s; nothing was %s (list the threads with 'ilmek threads')", errNoThread, st.name, strings.Join(missing, ", "), done)
	}
	return nil
}

func deleteCmd(fs *pflag.FlagSet) runFunc {
	yes := fs.Bool("yes", false, "delete without asking (required: ilmek does not prompt)")
	return func(ctx context.Context, st *store, args []string, out *output) error {
		if len(args) == 0 {
			return &usageError{"delete needs at least one THREAD"}
		}
		if !*yes {
			return &usageError{fmt.Sprintf("delete removes %d thread(s) for good: add --yes to confirm", len(args))}
		}
		type deleted struct {
			Deleted []string `json:"deleted"`
		}
		var d deleted
		if err := existingThreads(ctx, st, args, "deleted"); err != nil {
			return err
		}
		for _, id := range args {
			if err := st.cp.DeleteThread(ctx, id); err != nil {
				return fmt.Errorf("delete thread %q: %w", id, err)
			}
			d.Deleted = append(d.Deleted, id)
		}
		return out.print(d, func(w io.Writer) {
			for _, id := range d.Deleted {
				fmt.Fprintf(w, "deleted %s\n", id)
			}
		})
	}
}

func pruneCmd(fs *pflag.FlagSet) runFunc {
	keepLast := fs.Int("keep-last", 0, "keep each thread's newest N checkpoints")
	keepAfter := fs.String("keep-after", "", "keep the checkpoints created after this time (RFC 3339, or a duration back from now: 72h)")
	return func(ctx context.Context, st *store, args []string, out *output) error {
		if len(args) == 0 {
			return &usageError{"prune needs at least one THREAD"}
		}
		opts := checkpoint.PruneOptions{KeepLast: *keepLast}
		var err error
		if opts.KeepAfter, err = parseWhen("keep-after", *keepAfter); err != nil {
			return err
		}
		if opts.KeepLast < 0 || opts.KeepLast == 0 && opts.KeepAfter.IsZero() {
			return &usageError{"prune needs --keep-last N (N > 0) or --keep-after T: it keeps nothing by count or time otherwise"}
		}
		pr, ok := st.cp.(checkpoint.Pruner)
		if !ok {
			return &refusedError{"the store cannot prune"}
		}
		type pruned struct {
			Thread  string `json:"thread"`
			Dropped int    `json:"dropped"`
		}
		res := []pruned{}
		if err := existingThreads(ctx, st, args, "pruned"); err != nil {
			return err
		}
		for _, id := range args {
			n, err := pr.Prune(ctx, id, opts)
			if err != nil {
				return fmt.Errorf("prune thread %q: %w", id, err)
			}
			res = append(res, pruned{id, n})
		}
		return out.print(res, func(w io.Writer) {
			fmt.Fprintln(w, "THREAD\tDROPPED")
			for _, p := range res {
				fmt.Fprintf(w, "%s\t%d\n", p.Thread, p.Dropped)
			}
		})
	}
}

func checkCmd(fs *pflag.FlagSet) runFunc {
	return func(ctx context.Context, st *store, args []string, out *output) error {
		if len(args) > 0 {
			return &usageError{fmt.Sprintf("check takes no arguments, not %q: it checks the --store file", args[0])}
		}
		if st.lite == nil {
			return &refusedError{"check is SQLite's integrity check; for PostgreSQL run pg_amcheck on the database"}
		}
		type result struct {
			File   string `json:"file"`
			Intact bool   `json:"intact"`
			Damage string `json:"damage,omitempty"`
		}
		r := result{File: st.name, Intact: true}
		err := st.lite.Check(ctx)
		if err != nil && !errors.Is(err, errDamaged) {
			return fmt.Errorf("check %s: %w", st.name, err)
		}
		if err != nil {
			r.Intact, r.Damage = false, err.Error()
		}
		if perr := out.print(r, func(w io.Writer) {
			if r.Intact {
				fmt.Fprintf(w, "%s: intact\n", r.File)
			} else {
				fmt.Fprintf(w, "%s: DAMAGED: %s\n", r.File, r.Damage)
			}
		}); perr != nil {
			return perr
		}
		if !r.Intact {
			return fmt.Errorf("%s is damaged: restore it from a backup", st.name)
		}
		return nil
	}
}

func versionCmd(fs *pflag.FlagSet) runFunc {
	return func(ctx context.Context, st *store, args []string, out *output) error {
		if len(args) > 0 {
			return &usageError{"version takes no arguments"}
		}
		v := struct {
			Version string `json:"version"`
		}{moduleVersion()}
		return out.print(v, func(w io.Writer) { fmt.Fprintf(w, "ilmek %s\n", v.Version) })
	}
}

// parseAnswers reads ANSWER arguments (ID=JSON, or a lone JSON value for
// a thread waiting on one question) against the questions pending, and
// returns the answers by id.
func parseAnswers(args []string, pending []runtime.PendingInterrupt) (map[string]json.RawMessage, error) {
	ids := make([]string, len(pending))
	for i, p := range pending {
		ids[i] = p.ID
	}
	answers := map[string]json.RawMessage{}
	for _, a := range args {
		id, val, ok := strings.Cut(a, "=")
		if !ok || !slices.Contains(ids, id) && json.Valid([]byte(a)) {
			if len(args) == 1 && len(pending) == 1 && json.Valid([]byte(a)) {
				answers[ids[0]] = json.RawMessage(a)
				continue
			}
			return nil, &usageError{fmt.Sprintf("answer %q: want ID=JSON; the questions are %s", short(a, 60), strings.Join(ids, ", "))}
		}
		if !slices.Contains(ids, id) {
			return nil, &usageError{fmt.Sprintf("no question %q is pending; %sthe questions are %s", id, suggest.DidYouMean(id, ids), strings.Join(ids, ", "))}
		}
		if !json.Valid([]byte(val)) {
			return nil, &usageError{fmt.Sprintf("the answer to %s is not JSON: %s (a string is quoted: '\"yes\"')", id, short(val, 60))}
		}
		answers[id] = json.RawMessage(val)
	}
	for _, id := range ids {
		if _, ok := answers[id]; !ok {
			return nil, &usageError{fmt.Sprintf("question %s has no answer: every pending question needs one (ID=JSON)", id)}
		}
	}
	// An answer its question's type refuses is refused here, as the
	// worker's Resume would refuse it, before anything is queued.
	for _, p := range pending {
		if err := runtime.CheckAnswer(p, answers[p.ID]); err != nil {
			return nil, fmt.Errorf("%w; nothing was submitted ('ilmek show' names each question's type)", err)
		}
	}
	return answers, nil
}
