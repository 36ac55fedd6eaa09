package workload

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Workload
		wantErr bool
	}{
		{"chain-100", Workload{"chain", 100}, false},
		{"fanoutsend-7", Workload{"fanoutsend", 7}, false},
		{"loop-0", Workload{}, true},
		{"tree-5", Workload{}, true},
		{"chain", Workload{}, true},
		{"chain-x", Workload{}, true},
	} {
		got, err := Parse(tc.in)
		if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestShape(t *testing.T) {
	for _, tc := range []struct {
		w                   Workload
		steps, tasks, units int
		unit, spec          string
	}{
		{Workload{"chain", 100}, 100, 100, 100, "superstep", "chain-100"},
		{Workload{"fanout", 10}, 3, 12, 12, "task", "fanout-10"},
		{Workload{"loop", 5}, 5, 5, 5, "superstep", "loop-5"},
		{Workload{"fanoutsend", 9}, 3, 11, 11, "task", "fanoutsend"},
	} {
		if tc.w.Supersteps() != tc.steps || tc.w.Tasks() != tc.tasks || tc.w.Units() != tc.units || tc.w.Unit() != tc.unit || tc.w.SpecName() != tc.spec {
			t.Errorf("%s: got %d supersteps, %d tasks, %d %ss, spec %q", tc.w, tc.w.Supersteps(), tc.w.Tasks(), tc.w.Units(), tc.w.Unit(), tc.w.SpecName())
		}
		g, err := tc.w.Spec()
		if err != nil {
			t.Fatal(err)
		}
		if g.Name != tc.spec {
			t.Errorf("%s: spec name %q", tc.w, g.Name)
		}
	}
}

func TestCheck(t *testing.T) {
	w := Workload{"chain", 3}
	for _, tc := range []struct {
		name    string
		o       Outcome
		ordered bool
		ok      bool
	}{
		{"right", Outcome{Supersteps: 3, Items: []int{0, 1, 2}}, true, true},
		{"not counted", Outcome{Supersteps: -1, Items: []int{0, 1, 2}}, true, true},
		{"unordered", Outcome{Supersteps: 3, Items: []int{2, 0, 1}}, false, true},
		{"out of order", Outcome{Supersteps: 3, Items: []int{2, 0, 1}}, true, false},
		{"repeated", Outcome{Supersteps: 3, Items: []int{0, 0, 1}}, false, false},
		{"supersteps", Outcome{Supersteps: 2, Items: []int{0, 1, 2}}, true, false},
		{"counter", Outcome{Supersteps: 3, Items: []int{0, 1, 2}, Counter: 1}, true, false},
	} {
		if err := w.Check(tc.o, tc.ordered); (err == nil) != tc.ok {
			t.Errorf("%s: Check = %v", tc.name, err)
		}
	}
}

func TestIndex(t *testing.T) {
	for in, want := range map[string]int{"n0": 0, "w12": 12, "n1999": 1999} {
		if got, err := Index(in); err != nil || got != want {
			t.Errorf("Index(%q) = %d, %v", in, got, err)
		}
	}
	if _, err := Index("fan"); err == nil {
		t.Error("Index(fan): no error")
	}
}

func TestNewRunner(t *testing.T) {
	p, err := SpecBuilt(Workload{"loop", 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewRunner(Workload{"loop", 3}, p, "redis", ""); err == nil {
		t.Error("NewRunner accepted checkpointer redis")
	}
}
