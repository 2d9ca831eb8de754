package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode"

	"servesim/internal/tracev2"
)

// VLLM imports the result JSON of `vllm bench serve --save-result
// --save-detailed`: one JSON object (several, one per line, with
// --append-result; Options.Run picks one) whose per-request data are parallel
// arrays, all in seconds where they are times:
//
//	input_lens   prompt tokens (the server's usage.prompt_tokens when reported)
//	output_lens  output tokens
//	ttfts        send -> first chunk carrying choices
//	itls         per request, the gaps between successive token chunks
//	errors       "" on success, else the error text (often a traceback)
//	start_times  send instant, time.perf_counter() (newer releases; optional)
//	queue_times  wait for the client's --max-concurrency slot (optional)
//	latencies    send -> last token chunk (optional)
//
// Mapping, with t0 = min(start_time − queue_time) over requests (the first
// intended dispatch): arrival_time_us = start − queue − t0; send_time_us =
// start − t0; first_chunk_time_us = send + ttft; last_chunk_time_us = send +
// latency, or first + Σitl when latencies is absent; num_chunks = 1 + len(itl)
// (token chunks: vllm does not time the usage-only event); streaming true;
// status ok when the error is empty, else error with the error's last line as
// error_message. Without start_times (older releases) arrivals are unknown:
// every arrival and send is 0 and a warning says so. Chunk times stay 0 when
// no first token was received. Records come in dispatch order; request_id is
// the 0-based index in the arrays. Header: server type vllm, model = model_id.
//
// The arrays are read in parallel from their byte offsets (found in a first
// pass over the tokens), so memory does not grow with the number of requests.
// That needs random access: when r is not an io.ReaderAt with io.Seeker (an
// *os.File is), the input is read into memory first.
type VLLM struct {
	file   string
	ra     io.ReaderAt
	size   int64
	client string
	hdr    *tracev2.Header

	in, out, ttft, itl, errs, starts, queues, lat *arrayCursor
	t0                                            float64
	records                                       int64
	stream
}

// vllmArrays are the per-request arrays read, and whether each is required.
func vllmArrays() [8]struct {
	name     string
	required bool
} {
	return [8]struct {
		name     string
		required bool
	}{
		{"input_lens", true}, {"output_lens", true}, {"ttfts", true}, {"itls", true},
		{"errors", true}, {"start_times", false}, {"queue_times", false}, {"latencies", false},
	}
}

// NewVLLM scans the file's structure, checks its JSON syntax, computes t0 and
// reads the first record.
func NewVLLM(name string, r io.Reader, opts Options) (*VLLM, error) {
	v := &VLLM{file: displayName(name), hdr: newHeader()}
	ra, size, err := readerAt(r)
	if err != nil {
		return nil, fmt.Errorf("%s: read: %w", v.file, err)
	}
	v.ra, v.size = ra, size
	offsets, info, err := v.scan(opts.Run)
	if err != nil {
		return nil, err
	}
	v.hdr.Server = &tracev2.Server{Type: "vllm", Model: info.model}
	v.client = opts.ClientID
	if v.client == "" {
		v.client = "vllm-bench"
		if info.label != "" {
			v.client = info.label
		}
	}
	cursors := [8]**arrayCursor{&v.in, &v.out, &v.ttft, &v.itl, &v.errs, &v.starts, &v.queues, &v.lat}
	for i, a := range vllmArrays() {
		off, ok := offsets[a.name]
		if !ok {
			if a.required {
				return nil, v.errAt(info.objStart, a.name,
					"missing (write the file with vllm bench serve --save-result --save-detailed)")
			}
			continue
		}
		c, err := v.openArray(a.name, off)
		if err != nil {
			return nil, err
		}
		*cursors[i] = c
	}
	if v.starts == nil {
		v.warn.add("%s: no start_times (vllm releases before 0.10 do not save them): arrival times are unknown and set to 0", v.file)
	} else if err := v.findOrigin(offsets); err != nil {
		return nil, err
	}
	if info.objects > 1 {
		v.warn.add("%s: %d appended result objects; imported object %d", v.file, info.objects, opts.Run)
	}
	if err := v.start(v.read); err != nil {
		return nil, err
	}
	return v, nil
}

// Header describes the imported trace: server type vllm and the model id.
func (v *VLLM) Header() *tracev2.Header { return v.hdr.Clone() }

// readerAt gives random access to r, reading it into memory if it has none.
func readerAt(r io.Reader) (io.ReaderAt, int64, error) {
	if ra, ok := r.(interface {
		io.ReaderAt
		io.Seeker
	}); ok {
		size, err := ra.Seek(0, io.SeekEnd)
		if err == nil {
			return ra, size, nil
		}
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, err
	}
	return bytes.NewReader(b), int64(len(b)), nil
}

