package main

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ilmek-go/ilmek/bench/workload"
)

// cell is one benchmark: a workload on one engine with one checkpointer.
type cell struct {
	nsPerOp, cpuPerUnit, allocsPerOp []float64 // one per -count repetition
}

// key names a cell.
type key struct{ workload, engine, ckpt string }

// results is what Parse read.
type results struct {
	cells map[key]*cell
	rows  []row                // workload × ckpt, in input order
	other map[string][]float64 // other benchmarks' metrics, "Bench/unit", one per repetition
}

type row struct{ workload, ckpt string }

// Parse reads `go test -bench` output: lines such as
//
//	BenchmarkWorkloads/chain-100/generated/none-2  1000  21000 ns/op  210 ns/superstep  205 cpu-ns/superstep  2344 B/op  16 allocs/op
//
// and the generator's BenchmarkGenerate1000 and BenchmarkGoBuild1000.
func Parse(r io.Reader) (*results, error) {
	res := &results{cells: map[key]*cell{}, other: map[string][]float64{}}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i] // the GOMAXPROCS suffix
			}
		}
		metrics := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			metrics[f[i+1]] = v
		}
		parts := strings.Split(name, "/")
		if len(parts) != 4 || parts[0] != "BenchmarkWorkloads" {
			for unit, v := range metrics {
				res.other[name+"/"+unit] = append(res.other[name+"/"+unit], v)
			}
			continue
		}
		w, err := workload.Parse(parts[1])
		if err != nil {
			return nil, err
		}
		k := key{parts[1], parts[2], parts[3]}
		c := res.cells[k]
		if c == nil {
			c = &cell{}
			res.cells[k] = c
			if rw := (row{k.workload, k.ckpt}); !slices.Contains(res.rows, rw) {
				res.rows = append(res.rows, rw)
			}
		}
		c.nsPerOp = append(c.nsPerOp, metrics["ns/op"])
		c.cpuPerUnit = append(c.cpuPerUnit, metrics["cpu-ns/"+w.Unit()])
		c.allocsPerOp = append(c.allocsPerOp, metrics["allocs/op"])
	}
	return res, sc.Err()
}

// median of the repetitions (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// get returns the median ns per run, CPU ns per unit and allocs per run of
// a cell, and whether it was measured.
func (r *results) get(w, engine, ckpt string) (ns, cpu, allocs float64, ok bool) {
	c := r.cells[key{w, engine, ckpt}]
	if c == nil {
		return 0, 0, 0, false
	}
	return median(c.nsPerOp), median(c.cpuPerUnit), median(c.allocsPerOp), true
}
