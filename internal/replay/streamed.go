package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"servesim/internal/tracev2/input"
)

// replayStreamed replays the trace's Stream as it is read, holding back
// stdout until the whole trace has been read. done is false when the
// trace broke what streaming assumed (nothing was written): it is to be
// replayed the usual way.
func (j *job) replayStreamed(ctx context.Context) (done bool, err error) {
	s := j.in.Stream
	held := &heldOutput{w: j.stdout}
	defer held.discard()
	sj := *j
	sj.stdout = held
	if j.summaryTo == j.stdout {
		sj.summaryTo = held
	}
	tr, err := StreamTrace(s, j.opts)
	if err != nil {
		return true, err
	}
	defer tr.Close()
	if DeclaresPrivate(j.dep) {
		if rd, hint, ok := s.Again(); ok {
			tr.CountPrefixes(ctx, rd, hint)
		}
	}
	release := func(interrupted bool) error {
		if interrupted {
			tr.Close() // the rest is not read
		} else if err := tr.Finish(); err != nil {
			return err
		} else if tr.Len() == 0 {
			return input.ErrNotStreamable // --skip-failed left nothing: the usual way says so
		}
		j.in.N = s.Rows()
		for _, w := range s.Warnings() {
			j.log.Warn(w)
		}
		return held.release()
	}
	err = sj.simulate(ctx, tr, release)
	tr.Close() // its reading goroutine has stopped: s is the caller's
	switch {
	case s.Err() != nil:
		return true, s.Err() // the import's error, as importing first gives it
	case errors.Is(err, ErrNotInOrder), errors.Is(err, input.ErrNotStreamable):
		j.log.Debug("the trace is replayed the usual way", "input", j.in.Name, "why", err)
		return false, nil
	}
	return true, err
}

// heldOutput holds what a streamed replay writes to stdout until release:
// up to heldInMemory bytes in memory (in the writes' own chunks, never
// copied again), the rest in a temporary file.
type heldOutput struct {
	w        io.Writer
	limit    int // bytes held in memory; 0 = heldInMemory
	mem      [][]byte
	size     int
	spill    *os.File
	released bool
}

const heldInMemory = 8 << 20

func (h *heldOutput) Write(p []byte) (int, error) {
	switch {
	case h.released:
		return h.w.Write(p)
	case h.spill == nil && h.size+len(p) <= cmp.Or(h.limit, heldInMemory):
		h.mem = append(h.mem, append([]byte(nil), p...))
		h.size += len(p)
		return len(p), nil
	case h.spill == nil:
		f, err := os.CreateTemp("", "replay-stdout-*")
		if err != nil {
			return 0, fmt.Errorf("hold stdout: %w", err)
		}
		h.spill = f
	}
	n, err := h.spill.Write(p)
	if err != nil {
		err = fmt.Errorf("hold stdout: %w", err)
	}
	return n, err
}

// release writes what was held and lets later writes through.
func (h *heldOutput) release() error {
	if h.released {
		return nil
	}
	h.released = true
	for _, b := range h.mem {
		if _, err := h.w.Write(b); err != nil {
			return err
		}
	}
	if h.spill != nil {
		if _, err := h.spill.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("hold stdout: %w", err)
		}
		if _, err := io.Copy(h.w, h.spill); err != nil {
			return err
		}
	}
	h.discard()
	return nil
}

// discard forgets what was held (nothing after release).
func (h *heldOutput) discard() {
	h.mem, h.size = nil, 0
	if h.spill != nil {
		h.spill.Close()
		os.Remove(h.spill.Name())
		h.spill = nil
	}
}
