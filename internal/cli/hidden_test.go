package cli

import (
	"testing"

	ucli "github.com/urfave/cli/v2"
)

// TestHidden: every flag kind the commands define is hidden, and keeps its
// default.
func TestHidden(t *testing.T) {
	for _, f := range []ucli.Flag{&ucli.BoolFlag{Name: "b", Value: true}, &ucli.DurationFlag{Name: "d"}, &ucli.Float64Flag{Name: "f"},
		&ucli.IntFlag{Name: "i", Value: 7}, &ucli.Int64Flag{Name: "i64"}, &ucli.StringFlag{Name: "s", Value: "x"},
		&ucli.StringSliceFlag{Name: "ss"}, &ucli.GenericFlag{Name: "g"}} {
		h, ok := Hidden(f).(ucli.VisibleFlag)
		if !ok || h.IsVisible() {
			t.Errorf("%s: still visible", f.Names()[0])
		}
	}
	if got := Hidden(&ucli.IntFlag{Name: "i", Value: 7}).(*ucli.IntFlag).Value; got != 7 {
		t.Errorf("default %d, want 7", got)
	}
}
