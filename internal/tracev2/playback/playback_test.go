package playback

import (
	"math"
	"testing"

	"servesim/internal/tracev2"
)

// TestThink is the think-time rule, one table per case the playback must
// get the same in the simulator (scale 1) and against a live server.
func TestThink(t *testing.T) {
	sim := Rule{ThinkTimeUs: 7000, TimeScale: 1}
	fast := Rule{ThinkTimeUs: 7000, TimeScale: 0.5}
	tests := []struct {
		name string
		rule Rule
		in   Round
		want Think
	}{
		// Ordinary rows.
		{"the row's own think time", sim, Round{ThinkTimeUs: 2000, ArrivalUs: 50_000, PrevLastChunkUs: 40_000}, Think{2000, 2000}},
		{"the recorded gap", sim, Round{ArrivalUs: 50_000, PrevLastChunkUs: 40_000}, Think{10_000, 7000}},
		{"nothing recorded: the default", sim, Round{ArrivalUs: 50_000}, Think{7000, 7000}},
		{"first round: no previous last chunk", sim, Round{ArrivalUs: 0}, Think{7000, 7000}},
		// (a) A gap of 0 is a think time of 0, and so is a negative gap
		// (the round was sent before the previous one's stream ended).
		{"zero gap", sim, Round{ArrivalUs: 40_000, PrevLastChunkUs: 40_000}, Think{0, 7000}},
		{"negative gap", sim, Round{ArrivalUs: 39_000, PrevLastChunkUs: 40_000}, Think{0, 7000}},
		{"zero gap, scaled", fast, Round{ArrivalUs: 40_000, PrevLastChunkUs: 40_000}, Think{0, 7000}},
		// (b) The time scale multiplies what the trace recorded, never
		// the default (given in played time).
		{"own think time, scaled", fast, Round{ThinkTimeUs: 2001, ArrivalUs: 50_000, PrevLastChunkUs: 40_000}, Think{1001, 1001}},
		{"recorded gap, scaled", fast, Round{ArrivalUs: 50_000, PrevLastChunkUs: 40_000}, Think{5000, 7000}},
		{"default, not scaled", fast, Round{ArrivalUs: 50_000}, Think{7000, 7000}},
		{"scale 2", Rule{ThinkTimeUs: 1, TimeScale: 2}, Round{ArrivalUs: 50_000, PrevLastChunkUs: 40_000}, Think{20_000, 1}},
		{"no default", Rule{TimeScale: 1}, Round{ArrivalUs: 50_000}, Think{0, 0}},
		// (c) After a failed round, the recorded gap is no anchor: the
		// row's own think time, else the default.
		{"after a failure: own", sim, Round{ThinkTimeUs: 3000, ArrivalUs: 50_000, PrevLastChunkUs: 40_000}, Think{3000, 3000}},
		{"after a failure: default", sim, Round{ArrivalUs: 50_000, PrevLastChunkUs: 40_000}, Think{10_000, 7000}},
	}
	for _, tc := range tests {
		if got := tc.rule.Think(tc.in); got != tc.want {
			t.Errorf("%s: %+v.Think(%+v) = %+v, want %+v", tc.name, tc.rule, tc.in, got, tc.want)
		}
	}
}

