package fakevllm

import (
	"strconv"
	"strings"
)

// FaultHeader is the request header HeaderFault reads.
const FaultHeader = "X-Fake-Fault"

// HeaderFault picks each request's fault from its X-Fake-Fault header, so a
// test can inject faults through a client's own per-request headers. The
// value is a kind (http, reset, stall, garbage, stream-error, no-done)
// followed by options: after=N, status=N, before-head. No header, or an
// unknown kind, means no fault. Use it as Config.Fault.
func HeaderFault(_ int64, req *Request) Fault {
	fields := strings.Fields(req.Header.Get(FaultHeader))
	if len(fields) == 0 {
		return Fault{}
	}
	var f Fault
	switch fields[0] {
	case "http":
		f.Kind = HTTPError
	case "reset":
		f.Kind = Reset
	case "stall":
		f.Kind = Stall
	case "garbage":
		f.Kind = Garbage
	case "stream-error":
		f.Kind = StreamError
	case "no-done":
		f.Kind = NoDone
	default:
		return Fault{}
	}
	for _, opt := range fields[1:] {
		key, val, _ := strings.Cut(opt, "=")
		n, _ := strconv.Atoi(val)
		switch key {
		case "after":
			f.AfterChunks = max(n, 0)
		case "status":
			f.Status = n
		case "before-head":
			f.BeforeHead = true
		}
	}
	return f
}
