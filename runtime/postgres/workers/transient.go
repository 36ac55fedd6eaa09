package workers

import (
	"context"
	"encoding/json"
	"time"
)

// DefaultTransientRetries is how many claims in a row whose run failed
// with a node's transient error, and got nowhere, a request is given back
// after, unless TransientRetries says otherwise.
const DefaultTransientRetries = 10

// TransientRetries sets how many times in a row a request is given back
// to the queue after its run failed with an error of a node's that looks
// transient (a network error, a database connection cut or refused) in
// the first superstep it ran, so that it completed none (default
// DefaultTransientRetries; 0 or less: no limit). The pause before the
// next claim starts at 200 ms and doubles with each such claim before it,
// up to 30 s, so the default gives a failing API or database about two
// minutes to come back. Past the limit the run's error ends the request
// (state "error"), as a node's other errors do; the thread keeps its
// last checkpoint, and a new request continues it. A run that completed a
// superstep before it failed starts the count again; a claim whose run was
// refused before it ran (the thread busy with another run: Claim.Refused)
// neither counts nor starts it again. The store's own
// failures (a runtime.CheckpointError: a checkpoint, journal or lease
// that could not be written) are given back without limit: the worker
// cannot run anything while its store is down.
func TransientRetries(n int) WorkerOption { return func(o *workerOptions) { o.retries = n } }

// releasePause is how long a request given back waits before it is
// claimed again; maxReleasePause bounds the pause after stuck claims
// (Claim.Stuck), which doubles it for each.
const (
	releasePause    = 200 * time.Millisecond
	maxReleasePause = 30 * time.Second
)

// releaseFailed gives back a request whose run failed with err, a node's
// transient error; stuck says the run committed no superstep before the
// one that failed. A stuck claim is given back after releasePause doubled
// for each stuck claim in a row before it; releaseFailed reports false,
// giving nothing back, when TransientRetries stuck claims came before:
// the error then ends the request.
func (w *Worker) releaseFailed(c *claimed, stuck bool, err error) bool {
	pause := releasePause
	if stuck {
		n, rerr := w.stuckBefore(c)
		if rerr != nil {
			// The claims log could not be read (the store is failing too):
			// give the request back as the store's failure is.
			w.opts.logger.Warn("read a request's claims log", "request", c.id, "err", rerr)
			w.giveBack(c, err, false, releasePause, true)
			return true
		}
		if w.opts.retries > 0 && n >= w.opts.retries {
			w.opts.logger.Warn("request ends in error: its runs failed with transient errors and got nowhere TransientRetries times in a row",
				"request", c.id, "thread", c.thread, "claims", n+1, "err", err)
			return false
		}
		pause = min(releasePause<<min(n, 20), maxReleasePause)
	}
	w.giveBack(c, err, false, pause, stuck)
	return true
}

// stuckBefore counts the stuck claims (Claim.Stuck) at the end of c's
// request's claims log, before c's own entry.
func (w *Worker) stuckBefore(c *claimed) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var raw []byte
	err := w.retry(ctx, "read claims", c.id, 5*time.Second, func(int) error {
		return w.q.store.Pool().QueryRow(ctx, "SELECT claims_log FROM "+w.q.t("ilmek_requests")+" WHERE id = $1", c.id).Scan(&raw)
	})
	if err != nil {
		return 0, err
	}
	var log []Claim
	if err := json.Unmarshal(raw, &log); err != nil {
		return 0, err
	}
	return stuckStreak(log, c.claim), nil
}

// stuckStreak counts the stuck claims at the end of log, before the entry
// of claim: a claim whose run was refused before it ran (Refused) is
// passed over; any other entry (a run that got somewhere, a store's
// failure, a retry by hand) ends the count.
func stuckStreak(log []Claim, claim int64) int {
	n := 0
	for i := len(log) - 1; i >= 0; i-- {
		e := log[i]
		switch {
		case e.Claim == claim && !e.Retry:
			continue // this claim's own entry
		case e.Refused && !e.Stuck:
			continue // nothing ran
		case !e.Stuck:
			return n
		}
		n++
	}
	return n
}
