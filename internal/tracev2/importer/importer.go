package importer

import (
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"strings"

	"servesim/internal/tracev2"
)

// Importer is a pull iterator over the records of one foreign trace.
//
// Next returns the next record, io.EOF after the last one, or an error; the
// first error (an *Error for bad input) is sticky. Header returns a copy of
// the suggested trace header, final once the constructor has returned (write
// it before the first row). Warnings lists non-fatal findings so far (at most
// 20, then a count); the importer never prints.
type Importer interface {
	Next() (tracev2.Record, error)
	Header() *tracev2.Header
	Warnings() []string
}

// newHeader is the header of an imported trace: real measurements, so mode
// real, trace_version 3, time_unit us, warm_up_requests 0 (no request of a
// foreign trace is warm-up). Importers add created_at and server facts when
// the source has them.
func newHeader() *tracev2.Header {
	return &tracev2.Header{
		TraceVersion:   tracev2.TraceVersion,
		TimeUnit:       tracev2.TimeUnitUs,
		Mode:           tracev2.ModeReal,
		WarmUpRequests: 0,
	}
}

// Options tune an import. The zero value is valid.
type Options struct {
	// ClientID is written to every record's client_id. Empty: derived from
	// the format and the file name (e.g. `azure-code`, `mooncake-conversation`).
	ClientID string
	// Run selects which result object of a vllm file written with
	// --append-result is imported (0-based). Other importers ignore it.
	Run int
}

// Format names an input format for Open.
type Format string

// The supported formats.
const (
	FormatAzure    Format = "azure"
	FormatMooncake Format = "mooncake"
	FormatVidur    Format = "vidur"
	FormatVLLM     Format = "vllm-bench"
	// FormatLLMServingSim is a run of LLMServingSim's bench: a directory
	// holding requests.jsonl and meta.json (or requests.jsonl itself).
	FormatLLMServingSim Format = "llmservingsim"
)

// Formats lists the supported formats in a stable order (for --help).
func Formats() []Format {
	return []Format{FormatAzure, FormatMooncake, FormatVidur, FormatVLLM, FormatLLMServingSim}
}

// Open returns the importer for format reading r; name is the file name used
// in errors and to derive client ids ("" or "-" for stdin). For
// FormatLLMServingSim, r may be an *os.File opened on the run's directory,
// and meta.json is read from beside name.
func Open(format Format, name string, r io.Reader, opts Options) (Importer, error) {
	switch format {
	case FormatAzure:
		return NewAzure(name, r, opts)
	case FormatMooncake:
		return NewMooncake(name, r, opts)
	case FormatVidur:
		return NewVidur(name, r, opts)
	case FormatVLLM:
		return NewVLLM(name, r, opts)
	case FormatLLMServingSim:
		return openLLMServingSim(name, r, opts)
	}
	return nil, fmt.Errorf("importer: unknown format %q (want one of azure, mooncake, vidur, vllm-bench, llmservingsim)", format)
}

// All adapts imp to a range-over-func loop. Iteration stops after the first
// error, which is yielded with a zero record; io.EOF is not yielded.
func All(imp Importer) iter.Seq2[tracev2.Record, error] {
	return func(yield func(tracev2.Record, error) bool) {
		for {
			rec, err := imp.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(tracev2.Record{}, err)
				return
			}
			if !yield(rec, nil) {
				return
			}
		}
	}
}

// clientID derives a client id: opts.ClientID when set, else prefix plus the
// file's stem with the given decorations removed wherever they occur, e.g. ("azure",
// "AzureLLMInferenceTrace_code.csv") -> "azure-code".
func clientID(opts Options, prefix, name string, strip ...string) string {
	if opts.ClientID != "" {
		return opts.ClientID
	}
	if name == "" || name == "-" {
		return prefix
	}
	stem := filepath.Base(name)
	for {
		ext := filepath.Ext(stem)
		if ext == "" || len(ext) > 6 {
			break
		}
		stem = strings.TrimSuffix(stem, ext) // .csv, .jsonl, .json, .gz
	}
	for _, s := range strip {
		stem = strings.ReplaceAll(stem, s, "")
	}
	stem = strings.Trim(strings.ToLower(stem), "_-. ")
	var b strings.Builder
	for _, r := range stem {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return prefix
	}
	return prefix + "-" + b.String()
}

// stream holds the pull logic shared by the importers: the first record is
// read by the constructor (so Header is final), errors are sticky.
type stream struct {
	read   func() (tracev2.Record, error)
	peeked *tracev2.Record
	err    error // sticky error, or io.EOF
	warn   warnings
}

// start reads the first record; an error other than io.EOF is returned.
func (s *stream) start(read func() (tracev2.Record, error)) error {
	s.read = read
	rec, err := read()
	switch {
	case err == io.EOF:
		s.err = io.EOF
	case err != nil:
		s.err = err
		return err
	default:
		s.peeked = &rec
	}
	return nil
}

// Next returns the next record, io.EOF after the last one, or the first error.
func (s *stream) Next() (tracev2.Record, error) {
	if s.peeked != nil {
		rec := *s.peeked
		s.peeked = nil
		return rec, nil
	}
	if s.err != nil {
		return tracev2.Record{}, s.err
	}
	rec, err := s.read()
	if err != nil {
		s.err = err
		return tracev2.Record{}, err
	}
	return rec, nil
}

// Warnings returns the non-fatal findings so far (at most 20, then a count).
func (s *stream) Warnings() []string { return s.warn.all() }
