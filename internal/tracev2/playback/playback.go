package playback

import (
	"cmp"
	"math"
	"strings"

	"servesim/internal/tracev2"
)

// maxUs bounds a played duration, so that a time plus a duration never
// overflows int64.
const maxUs = math.MaxInt64 / 2

// Rule is the playback of closed-loop sessions: the think time a trace
// records for a round, scaled, and the default for a round whose trace
// records none.
type Rule struct {
	// ThinkTimeUs is the think time, in played µs, before a round whose
	// trace records none (neither think_time_us nor the previous round's
	// last chunk); it is not scaled.
	ThinkTimeUs int64
	// TimeScale multiplies every recorded time and duration as it is
	// played: 1 plays the trace as recorded (the simulator always does),
	// 0.5 twice as fast.
	TimeScale float64
}

// Round is what a trace records about the start of one session round:
// the round's own row, and the last chunk of the round before it.
type Round struct {
	ThinkTimeUs     int64 // the row's think_time_us; 0 = not recorded
	ArrivalUs       int64 // the row's arrival_time_us
	PrevLastChunkUs int64 // the previous round's last_chunk_time_us; 0 = not recorded
}

// RoundOf is the Round of row, whose session's previous round ended its
// stream at prevLastChunkUs (0 when unknown).
func RoundOf(row *tracev2.Record, prevLastChunkUs int64) Round {
	return Round{ThinkTimeUs: row.ThinkTimeUs, ArrivalUs: row.ArrivalTimeUs, PrevLastChunkUs: prevLastChunkUs}
}

// Think is the pause a client takes before a session round, in played µs,
// counted from the end of the round before it as the client saw it.
type Think struct {
	// AfterDoneUs follows a round that completed: the row's think_time_us
	// when > 0, else the recorded gap max(0, arrival − previous round's
	// last chunk) when that last chunk was recorded (a gap of 0 is a
	// think time of 0: that user sent at once), else Rule.ThinkTimeUs.
	AfterDoneUs int64
	// AfterFailureUs follows a round that failed, in a session that goes
	// on (GoesOnAfterFailure): the row's think_time_us when > 0, else
	// Rule.ThinkTimeUs. The failed round's last chunk is no anchor for
	// the recorded gap.
	AfterFailureUs int64
}

// Think is the think time before round x. Recorded durations are scaled;
// the default is not.
func (r Rule) Think(x Round) Think {
	th := Think{AfterDoneUs: r.ThinkTimeUs, AfterFailureUs: r.ThinkTimeUs}
	switch {
	case x.ThinkTimeUs > 0:
		th.AfterDoneUs = r.Scale(x.ThinkTimeUs)
		th.AfterFailureUs = th.AfterDoneUs
	case x.PrevLastChunkUs > 0:
		th.AfterDoneUs = r.Scale(max(0, x.ArrivalUs-x.PrevLastChunkUs))
	}
	return th
}

// GoesOnAfterFailure reports whether a session goes on after one of its
// rounds failed (an error or a timeout): only a closed-loop concurrency
// user does, whose session id is "concurrency_…" (docs/workload.md §8);
// every other session ends at its failed round.
func GoesOnAfterFailure(sessionID string) bool {
	return strings.HasPrefix(sessionID, "concurrency_")
}

// Scale multiplies a recorded duration or time offset (µs) by the time
// scale, rounded to the µs, saturating at MaxInt64/2; at scale 1 it is
// the duration itself.
func (r Rule) Scale(us int64) int64 {
	if r.TimeScale == 1 {
		return min(us, maxUs)
	}
	v := math.Round(float64(us) * r.TimeScale)
	if v >= maxUs {
		return maxUs
	}
	return int64(v)
}

// InjectionUs is the time a row is played at, on the trace's origin: its
// send_time_us when atSend and it has one (> 0), else its arrival_time_us.
func InjectionUs(row *tracev2.Record, atSend bool) int64 {
	if atSend && row.SendTimeUs > 0 {
		return row.SendTimeUs
	}
	return row.ArrivalTimeUs
}

// Order compares two rows' places in the injection order: by injection
// time (InjectionUs), then by request id, so that the order does not
// depend on how a file lists its rows (merged or re-sorted traces play
// alike); rows equal in both keep their order in the file. It is the one
// order of replay and of observe --trace.
func Order(injectA, idA, injectB, idB int64) int {
	return cmp.Or(cmp.Compare(injectA, injectB), cmp.Compare(idA, idB))
}

// NoDeadline is the BudgetUs of a row without a deadline.
const NoDeadline = -1

// BudgetUs is the time a row's client gave it from its arrival to its
// deadline, max(0, deadline − arrival), or NoDeadline when the row has none
// (a deadline_us of 0 or less is none: a row arriving before the origin, at
// a negative time, must not get a deadline of its own). A budget of 0 is a
// deadline that has passed when the row is injected: the simulator times
// such a request out at injection instead of queueing it, and observe does
// not send it (docs/tracev2.md §5).
func BudgetUs(row *tracev2.Record) int64 {
	if row.DeadlineUs <= 0 {
		return NoDeadline
	}
	return max(0, row.DeadlineUs-row.ArrivalTimeUs)
}

// DeadlineUs is the deadline of a row whose budget is budgetUs (BudgetUs)
// when it is played at atUs: atUs + budgetUs, at least 1 (a deadline of 0
// is none, and 1 µs is the earliest instant a run's clock stamps), or 0
// for NoDeadline.
func DeadlineUs(atUs, budgetUs int64) int64 {
	if budgetUs < 0 {
		return 0
	}
	return max(atUs+budgetUs, 1)
}

// Move makes a row arrive at atUs, keeping its deadline's budget: a
// positive deadline becomes DeadlineUs(atUs, BudgetUs(row)).
func Move(row *tracev2.Record, atUs int64) {
	if row.DeadlineUs > 0 {
		row.DeadlineUs = DeadlineUs(atUs, BudgetUs(row))
	}
	row.ArrivalTimeUs = atUs
}
