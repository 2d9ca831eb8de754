//go:build linux

package alarm

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// wakeFD is a non-blocking CLOCK_MONOTONIC timerfd registered with the Go
// runtime's poller (os.NewFile registers non-blocking descriptors). Nobody
// reads it: its expiry only has to wake epoll_wait, and each re-arming
// resets its expiry count, so the edge-triggered poller sees every expiry.
type wakeFD struct {
	f  *os.File
	rc syscall.RawConn
}

// Constants of timerfd_create(2); Go's CLOCK_MONOTONIC matches time.Now's
// monotonic reading.
const (
	clockMonotonic = 1
	tfdNonblock    = syscall.O_NONBLOCK
	tfdCloexec     = syscall.O_CLOEXEC
)

type itimerspec struct {
	interval syscall.Timespec
	value    syscall.Timespec
}

func openWakeFD() wakeFD {
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdNonblock|tfdCloexec, 0)
	if errno != 0 {
		return wakeFD{}
	}
	f := os.NewFile(fd, "alarm-timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return wakeFD{}
	}
	return wakeFD{f: f, rc: rc}
}

// arm sets the alarm to expire after d; d ≤ 0 disarms it.
func (w wakeFD) arm(d time.Duration) {
	if w.rc == nil {
		return
	}
	var spec itimerspec
	if d > 0 {
		spec.value = syscall.NsecToTimespec(int64(d))
	}
	_ = w.rc.Control(func(fd uintptr) {
		_, _, _ = syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	})
}

func (w wakeFD) close() error {
	if w.f == nil {
		return nil
	}
	return w.f.Close()
}

// precise reports whether the kernel alarm is in use.
func (w wakeFD) precise() bool { return w.rc != nil }
