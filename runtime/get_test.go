package runtime_test

import (
	"errors"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
)

type request struct {
	ID     string `json:"id"`
	Amount int    `json:"amount"`
}

// TestGet reads a channel as a Go type the same way whether it holds the
// value a node wrote or the JSON form a checkpoint restores, and refuses
// what does not fit strictly.
func TestGet(t *testing.T) {
	want := request{ID: "r1", Amount: 1000}
	for _, tc := range []struct {
		name string
		v    any
		err  string // "" for want
	}{
		{"as written", want, ""},
		{"as restored", map[string]any{"id": "r1", "amount": 1000.0}, ""},
		{"unknown key", map[string]any{"id": "r1", "amount": 1000.0, "amountz": 1.0}, `channel "req": does not hold a github.com/ilmek-go/ilmek/runtime_test.request: value.amountz: key "amountz" is not a field of github.com/ilmek-go/ilmek/runtime_test.request (its keys: "id", "amount")`},
		{"wrong kind", map[string]any{"id": 7.0}, `channel "req": does not hold a github.com/ilmek-go/ilmek/runtime_test.request: value.id: want a string for string, got a number`},
		{"fraction for an int", map[string]any{"amount": 1.5}, `channel "req": does not hold a github.com/ilmek-go/ilmek/runtime_test.request: value.amount: 1.5 does not fit int: encoding/json wants an integer in its range`},
	} {
		got, err := runtime.Get[request](runtime.Values{"req": tc.v}, "req")
		switch {
		case tc.err == "" && (err != nil || got != want):
			t.Errorf("%s: got %+v, %v", tc.name, got, err)
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%s:\n got %v\nwant %s", tc.name, err, tc.err)
		}
	}
	_, err := runtime.Get[int](runtime.Values{}, "n")
	var ce *runtime.ChannelError
	if !errors.As(err, &ce) || ce.Channel != "n" {
		t.Errorf("unset: err = %v", err)
	}
}
