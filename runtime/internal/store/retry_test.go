package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ilmek-go/ilmek/runtime/checkpoint"
)

// TestRetrierDo: a transient failure is retried and reported; a failed
// attempt that settled says took effect is not written again; a failure
// that is not transient, a spent budget and budget 0 end at once.
func TestRetrierDo(t *testing.T) {
	cut, bad := errors.New("cut"), errors.New("bad")
	for _, tc := range []struct {
		name      string
		budget    time.Duration
		fails     []error // the errors of the first attempts
		committed bool    // settled finds the failed write in place
		want      error
		calls     int
		reports   int
	}{
		{"once", time.Second, nil, false, nil, 1, 0},
		{"cut then ok", time.Second, []error{cut, cut}, false, nil, 3, 2},
		{"cut but committed", time.Second, []error{cut}, true, nil, 1, 1},
		{"not transient", time.Second, []error{bad}, false, bad, 1, 0},
		{"budget spent", 30 * time.Millisecond, []error{cut, cut, cut, cut, cut}, false, cut, 2, 1},
		{"off", 0, []error{cut}, false, cut, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reports := 0
			r := &Retrier{Budget: tc.budget, Transient: func(err error) bool { return errors.Is(err, cut) },
				Report: func(_ context.Context, x checkpoint.Retry) {
					reports++
					if x.Op != "commit" || x.Thread != "t" || x.Attempt != reports || x.Wait <= 0 || !errors.Is(x.Err, cut) {
						t.Errorf("report %+v", x)
					}
				}}
			calls := 0
			var settled func(context.Context) (bool, error)
			if tc.committed {
				settled = func(context.Context) (bool, error) { return true, nil }
			}
			err := r.Do(context.Background(), "commit", "t", settled, func(context.Context) error {
				calls++
				if calls <= len(tc.fails) {
					return tc.fails[calls-1]
				}
				return nil
			})
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) || calls != tc.calls || reports != tc.reports {
				t.Errorf("err %v, %d calls, %d reports; want %v, %d, %d", err, calls, reports, tc.want, tc.calls, tc.reports)
			}
		})
	}
}
