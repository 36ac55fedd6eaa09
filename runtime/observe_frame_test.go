package runtime_test

import (
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// TestRunTaskFrameSmall checks, in the compiler's output, that runTask —
// the first frame of every task's goroutine — and runTaskTimed, its
// observed path, are as small as runTaskBody. A goroutine starts with a small stack;
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
	for shape, f := range frames {
		body := f["runTaskBody"]
		for _, fn := range []string{"runTask", "runTaskTimed"} {
			if n, ok := f[fn]; !ok || n > body+64 {
				t.Errorf("runner[%.60s]: %s's frame is %d bytes (found: %v), runTaskBody's %d; keep the observer's records out of it", shape, fn, n, ok, body)
			}
		}
	}
}
