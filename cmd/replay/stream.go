package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/deploy"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
)

// Streaming an import. A foreign trace used to be imported whole into a
// spool, read again to sort its rows, and a third time as it was
// replayed, before and beside a simulation that a user on two cores
// could have had running from the first row. Importers number their rows
// in file order, and the production traces (Azure's, Mooncake's) are
// sorted by time, so their rows already come in injection order: the
// replay then reads the import once, on another goroutine, as the
// simulation takes its rows (replay.StreamTrace). What it assumed is
// checked row by row: rows in injection order with ascending ids, no row
// with a send and an end (a client would have to be looked for in the
// whole trace first), ext_hash_ids present from the first row on or on
// none. Nothing goes to stdout, and no file is committed, before the
// whole trace has been read and found as assumed and valid; a trace that
// is not is replayed again the usual way (imported anew: the file, or a
// copy of stdin kept on the way), and a bad row is the same error as
// before the simulation started.

// errNotStreamable says a streamed import broke what streaming assumed.
var errNotStreamable = errors.New("the import cannot be streamed")

// streamedImport is an import read as it is replayed: the replay's
// RowReader.
type streamedImport struct {
	src     *importSource
	first   *tracev2.Record // taken by importInput, not read yet
	hashIDs bool            // rows have ext_hash_ids (the first one has)
	n       int
	err     error // the import's own error (a bad row)
}

// importInput imports a foreign trace (spoolImport) or, with stream, opens
// it and takes its first row, to be streamed (replayStreamed) or spooled
// later (spoolStream). A first row with a send and an end is spooled at
// once: the client is looked for in the whole trace.
func importInput(format importer.Format, path string, stdin io.Reader, log *slog.Logger, stream bool) (*input, error) {
	src, err := openImport(format, path, stdin, stream)
	if err != nil {
		return nil, err
	}
	if !stream {
		defer src.close()
		return spoolImport(src, nil, log)
	}
	first, err := src.imp.Next()
	switch {
	case errors.Is(err, io.EOF):
		defer src.discard()
		return spoolImport(src, nil, log) // the trace has no requests
	case err != nil:
		src.discard()
		return nil, err
	case hasSpan(&first):
		defer src.discard()
		return spoolImport(src, &first, log)
	}
	s := &streamedImport{src: src, first: &first, hashIDs: len(first.HashIDs) > 0}
	in := &input{name: src.name, header: src.imp.Header(), unique: true, stream: s}
	in.cols.HashIDs = s.hashIDs
	return in, nil
}

// discard closes src and removes the copy of stdin it may keep.
func (s *importSource) discard() {
	s.close()
	if s.tee != nil {
		s.tee.f.Close()
		os.Remove(s.tee.f.Name())
		s.tee = nil
	}
}

// Read implements replay.RowReader.
func (s *streamedImport) Read(rec *tracev2.Record) error {
	if s.first != nil {
		*rec, s.first = *s.first, nil
	} else {
		r, err := s.src.imp.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.err = err
			}
			return err
		}
		*rec = r
	}
	if hasSpan(rec) || (len(rec.HashIDs) > 0 && !s.hashIDs) {
		return errNotStreamable
	}
	s.n++
	return nil
}

// Close implements replay.RowReader; the input closes the import.
func (s *streamedImport) Close() error { return nil }

// countPrefixes has tr count the hash-id prefixes of the whole trace
// before it is replayed (replay.Trace.CountPrefixes), by importing it once
// more: only a regular file's rows (not stdin's, nor a pipe's) can be
// read twice; the others are replayed declaring nothing private, with the
// same results, more slowly. The full Mooncake conversation trace imports
// in about 11 ms, and is replayed 25% faster.
func (s *streamedImport) countPrefixes(ctx context.Context, tr *replay.Trace) {
	if !s.hashIDs || s.src.tee != nil {
		return
	}
	st, err := os.Stat(s.src.path)
	if err != nil || !st.Mode().IsRegular() {
		return
	}
	again, err := openImport(s.src.format, s.src.path, nil, false)
	if err != nil {
		return // the replay meets it
	}
	// A hash id takes 8 to 10 bytes of Mooncake's JSON lines: room for all
	// at the first try (a compressed file's table grows).
	tr.CountPrefixes(ctx, importRows{again}, int(min(st.Size()/8, 1<<30)))
}

// importRows reads an import's records as a replay.RowReader.
type importRows struct{ src *importSource }

func (r importRows) Read(rec *tracev2.Record) error {
	next, err := r.src.imp.Next()
	*rec = next
	return err
}

func (r importRows) Close() error {
	r.src.discard()
	return nil
}

// spoolStream imports in's stream into a spool, so that in is read the
// usual way: from its first row when it was not streamed, else anew.
func (in *input) spoolStream(log *slog.Logger) error {
	s := in.stream
	src, first := s.src, s.first
	if first == nil { // streamed: import it again
		again, err := src.reopen(in)
		if err != nil {
			return err
		}
		src.discard()
		src = again
	}
	defer src.discard()
	spooled, err := spoolImport(src, first, log)
	if err != nil {
		return err
	}
	in.stream = nil
	in.spools = append(in.spools, spooled.spools...)
	in.rows, in.n, in.cols, in.unique, in.spans = spooled.rows, spooled.n, spooled.cols, spooled.unique, spooled.spans
	return nil
}

// replayStreamed replays in's stream as it is read, holding back stdout
// until the whole trace has been read. done is false when the trace broke
// what streaming assumed (nothing was written): it is to be replayed the
// usual way.
func replayStreamed(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger, set *settings, in *input,
	dep *deploy.Resolved, client replay.Client, start time.Time) (done bool, err error) {
	s := in.stream
	held := &heldOutput{w: stdio.Out}
	defer held.discard()
	gated, streamSet := stdio, *set
	gated.Out = held
	if set.summaryTo == stdio.Out {
		streamSet.summaryTo = held
	}
	tr, err := replay.StreamTrace(s, set.opts)
	if err != nil {
		return true, err
	}
	defer tr.Close()
	if replay.DeclaresPrivate(dep) {
		s.countPrefixes(ctx, tr)
	}
	release := func(interrupted bool) error {
		if interrupted {
			tr.Close() // the rest is not read
		} else if err := tr.Finish(); err != nil {
			return err
		} else if tr.Len() == 0 {
			return errNotStreamable // --skip-failed left nothing: the usual way says so
		}
		in.n = s.n
		for _, w := range s.src.imp.Warnings() {
			log.Warn(w)
		}
		return held.release()
	}
	err = simulate(ctx, c, gated, log, &streamSet, in, dep, client, tr, start, release)
	tr.Close() // its reading goroutine has stopped: s is the caller's
	switch {
	case s.err != nil:
		return true, s.err // the import's error, as importing first gives it
	case errors.Is(err, replay.ErrNotInOrder), errors.Is(err, errNotStreamable):
		log.Debug("the trace is replayed the usual way", "input", in.name, "why", err)
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
