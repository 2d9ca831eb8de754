package cli

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/deploy"
)

func TestResolvedDeployment(t *testing.T) {
	def, err := deploy.Resolve(deploy.Default())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		wantGPU   string
		wantError bool
	}{
		{"defaults", nil, def.GPU, false},
		{"a flag applies", []string{"--gpu", "A100-80"}, "A100-80", false},
		{"an unknown GPU fails", []string{"--gpu", "no-such-gpu"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *deploy.Resolved
			cmd := Command{Name: "t", Usage: "test", Flags: SpecFlags(deploy.Flags()),
				Action: func(_ context.Context, c *ucli.Context, _ IO, _ *slog.Logger) error {
					cfg, err := deploy.FromFlags(SpecValues(c, deploy.Flags()))
					if err != nil {
						return err
					}
					got, err = deploy.Resolve(cfg)
					return err
				}}
			var out, errb bytes.Buffer
			err := Run(context.Background(), cmd, append([]string{"t"}, tt.args...), IO{Out: &out, Err: &errb})
			if tt.wantError {
				if err == nil {
					t.Fatalf("the deployment of %q = %+v, want an error", tt.args, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.GPU != tt.wantGPU || got.Model != def.Model {
				t.Errorf("the deployment of %q: GPU %q model %q, want %q %q", tt.args, got.GPU, got.Model, tt.wantGPU, def.Model)
			}
		})
	}
}
