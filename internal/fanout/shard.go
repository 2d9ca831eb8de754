package fanout

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"servesim/internal/exitcode"
	"servesim/internal/flagspec"
)

// Shard is one slice of a job fanned out over independent processes (a
// Kubernetes Indexed Job, a Slurm array, GNU parallel, a CI matrix): worker
// Index of Count. Item k of the job (a sweep case, a request of a seeded
// stream) belongs to the worker with k mod Count = Index, so the slices are
// disjoint, cover the job, and stay balanced whatever the job's order.
// The zero value (Count 0) means "not sharded": every item is ours.
type Shard struct {
	Index int // 0-based, < Count
	Count int // ≥ 1 when sharded
}

// MaxShards bounds the number of workers a job can be split into.
const MaxShards = 1 << 20

// Owns reports whether item k (0-based) belongs to this worker.
func (s Shard) Owns(k int64) bool {
	if s.Count <= 1 {
		return true
	}
	return k%int64(s.Count) == int64(s.Index)
}

// Sharded reports whether the job is split over more than one worker.
func (s Shard) Sharded() bool { return s.Count > 1 }

// String is the flag form, "I/N" ("" when not sharded).
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// The environment variables an existing fan-out engine sets to tell a worker
// its index: a Kubernetes Indexed Job (0-based), then a Slurm job array
// (its task id, taken relative to SLURM_ARRAY_TASK_MIN when that is set).
const (
	EnvK8sIndex  = "JOB_COMPLETION_INDEX"
	EnvSlurmTask = "SLURM_ARRAY_TASK_ID"
	EnvSlurmMin  = "SLURM_ARRAY_TASK_MIN"
)

// Flag describes the shared `--shard` flag.
func Flag() flagspec.Flag {
	return flagspec.Flag{
		Name:     "shard",
		Category: flagspec.CatSweep,
		Kind:     flagspec.String,
		Usage: "run only slice I of N (0-based; item k goes to slice k mod N), e.g. 2/8. " +
			"Give N alone to take I from $" + EnvK8sIndex + " (Kubernetes Indexed Job) or $" + EnvSlurmTask + " (Slurm array)",
	}
}

// Parse reads a `--shard` value: "I/N", or "N" with the index taken from
// the environment (getenv is os.Getenv in production). The empty string is
// "not sharded".
func Parse(v string, getenv func(string) string) (Shard, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return Shard{}, nil
	}
	idx, cnt, explicit := strings.Cut(v, "/")
	if !explicit {
		cnt = idx
	}
	n, err := strconv.Atoi(strings.TrimSpace(cnt))
	if err != nil || n < 1 || n > MaxShards {
		return Shard{}, exitcode.Usagef("--shard %q: the number of slices must be an integer in [1, %d]", v, MaxShards)
	}
	var i int
	if explicit {
		i, err = strconv.Atoi(strings.TrimSpace(idx))
		if err != nil {
			return Shard{}, exitcode.Usagef("--shard %q: the slice index must be an integer, as in 0/%d", v, n)
		}
	} else if i, err = shardFromEnv(getenv); err != nil {
		return Shard{}, exitcode.Usagef("--shard %q: %v", v, err)
	}
	if i < 0 || i >= n {
		return Shard{}, exitcode.Usagef("--shard %q: slice index %d is outside [0, %d)", v, i, n)
	}
	return Shard{Index: i, Count: n}, nil
}

// maxEnvIndex bounds the indices read from the environment: far above
// any engine's (a Slurm array's task ids stay below a few million), and low
// enough that the index relative to the array's first task cannot wrap.
const maxEnvIndex = math.MaxInt32

// shardFromEnv finds the worker's index in the fan-out engine's environment.
func shardFromEnv(getenv func(string) string) (int, error) {
	if s := strings.TrimSpace(getenv(EnvK8sIndex)); s != "" {
		return envIndex(EnvK8sIndex, s)
	}
	if s := strings.TrimSpace(getenv(EnvSlurmTask)); s != "" {
		i, err := envIndex(EnvSlurmTask, s)
		if err != nil {
			return 0, err
		}
		if m := strings.TrimSpace(getenv(EnvSlurmMin)); m != "" {
			lo, err := envIndex(EnvSlurmMin, m)
			if err != nil {
				return 0, err
			}
			i -= lo
		}
		return i, nil
	}
	return 0, fmt.Errorf("no slice index: give I/N, or run where $%s or $%s is set", EnvK8sIndex, EnvSlurmTask)
}

// envIndex reads the index s of environment variable name: a decimal
// integer in [0, maxEnvIndex].
func envIndex(name, s string) (int, error) {
	i, err := strconv.ParseInt(s, 10, 64)
	if err != nil || i < 0 || i > maxEnvIndex {
		return 0, fmt.Errorf("$%s=%q is not an integer in [0, %d]", name, s, maxEnvIndex)
	}
	return int(i), nil
}
