package main

import (
	"bufio"
	"bytes"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"servesim/internal/testkit/clitest"
	"servesim/internal/tracev2"
)

// TestInterruptPrintsSummary: Ctrl+C on run streaming its trace to a pipe
// stops the injections; the requests in flight end, the summary of what
// was simulated goes to stderr, the trace ends with x_ext.interrupted: true
// and loads whole, and the exit code is 130.
func TestInterruptPrintsSummary(t *testing.T) {
	var bins clitest.Binaries
	defer bins.Remove()
	cmd := exec.Command(bins.Path(t, "run"), "--workload", "chatbot", "--rate", "30", "--num-requests", "1000000",
		"--trace-output", "-", "--quiet")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var trace strings.Builder
	sc := bufio.NewScanner(stdout)
	rows := 0
	for sc.Scan() {
		trace.WriteString(sc.Text() + "\n")
		if !strings.HasPrefix(sc.Text(), "#") {
			rows++
		}
		if rows == 500 {
			// The simulation waits on the pipe: it has not gone far.
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v, want 130; stderr:\n%s", err, errb.String())
	}
	tr, lerr := tracev2.Load(tracev2.Input{Path: "-", Stdin: strings.NewReader(trace.String())}, tracev2.Options{})
	if lerr != nil {
		t.Fatalf("the interrupted trace does not load: %v", lerr)
	}
	x := tr.Header.XExt
	if x == nil || x.Interrupted == nil || !*x.Interrupted || len(tr.Records) < 500 || len(tr.Records) > 100_000 {
		t.Errorf("x_ext %+v, %d rows: want interrupted: true and a partial run", x, len(tr.Records))
	}
	for _, want := range []string{"interrupted: the " + strconv.Itoa(len(tr.Records)) + " requests injected before it ran to their end",
		"requests   injected " + strconv.Itoa(len(tr.Records)) + "  completed " + strconv.Itoa(len(tr.Records)),
		"run: interrupted after " + strconv.Itoa(len(tr.Records)) + " requests injected"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
}
