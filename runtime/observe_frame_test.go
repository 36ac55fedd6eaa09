package runtime_test

import (
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// TestRunTaskFrameSmall checks, in the compiler's output, that runTask —
// the first frame of every task's goroutine — and runTaskTimed, its
// observed path, are as small as runTaskBody, and that the log observer's
// calls on a task's goroutine are small too. A goroutine starts with a small stack;
// when runTask held the timed path's records (a 504-byte frame), every
// goroutine of an unobserved fan-out grew and copied its stack, which
// doubled the CPU time per task of fanout-1000.
func TestRunTaskFrameSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the package")
	}
	out, err := exec.Command("go", "build", "-o", "/dev/null", "-gcflags=github.com/ilmek-go/ilmek/runtime=-S", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-S: %v\n%.2000s", err, out)
	}
	// One line per instance of a generic method, e.g.
	// "...(*runner[go.shape...]).runTask STEXT dupok size=108 args=0x20 locals=0x28 ..."
	re := regexp.MustCompile(`(?m)^\S*\(\*runner\[(.*)\]\)\.(runTask|runTaskTimed|runTaskBody) STEXT.* locals=0x([0-9a-f]+)`)
	frames := map[string]map[string]int64{} // shape -> function -> locals
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		n, err := strconv.ParseInt(m[3], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		if frames[m[1]] == nil {
			frames[m[1]] = map[string]int64{}
		}
		frames[m[1]][m[2]] = n
	}
	if len(frames) == 0 {
		t.Fatalf("no runTask in the compiler's output:\n%.2000s", out)
	}
	// The log observer's calls from a task's goroutine check the level in
	// a small frame; the records are built elsewhere.
	logRe := regexp.MustCompile(`(?m)^\S*runtime\.logObserver\.(TaskStart|TaskRetry|TaskEnd|Step) STEXT.* locals=0x([0-9a-f]+)`)
	logs := logRe.FindAllStringSubmatch(string(out), -1)
	if len(logs) != 4 {
		t.Errorf("found %d of the log observer's 4 task calls in the compiler's output", len(logs))
	}
	for _, m := range logs {
		if n, _ := strconv.ParseInt(m[2], 16, 64); n > 128 {
			t.Errorf("logObserver.%s's frame is %d bytes; build its records in a function of its own", m[1], n)
		}
	}
	for shape, f := range frames {
		body := f["runTaskBody"]
		for _, fn := range []string{"runTask", "runTaskTimed"} {
			if n, ok := f[fn]; !ok || n > body+64 {
				t.Errorf("runner[%.60s]: %s's frame is %d bytes (found: %v), runTaskBody's %d; keep the observer's records out of it", shape, fn, n, ok, body)
			}
		}
	}
}
