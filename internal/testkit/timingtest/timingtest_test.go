package timingtest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestParseLoad(t *testing.T) {
	cpus := float64(runtime.NumCPU())
	tests := []struct {
		in       string
		wantLoad float64
		wantBusy bool
	}{
		{fmt.Sprintf("%.2f 0.50 0.40 1/100 4242\n", cpus+1), cpus + 1, true},
		{fmt.Sprintf("%.2f 0.50 0.40 1/100 4242\n", cpus), cpus, false},
		{"", 0, false},
		{"x 1 1", 0, false},
	}
	for _, tt := range tests {
		load, busy := parseLoad(tt.in)
		if load != tt.wantLoad || busy != tt.wantBusy {
			t.Errorf("parseLoad(%q) = %v, %v; want %v, %v", tt.in, load, busy, tt.wantLoad, tt.wantBusy)
		}
	}
}

// recordingTB records logs, errors and skips instead of acting on them.
type recordingTB struct {
	testing.TB
	logs, errors, skips int
	msg                 string
}

func (r *recordingTB) Helper()               { /* no-op */ }
func (r *recordingTB) Logf(string, ...any)   { r.logs++ }
func (r *recordingTB) Errorf(string, ...any) { r.errors++ }
func (r *recordingTB) Skipf(f string, a ...any) {
	r.skips++
	r.msg = fmt.Sprintf(f, a...)
}

func TestAssert(t *testing.T) {
	t.Run("passes on the second attempt", func(t *testing.T) {
		rec := &recordingTB{TB: t}
		calls := 0
		Assert(rec, func(attempt int) (string, bool, bool) {
			calls++
			return "r", attempt == 1, false
		})
		if calls != 2 || rec.logs != 2 || rec.errors != 0 || rec.skips != 0 {
			t.Errorf("calls %d, logs %d, errors %d, skips %d; want 2, 2, 0, 0", calls, rec.logs, rec.errors, rec.skips)
		}
	})
	t.Run("every attempt loaded skips", func(t *testing.T) {
		rec := &recordingTB{TB: t}
		Assert(rec, func(attempt int) (string, bool, bool) { return fmt.Sprint("attempt ", attempt), false, true })
		if rec.skips != 1 || rec.errors != 0 || !strings.Contains(rec.msg, "last attempt: attempt 2") {
			t.Errorf("skips %d, errors %d, message %q; want one skip naming the last attempt", rec.skips, rec.errors, rec.msg)
		}
	})
}
