package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	quick := []string{"--min-time", "0", "--warmup", "0", "--min-runs", "3"}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want Report // checked fields when code is 0
		errs string // substring of stderr otherwise
	}{
		{"generated chain", []string{"--workload", "chain", "--n", "100"}, 0,
			Report{Engine: "ilmek-generated", Workload: "chain-100", Ckpt: "none", Supersteps: 100, Tasks: 100, Unit: "superstep"}, ""},
		{"spec fanout memory", []string{"--workload", "fanout", "--n", "10", "--kind", "spec", "--ckpt", "memory"}, 0,
			Report{Engine: "ilmek-spec", Workload: "fanout-10", Ckpt: "memory", Supersteps: 3, Tasks: 12, Unit: "task"}, ""},
		{"generated loop sqlite", []string{"--workload", "loop", "--n", "100", "--ckpt", "sqlite"}, 0,
			Report{Engine: "ilmek-generated", Workload: "loop-100", Ckpt: "sqlite", Supersteps: 100, Tasks: 100, Unit: "superstep"}, ""},
		{"generated fanoutsend any size", []string{"--workload", "fanoutsend", "--n", "33"}, 0,
			Report{Engine: "ilmek-generated", Workload: "fanoutsend-33", Ckpt: "none", Supersteps: 3, Tasks: 35, Unit: "task"}, ""},
		{"no generated package", []string{"--workload", "chain", "--n", "57"}, 3, Report{}, "no generated package"},
		{"unknown workload", []string{"--workload", "tree", "--n", "5"}, 2, Report{}, "unknown kind"},
		{"bad ckpt", []string{"--workload", "chain", "--n", "100", "--ckpt", "redis"}, 2, Report{}, "--ckpt"},
		{"bad kind", []string{"--workload", "chain", "--n", "100", "--kind", "eino"}, 2, Report{}, "--kind"},
		{"missing n", []string{"--workload", "chain"}, 2, Report{}, "N must be"},
		{"unknown flag", []string{"--workload", "chain", "--n", "100", "--fast"}, 2, Report{}, "fast"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append(tc.args, quick...), &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, stderr.String())
			}
			if code != 0 {
				if !strings.Contains(stderr.String(), tc.errs) || stdout.Len() > 0 {
					t.Errorf("stderr %q does not mention %q, or stdout %q is not empty", stderr.String(), tc.errs, stdout.String())
				}
				return
			}
			if strings.Count(stdout.String(), "\n") != 1 {
				t.Fatalf("want one line, got %q", stdout.String())
			}
			checkReport(t, stdout.Bytes(), tc.want)
		})
	}
}

// checkReport decodes the line strictly and checks its fields.
func checkReport(t *testing.T, line []byte, want Report) {
	t.Helper()
	var keys map[string]any
	if err := json.Unmarshal(line, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"engine", "workload", "ckpt", "runs", "median_ns", "p10_ns", "p90_ns", "supersteps", "tasks", "unit", "ns_per_unit", "allocs_per_run", "bytes_per_run", "peak_rss_kb"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("no %q in %s", k, line)
		}
	}
	if len(keys) != 14 {
		t.Errorf("%d keys in %s, want 14", len(keys), line)
	}
	var got Report
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Engine != want.Engine || got.Workload != want.Workload || got.Ckpt != want.Ckpt || got.Supersteps != want.Supersteps || got.Tasks != want.Tasks || got.Unit != want.Unit {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got.Runs < 3 || got.P10NS > got.MedianNS || got.MedianNS > got.P90NS || got.MedianNS <= 0 || got.NSPerUnit <= 0 || got.PeakRSSKB <= 0 {
		t.Errorf("implausible figures: %+v", got)
	}
}

func TestPercentile(t *testing.T) {
	xs := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct{ p, want int }{{10, 1}, {50, 5}, {90, 9}, {100, 10}} {
		if got := percentile(xs, tc.p); got != int64(tc.want) {
			t.Errorf("p%d = %d, want %d", tc.p, got, tc.want)
		}
	}
	if got := percentile([]int64{7}, 90); got != 7 {
		t.Errorf("p90 of one = %d", got)
	}
}

func TestRunChat(t *testing.T) {
	for _, ckpt := range []string{"memory", "sqlite"} {
		var out, errb bytes.Buffer
		if code := run([]string{"--workload", "chat", "--n", "200", "--ckpt", ckpt}, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", ckpt, code, errb.String())
		}
		var rep ChatReport
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("%s: %q: %v", ckpt, out.String(), err)
		}
		if rep.Workload != "chat-200" || rep.Turns != 200 || rep.NSPerTurn <= 0 || rep.BytesLastTurn <= 0 || rep.BytesLastTurn > 4096 ||
			(ckpt == "sqlite") != (rep.FileBytes > 0) || rep.NSTurns100to199 <= 0 || rep.NSLast100 <= 0 || rep.LastVsEarly <= 0 {
			t.Errorf("%s: report %+v", ckpt, rep)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"--workload", "chat", "--ckpt", "none"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--ckpt") {
		t.Errorf("chat without a checkpointer: exit %d, %q", code, errb.String())
	}
}
