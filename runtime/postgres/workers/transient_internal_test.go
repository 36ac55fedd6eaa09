package workers

import "testing"

// TestStuckStreak: the stuck claims counted against TransientRetries are
// the last ones in a row; a claim refused before its run ran (the thread
// busy) passes over, anything else ends the row.
func TestStuckStreak(t *testing.T) {
	stuck := Claim{Released: true, Stuck: true}
	refused := Claim{Released: true, Refused: true}
	progress := Claim{Released: true} // its run got somewhere, or the store failed
	for _, tc := range []struct {
		name string
		log  []Claim
		want int
	}{
		{"none", nil, 0},
		{"stuck ones", []Claim{stuck, stuck}, 2},
		{"a refused claim between", []Claim{stuck, refused, stuck}, 2},
		{"refused ones last", []Claim{stuck, refused, refused}, 1},
		{"progress ends the row", []Claim{stuck, progress, stuck}, 1},
		{"a retry by hand ends it", []Claim{stuck, {Retry: true}, stuck}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := make([]Claim, 0, len(tc.log)+1)
			for i, e := range tc.log {
				e.Claim = int64(i + 1)
				log = append(log, e)
			}
			mine := int64(len(log) + 1)
			log = append(log, Claim{Claim: mine}) // the claim asking
			if got := stuckStreak(log, mine); got != tc.want {
				t.Errorf("stuckStreak = %d, want %d", got, tc.want)
			}
		})
	}
}
