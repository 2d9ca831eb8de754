package fanout

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	none := env(nil)
	for _, tc := range []struct {
		in      string
		env     func(string) string
		want    Shard
		wantErr string
	}{
		{in: "", env: none, want: Shard{}},
		{in: "2/8", env: none, want: Shard{Index: 2, Count: 8}},
		{in: " 0 / 1 ", env: none, want: Shard{Index: 0, Count: 1}},
		{in: "8", env: env(map[string]string{EnvK8sIndex: "3"}), want: Shard{Index: 3, Count: 8}},
		{in: "8", env: env(map[string]string{EnvSlurmTask: "5", EnvSlurmMin: "1"}), want: Shard{Index: 4, Count: 8}},
		{in: "8", env: env(map[string]string{EnvK8sIndex: "1", EnvSlurmTask: "7"}), want: Shard{Index: 1, Count: 8}},
		{in: "8", env: none, wantErr: "no slice index"},
		{in: "8/8", env: none, wantErr: "outside [0, 8)"},
		{in: "-1/8", env: none, wantErr: "outside"},
		{in: "1/0", env: none, wantErr: "number of slices"},
		{in: "1/99999999999", env: none, wantErr: "number of slices"},
		{in: "a/4", env: none, wantErr: "slice index must be an integer"},
		{in: "4", env: env(map[string]string{EnvK8sIndex: "x"}), wantErr: "is not an integer"},
		{in: "4", env: env(map[string]string{EnvSlurmTask: "-9223372036854775808", EnvSlurmMin: "1"}),
			wantErr: `$SLURM_ARRAY_TASK_ID="-9223372036854775808" is not an integer in [0, 2147483647]`},
		{in: "4", env: env(map[string]string{EnvSlurmTask: "3", EnvSlurmMin: "-9223372036854775808"}),
			wantErr: `$SLURM_ARRAY_TASK_MIN="-9223372036854775808" is not an integer in [0, 2147483647]`},
		{in: "4", env: env(map[string]string{EnvK8sIndex: "99999999999999999999"}), wantErr: `$JOB_COMPLETION_INDEX="99999999999999999999" is not an integer in [0, 2147483647]`},
		{in: "4", env: env(map[string]string{EnvSlurmTask: "2", EnvSlurmMin: "5"}), wantErr: "slice index -3 is outside [0, 4)"},
	} {
		got, err := Parse(tc.in, tc.env)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Parse(%q) error = %v, want one containing %q", tc.in, err, tc.wantErr)
			} else if code := exitCode(err); code != 2 {
				t.Errorf("Parse(%q) exit code %d, want 2", tc.in, code)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestShardOwnsPartitions(t *testing.T) {
	const n = 5
	owners := make([]int, 23)
	for i := range n {
		s := Shard{Index: i, Count: n}
		for k := range owners {
			if s.Owns(int64(k)) {
				owners[k]++
			}
		}
	}
	for k, c := range owners {
		if c != 1 {
			t.Fatalf("item %d owned by %d slices, want exactly 1", k, c)
		}
	}
	if !(Shard{}).Owns(7) || (Shard{}).Sharded() {
		t.Fatal("the zero Shard must own everything and not be sharded")
	}
}

// exitCode is the exit code an error carries (1 when none).
func exitCode(err error) int {
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}
