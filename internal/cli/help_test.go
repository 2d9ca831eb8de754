package cli

import (
	"bytes"
	"context"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/deploy"
	"servesim/internal/flagspec"
	"servesim/internal/replay"
	"servesim/internal/workload"
)

// TestHelpGroupsFlags: --help lists the command's own flags first, then one
// heading per category in flagspec's order, every visible flag exactly
// once, in the order the command gives them.
func TestHelpGroupsFlags(t *testing.T) {
	own := &ucli.StringFlag{Name: "own-flag", Usage: "the command's own"}
	flags := append([]ucli.Flag{own}, append(append(append(SimOutputFlags(), SpecFlags(workload.Flags())...), SpecFlags(replay.ClientFlags(false))...),
		SpecFlags(append(deploy.Flags(), deploy.ListFlags()...))...)...)
	cmd := Command{Name: "t", Usage: "test", Flags: flags,
		Action: func(context.Context, *ucli.Context, IO, *slog.Logger) error { return nil }}
	var out bytes.Buffer
	if err := Run(context.Background(), cmd, []string{"t", "--help"}, IO{Out: &out, Err: &out}); err != nil {
		t.Fatal(err)
	}
	_, opts, ok := strings.Cut(out.String(), "GLOBAL OPTIONS:")
	if !ok {
		t.Fatalf("no OPTIONS:\n%s", out.String())
	}
	if !strings.HasPrefix(strings.TrimSpace(opts), "--own-flag") {
		t.Errorf("the command's own flag is not first:\n%s", opts)
	}
	var headings []string
	for _, m := range regexp.MustCompile(`(?m)^   ([A-Z][A-Z /:]+)$`).FindAllStringSubmatch(opts, -1) {
		headings = append(headings, m[1])
	}
	want := []string{flagspec.CatWorkload, flagspec.CatClient, flagspec.CatDeployment, flagspec.CatKVCache, flagspec.CatBatching,
		flagspec.CatCluster, flagspec.CatPD, flagspec.CatOutput, flagspec.CatGeneral}
	if !slices.Equal(headings, want) {
		t.Errorf("headings %q, want %q", headings, want)
	}
	for _, f := range cmd.AllFlags() {
		if v, ok := f.(ucli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		if n := len(regexp.MustCompile(`(?m)^   --`+regexp.QuoteMeta(f.Names()[0])+`\b[ ,]`).FindAllString(opts, -1)); n != 1 {
			t.Errorf("--%s is listed %d times", f.Names()[0], n)
		}
	}
	if strings.Index(opts, "--model ") > strings.Index(opts, "--max-num-seqs ") {
		t.Error("--model is not listed before --max-num-seqs: the key list's order is lost")
	}
}
