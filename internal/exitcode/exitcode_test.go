package exitcode

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestOf(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("boom"), 1},
		{Usagef("bad"), 2},
		{fmt.Errorf("wrapped: %w", WithCode(Assertion, errors.New("gate"))), 3},
		{fmt.Errorf("stop: %w", context.Canceled), 130},
	}
	for _, tt := range tests {
		if got := Of(tt.err); got != tt.want {
			t.Errorf("Of(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}
