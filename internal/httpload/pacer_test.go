package httpload

import (
	"slices"
	"testing"
	"time"
)

func TestWait(t *testing.T) {
	s := Schedule{1000, 5000, 5000}
	tests := []struct {
		elapsed time.Duration
		sent    int64
		want    time.Duration
		ok      bool
	}{
		{0, 0, time.Millisecond, true},
		{400 * time.Microsecond, 0, 600 * time.Microsecond, true},
		{2 * time.Millisecond, 0, 0, true}, // overdue: send now
		{2 * time.Millisecond, 1, 3 * time.Millisecond, true},
		{5 * time.Millisecond, 2, 0, true},
		{5 * time.Millisecond, 3, 0, false},
	}
	for _, tc := range tests {
		got, ok := Wait(s, tc.elapsed, tc.sent)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Wait(%v, %d) = %v, %v; want %v, %v", tc.elapsed, tc.sent, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSchedules(t *testing.T) {
	if _, err := NewSchedule([]int64{0, 5, 4}); err == nil {
		t.Error("decreasing schedule accepted")
	}
	if _, err := NewSchedule([]int64{-1}); err == nil {
		t.Error("negative offset accepted")
	}
	s, err := ScheduleFromIntervals([]int64{199999, 199999, 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Schedule{199999, 399998, 399999}); !slices.Equal(s, want) {
		t.Errorf("from intervals: got %v, want %v", s, want)
	}
	if _, err := ScheduleFromIntervals([]int64{5, 0}); err == nil {
		t.Error("zero interval accepted")
	}
	fast, err := s.Scaled(2)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Schedule{99999, 199999, 199999}); !slices.Equal(fast, want) {
		t.Errorf("scaled ×2: got %v, want %v", fast, want)
	}
	if _, err := s.Scaled(0); err == nil {
		t.Error("speed 0 accepted")
	}
}

func TestPace(t *testing.T) {
	jobs := func(yield func(Job) bool) {
		for i := range 5 {
			if !yield(Job{ID: int64(i), IntendedUS: -1}) {
				return
			}
		}
	}
	var got []int64
	for j := range Pace(jobs, Schedule{10, 20, 30}) {
		got = append(got, j.ID*1000+j.IntendedUS)
	}
	if want := []int64{10, 1020, 2030}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v (the shorter of jobs and schedule)", got, want)
	}
}
