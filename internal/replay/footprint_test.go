package replay

import (
	"context"
	"io"
	"runtime"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/tracev2"
)

type noRows struct{}

func (noRows) Next() (*tracev2.Record, error) { return nil, io.EOF }

// TestFootprintBound: deploy's Footprint, which bounds the deployments a
// machine can simulate, covers what a simulation allocates before its
// first request, and is not more than twice it.
func TestFootprintBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*deploy.Config)
	}{
		{"one instance", func(*deploy.Config) {}},
		{"16 instances round-robin", func(c *deploy.Config) { c.Instances = 16 }},
		{"32 instances weighted", func(c *deploy.Config) { c.Instances, c.RoutingPolicy = 32, "weighted" }},
		{"P/D 16+16", func(c *deploy.Config) { c.PrefillInstances, c.DecodeInstances, c.PDDecider = 16, 16, "always" }},
		{"lightllm ×4", func(c *deploy.Config) { c.Instances, c.Batching = 4, "lightllm" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := deploy.Default()
			tc.edit(&cfg)
			dep, err := deploy.Resolve(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			if _, err := Simulate(context.Background(), Config{Deploy: dep}, noRows{}, nil, nil); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			got, est := float64(after.TotalAlloc-before.TotalAlloc), dep.Footprint()
			if got > est || 2*got < est {
				t.Errorf("allocated %.0f bytes, Footprint %.0f: want allocated ≤ Footprint ≤ 2 × allocated", got, est)
			}
		})
	}
}
