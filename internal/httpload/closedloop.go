package httpload

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ClosedLoop is the Plan of users virtual users who each send a job, wait
// for its Result, think, and send their next job: user u's first job is
// intended at u·think/users (all at 0 when think is 0), every later one at
// the previous job's DoneUS plus think, whatever its status (a closed loop
// holds its concurrency). next makes user u's next job, or returns false to
// end that user; the IntendedUS it sets is replaced. Job IDs must be unique
// among the jobs in flight.
func ClosedLoop(users int, think time.Duration, next func(user int) (Job, bool)) (Plan, error) {
	if users < 1 {
		return Plan{}, fmt.Errorf("httpload: closed loop: %d users; need at least 1", users)
	}
	if think < 0 {
		return Plan{}, fmt.Errorf("httpload: closed loop: think time %v is negative", think)
	}
	if next == nil {
		return Plan{}, errors.New("httpload: closed loop: nil job source")
	}
	thinkUS := think.Microseconds()
	var (
		mu    sync.Mutex
		owner = map[int64]int{} // job ID → user, for the jobs in flight
	)
	jobs := func(yield func(Job) bool) {
		for u := range users {
			j, ok := next(u)
			if !ok {
				continue
			}
			j.IntendedUS = int64(u) * thinkUS / int64(users)
			mu.Lock()
			owner[j.ID] = u
			mu.Unlock()
			if !yield(j) {
				return
			}
		}
	}
	follow := func(done Result) (Job, bool) {
		mu.Lock()
		u, ok := owner[done.Job.ID]
		delete(owner, done.Job.ID)
		mu.Unlock()
		if !ok {
			return Job{}, false
		}
		j, ok := next(u)
		if !ok {
			return Job{}, false
		}
		j.IntendedUS = done.DoneUS + thinkUS
		mu.Lock()
		owner[j.ID] = u
		mu.Unlock()
		return j, true
	}
	return Plan{Jobs: jobs, FollowUp: follow}, nil
}