// errAt is an *Error at byte offset off of the file.
func (v *VLLM) errAt(off int64, field, msg string) *Error {
	line, col := lineColAt(v.ra, off)
	return &Error{File: v.file, Line: line, Column: col, Field: field, Msg: msg}
}

// decErr converts an error of a decoder whose input starts at base.
func (v *VLLM) decErr(dec *json.Decoder, base int64, err error) error {
	msg, off, ok := syntaxProblem(dec, err, v.ra, base, v.size)
	if !ok {
		return fmt.Errorf("%s: read: %w", v.file, err)
	}
	return v.errAt(off, "", msg)
}

// scanInfo is what the first pass learns besides the array offsets.
type scanInfo struct {
	objects  int   // top-level objects in the file
	objStart int64 // offset of the selected object
	model    string
	label    string
}

// scan walks every token of the file once: it checks the syntax, counts the
// top-level objects, and in object number run records the offset of each
// per-request array's '[' and a few strings of the run's setup.
func (v *VLLM) scan(run int) (map[string]int64, scanInfo, error) {
	var info scanInfo
	offsets := map[string]int64{}
	wanted := map[string]bool{}
	for _, a := range vllmArrays() {
		wanted[a.name] = true
	}
	dec := json.NewDecoder(io.NewSectionReader(v.ra, 0, v.size))
	dec.UseNumber()
	for idx := 0; ; idx++ {
		start := valueStart(v.ra, dec.InputOffset())
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, info, v.decErr(dec, 0, err)
		}
		if tok != json.Delim('{') {
			return nil, info, v.errAt(start, "", "json syntax: want the result object of vllm bench serve, got "+describe(tok))
		}
		info.objects++
		if idx != run {
			if err := skipValue(dec, tok); err != nil {
				return nil, info, v.decErr(dec, 0, err)
			}
			continue
		}
		info.objStart = start
		for dec.More() {
			ktok, err := dec.Token()
			if err != nil {
				return nil, info, v.decErr(dec, 0, err)
			}
			key, _ := ktok.(string)
			vstart := valueStart(v.ra, dec.InputOffset())
			vtok, err := dec.Token()
			if err != nil {
				return nil, info, v.decErr(dec, 0, err)
			}
			switch {
			case wanted[key] && vtok == json.Delim('['):
				offsets[key] = dec.InputOffset() - 1
			case wanted[key] && vtok == nil: // null: treated as absent
			case wanted[key]:
				return nil, info, v.errAt(vstart, key, describe(vtok)+" is not a list")
			case key == "model_id":
				info.model, _ = vtok.(string)
			case key == "label":
				info.label, _ = vtok.(string)
			}
			if err := skipValue(dec, vtok); err != nil {
				return nil, info, v.decErr(dec, 0, err)
			}
		}
		if _, err := dec.Token(); err != nil { // the closing }
			return nil, info, v.decErr(dec, 0, err)
		}
	}
	if info.objects == 0 {
		return nil, info, v.errAt(0, "", "json syntax: empty file, want the result object of vllm bench serve")
	}
	if run < 0 || run >= info.objects {
		return nil, info, v.errAt(0, "", fmt.Sprintf("run %d requested, the file holds %d result objects", run, info.objects))
	}
	return offsets, info, nil
}

// findOrigin sets t0 = min(start_time − queue_time), validating both arrays.
func (v *VLLM) findOrigin(offsets map[string]int64) error {
	st, err := v.openArray("start_times", offsets["start_times"])
	if err != nil {
		return err
	}
	var qt *arrayCursor
	if off, ok := offsets["queue_times"]; ok {
		if qt, err = v.openArray("queue_times", off); err != nil {
			return err
		}
	}
	v.t0 = math.Inf(1)
	for {
		s, done, err := st.float(true) // time.perf_counter() is never negative
		if err != nil || done {
			if err == nil && v.t0 > math.MaxFloat64 {
				v.t0 = 0 // no requests
			}
			return err
		}
		q := 0.0
		if qt != nil {
			var qdone bool
			if q, qdone, err = qt.float(true); err != nil {
				return err
			}
			if qdone {
				return nil // the count mismatch is reported by Next
			}
		}
		v.t0 = math.Min(v.t0, s-q)
	}
}

// cleanError reduces an error text (often a multi-line Python traceback) to
// its last non-empty line, control characters blanked, at most 300 bytes.
func cleanError(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	// One line, no control characters: the CSV row stays readable.
	s = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s))
	if len(s) > 300 {
		cut := 300
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = strings.TrimSpace(s[:cut])
	}
	return s
}

var _ Importer = (*VLLM)(nil)
var _ Importer = (*Azure)(nil)
var _ Importer = (*Vidur)(nil)
var _ Importer = (*Mooncake)(nil)
