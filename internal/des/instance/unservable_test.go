package instance

import "testing"

// TestUnservable: the enqueue guard's boundaries, which a replay also asks
// before it builds a prompt (a dropped row is left unhashed).
func TestUnservable(t *testing.T) {
	cases := []struct {
		p, out, maxLen, block, blocks int
		want                          bool
	}{
		{100, 50, 200, 16, 100, false},
		{0, 50, 200, 16, 100, true},    // empty prompt
		{200, 1, 200, 16, 100, true},   // prompt reaches the context
		{199, 0, 200, 16, 100, false},  // out 0: up to the context, one token left
		{150, 51, 200, 16, 100, true},  // no room for the output
		{150, 50, 200, 16, 100, false}, // exactly fills the context
		{161, 10, 1000, 16, 10, true},  // 11 blocks of 16 > 10
		{160, 10, 1000, 16, 10, false}, // 10 blocks
		{161, 10, 1000, 0, 10, false},  // no block size: no block guard
	}
	for _, c := range cases {
		if got := Unservable(c.p, c.out, c.maxLen, c.block, c.blocks); got != c.want {
			t.Errorf("Unservable(%d, %d, %d, %d, %d) = %v, want %v", c.p, c.out, c.maxLen, c.block, c.blocks, got, c.want)
		}
	}
}
