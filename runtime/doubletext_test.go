package runtime_test

import (
	"strings"
	"testing"

	"github.com/ilmek-go/ilmek/runtime"
)

// TestDoubleTextingValidate: the three policies are valid; anything else,
// the empty policy included, is refused with the known ones named.
func TestDoubleTextingValidate(t *testing.T) {
	for _, p := range []runtime.DoubleTexting{runtime.DoubleTextReject, runtime.DoubleTextEnqueue, runtime.DoubleTextCancelReplace} {
		if err := p.Validate(); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
	for _, p := range []runtime.DoubleTexting{"", "Reject", "cancel"} {
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), `"reject", "enqueue" or "cancel-and-replace"`) {
			t.Errorf("%q: %v, want it refused naming the policies", p, err)
		}
	}
}