// TestGoesOnAfterFailure: (c) only a closed-loop concurrency user goes on
// after a failed round.
func TestGoesOnAfterFailure(t *testing.T) {
	tests := []struct {
		session string
		want    bool
	}{
		{"concurrency_chat_user_0", true},
		{"concurrency_", true},
		{"sess_12", false},
		{"user-concurrency_1", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := GoesOnAfterFailure(tc.session); got != tc.want {
			t.Errorf("GoesOnAfterFailure(%q) = %v, want %v", tc.session, got, tc.want)
		}
	}
}

func TestScale(t *testing.T) {
	tests := []struct {
		scale float64
		us    int64
		want  int64
	}{
		{1, 0, 0},
		{1, 123_456_789, 123_456_789},
		{1, 1<<53 + 1, 1<<53 + 1}, // exact at scale 1, beyond float64's integers
		{1, math.MaxInt64, math.MaxInt64 / 2},
		{0.5, 3, 2}, // rounded half away from zero
		{0.5, 1_000_000, 500_000},
		{3, 1_000_000, 3_000_000},
		{1e6, math.MaxInt64 / 4, math.MaxInt64 / 2},
	}
	for _, tc := range tests {
		if got := (Rule{TimeScale: tc.scale}).Scale(tc.us); got != tc.want {
			t.Errorf("Scale(%d) at %v = %d, want %d", tc.us, tc.scale, got, tc.want)
		}
	}
}

func TestRoundOf(t *testing.T) {
	row := &tracev2.Record{ThinkTimeUs: 5, ArrivalTimeUs: 100, SendTimeUs: 90, LastChunkTimeUs: 300}
	if got, want := RoundOf(row, 60), (Round{ThinkTimeUs: 5, ArrivalUs: 100, PrevLastChunkUs: 60}); got != want {
		t.Errorf("RoundOf = %+v, want %+v", got, want)
	}
}

func TestInjectionUs(t *testing.T) {
	tests := []struct {
		send   int64
		atSend bool
		want   int64
	}{
		{90, true, 90},
		{90, false, 100},
		{0, true, 100}, // no send time: the arrival
	}
	for _, tc := range tests {
		row := &tracev2.Record{ArrivalTimeUs: 100, SendTimeUs: tc.send}
		if got := InjectionUs(row, tc.atSend); got != tc.want {
			t.Errorf("InjectionUs(send %d, atSend %v) = %d, want %d", tc.send, tc.atSend, got, tc.want)
		}
	}
}

func TestMove(t *testing.T) {
	tests := []struct {
		deadline, wantDeadline int64
	}{
		{0, 0},      // no deadline stays none
		{150, 1050}, // the budget (50 µs) is kept
		{80, 1000},  // a deadline before the arrival: budget 0
		{100, 1000}, // at the arrival: budget 0
		{-5, -5},    // not positive: not a deadline
	}
	for _, tc := range tests {
		row := &tracev2.Record{ArrivalTimeUs: 100, DeadlineUs: tc.deadline}
		Move(row, 1000)
		if row.ArrivalTimeUs != 1000 || row.DeadlineUs != tc.wantDeadline {
			t.Errorf("Move(deadline %d) = arrival %d, deadline %d; want 1000, %d", tc.deadline, row.ArrivalTimeUs, row.DeadlineUs, tc.wantDeadline)
		}
	}
}

// TestBudgetUs: the budget from arrival to deadline, none without a
// deadline even for a row that arrives before the origin.
func TestBudgetUs(t *testing.T) {
	tests := []struct {
		arrival, deadline, want int64
	}{
		{100, 150, 50},        // the client's timeout
		{100, 0, NoDeadline},  // no deadline
		{-40, 0, NoDeadline},  // before the origin, no deadline: still none
		{-40, 60, 100},        // before the origin, with a deadline
		{100, 80, 0},          // a deadline before the arrival: nothing left
		{100, 100, 0},         // a deadline at the arrival: nothing left either
		{100, -5, NoDeadline}, // not positive: not a deadline
	}
	for _, tc := range tests {
		row := &tracev2.Record{ArrivalTimeUs: tc.arrival, DeadlineUs: tc.deadline}
		if got := BudgetUs(row); got != tc.want {
			t.Errorf("BudgetUs(arrival %d, deadline %d) = %d, want %d", tc.arrival, tc.deadline, got, tc.want)
		}
	}
}

// TestDeadlineUs: a played deadline keeps its budget, and a budget of 0
// stays a deadline even at the origin, where atUs + 0 would read as none.
func TestDeadlineUs(t *testing.T) {
	tests := []struct {
		at, budget, want int64
	}{
		{1000, 50, 1050},
		{1000, 0, 1000}, // passed at injection
		{0, 0, 1},       // at the origin: the earliest instant, still a deadline
		{0, 7, 7},
		{1000, NoDeadline, 0},
	}
	for _, tc := range tests {
		if got := DeadlineUs(tc.at, tc.budget); got != tc.want {
			t.Errorf("DeadlineUs(%d, %d) = %d, want %d", tc.at, tc.budget, got, tc.want)
		}
	}
}

// TestOrder: injection time first, then request id, whatever the rows'
// rounds or places in the file.
func TestOrder(t *testing.T) {
	tests := []struct {
		injA, idA, injB, idB int64
		want                 int
	}{
		{100, 9, 200, 1, -1},
		{100, 3, 100, 5, -1}, // a tie: the smaller request id first
		{100, 5, 100, 3, 1},
		{100, 5, 100, 5, 0}, // equal: the file's order decides
	}
	for _, tc := range tests {
		if got := Order(tc.injA, tc.idA, tc.injB, tc.idB); got != tc.want {
			t.Errorf("Order(%d, %d, %d, %d) = %d, want %d", tc.injA, tc.idA, tc.injB, tc.idB, got, tc.want)
		}
	}
}
