package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	goruntime "runtime"
	"slices"
	"strconv"
	"time"

	"github.com/ilmek-go/ilmek/bench/graphs"
	"github.com/ilmek-go/ilmek/bench/workload"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitNotExpressd = 3
)

// config is the command line.
type config struct {
	workload workload.Workload
	ckpt     string
	kind     string
	minTime  time.Duration
	warmup   time.Duration
	minRuns  int
}

// Report is the JSON line the command prints.
type Report struct {
	Engine       string  `json:"engine"`
	Workload     string  `json:"workload"`
	Ckpt         string  `json:"ckpt"`
	Runs         int     `json:"runs"`
	MedianNS     int64   `json:"median_ns"`
	P10NS        int64   `json:"p10_ns"`
	P90NS        int64   `json:"p90_ns"`
	Supersteps   int     `json:"supersteps"`
	Tasks        int     `json:"tasks"`
	Unit         string  `json:"unit"`
	NSPerUnit    float64 `json:"ns_per_unit"`
	AllocsPerRun float64 `json:"allocs_per_run"`
	BytesPerRun  float64 `json:"bytes_per_run"`
	PeakRSSKB    int64   `json:"peak_rss_kb"`
}

func run(args []string, stdout, stderr io.Writer) int {
	if n, ckpt, ok := chatArgs(args); ok {
		return runChat(n, ckpt, stdout, stderr)
	}
	cfg, err := parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "ilmek-bench: %v\n", err)
		return exitUsage
	}
	p, err := program(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "ilmek-bench: %v\n", err)
		if errors.Is(err, workload.ErrNotExpressible) {
			return exitNotExpressd
		}
		return exitFailed
	}
	rep, err := measure(cfg, p)
	if err != nil {
		fmt.Fprintf(stderr, "ilmek-bench: %s on %s with %s: %v\n", cfg.workload, cfg.kind, cfg.ckpt, err)
		return exitFailed
	}
	line, _ := json.Marshal(rep)
	fmt.Fprintf(stdout, "%s\n", line)
	return exitOK
}

// chatArgs reports whether args ask for --workload chat, with its --n
// and --ckpt.
func chatArgs(args []string) (n int, ckpt string, ok bool) {
	fs := flag.NewFlagSet("ilmek-bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	kind := fs.String("workload", "", "")
	fs.IntVar(&n, "n", 0, "")
	fs.StringVar(&ckpt, "ckpt", "none", "")
	fs.String("kind", "", "")
	fs.Float64("min-time", 0, "")
	fs.Float64("warmup", 0, "")
	fs.Int("min-runs", 0, "")
	if fs.Parse(args) != nil || *kind != "chat" {
		return 0, "", false
	}
	return n, ckpt, true
}

// parse reads the flags; every value is checked.
func parse(args []string) (config, error) {
	fs := flag.NewFlagSet("ilmek-bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	kind := fs.String("workload", "", "chain, fanout, fanoutsend, loop or chat")
	n := fs.Int("n", 0, "the workload's size N")
	ckpt := fs.String("ckpt", "none", "none, memory, sqlite or sqlite-nextwrite (SQLite with runtime.DurableWithNextWrite)")
	prog := fs.String("kind", "generated", "generated or spec")
	minTime := fs.Float64("min-time", 1, "seconds of timed runs, at least")
	warmup := fs.Float64("warmup", 0.5, "seconds of untimed runs first")
	minRuns := fs.Int("min-runs", 10, "timed runs, at least")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	cfg := config{workload: workload.Workload{Kind: *kind, N: *n}, ckpt: *ckpt, kind: *prog,
		minTime: seconds(*minTime), warmup: seconds(*warmup), minRuns: *minRuns}
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case *kind == "":
		return cfg, fmt.Errorf("--workload is required (chain, fanout, fanoutsend or loop)")
	case !slices.Contains(workload.Checkpointers, *ckpt):
		return cfg, fmt.Errorf("--ckpt %q: want none, memory or sqlite", *ckpt)
	case *prog != "generated" && *prog != "spec":
		return cfg, fmt.Errorf("--kind %q: want generated or spec", *prog)
	case *minTime < 0 || *warmup < 0 || *minRuns < 1:
		return cfg, fmt.Errorf("--min-time and --warmup must not be negative, --min-runs must be at least 1")
	}
	return cfg, cfg.workload.Valid()
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// program builds the program the command times.
func program(cfg config) (workload.Program, error) {
	if cfg.kind == "spec" {
		return workload.SpecBuilt(cfg.workload)
	}
	return graphs.Generated(cfg.workload)
}

// measure checks one run, warms up, times runs and builds the report.
func measure(cfg config, p workload.Program) (Report, error) {
	w := cfg.workload
	r, err := workload.NewRunner(w, p, cfg.ckpt, "")
	if err != nil {
		return Report{}, err
	}
	defer r.Close()
	ctx := context.Background()
	o, err := r.Run(ctx)
	if err == nil {
		err = w.Check(o, true)
	}
	if err != nil {
		return Report{}, err
	}
	for start := time.Now(); time.Since(start) < cfg.warmup; {
		if _, err := r.Run(ctx); err != nil {
			return Report{}, err
		}
	}
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	var times []int64
	var total time.Duration
	for total < cfg.minTime || len(times) < cfg.minRuns {
		start := time.Now()
		_, err := r.Run(ctx)
		d := time.Since(start)
		if err != nil {
			return Report{}, err
		}
		times = append(times, d.Nanoseconds())
		total += d
	}
	goruntime.ReadMemStats(&after)
	slices.Sort(times)
	runs := len(times)
	med := percentile(times, 50)
	return Report{
		Engine: "ilmek-" + cfg.kind, Workload: w.String(), Ckpt: cfg.ckpt, Runs: runs,
		MedianNS: med, P10NS: percentile(times, 10), P90NS: percentile(times, 90),
		Supersteps: w.Supersteps(), Tasks: w.Tasks(), Unit: w.Unit(),
		NSPerUnit:    round(float64(med) / float64(w.Units())),
		AllocsPerRun: round(float64(after.Mallocs-before.Mallocs) / float64(runs)),
		BytesPerRun:  round(float64(after.TotalAlloc-before.TotalAlloc) / float64(runs)),
		PeakRSSKB:    peakRSSKB(),
	}, nil
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []int64, p int) int64 {
	i := (p*len(sorted)+99)/100 - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// round keeps two decimals.
func round(f float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', 2, 64), 64)
	return v
}
