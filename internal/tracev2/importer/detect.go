package importer

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// FormatTraceV2 is not an import: the input is a TraceV2 trace in one of
// its forms (or a BLIS trace), read by package tracev2 itself.
const FormatTraceV2 Format = "tracev2"

// DetectHead is how many leading bytes (after gzip decompression) Detect
// looks at.
const DetectHead = 64 << 10

// Detection is what Detect found.
type Detection struct {
	Format Format
	// Sure is false when nothing in the input named a format: Format is
	// then FormatTraceV2, the default, and reading it will say what is
	// wrong; a caller may add that no foreign shape was recognised either.
	Sure bool
	// Why is a few words on the evidence, for a log line.
	Why string
}

// Detect names the format of a trace from its first bytes (at most
// DetectHead; a UTF-8 byte-order mark and blank lines are skipped). TraceV2
// comes first and is never mistaken for another format: input in which a
// trace_version key appears (a single stream's "# trace_version:", a header
// in YAML or JSON, quoted or not), a first line starting with "#", or a CSV
// column row holding arrival_time_us is TraceV2 whatever else it holds.
// Then the foreign shapes:
//
//   - a CSV column row with TIMESTAMP, ContextTokens and GeneratedTokens: Azure;
//   - a CSV column row with arrived_at, num_prefill_tokens and num_decode_tokens: Vidur;
//   - a first JSON object with timestamp, input_length and output_length: Mooncake;
//   - a first JSON object with input_toks, output_toks and arrival_time or
//     queued_ts: LLMServingSim's requests.jsonl;
//   - a first JSON object with input_lens, output_lens or ttfts among its
//     top-level keys (vllm bench's result): vllm-bench.
//
// Anything else is FormatTraceV2 with Sure false.
func Detect(head []byte) Detection {
	if len(head) > DetectHead {
		head = head[:DetectHead]
	}
	head = bytes.TrimPrefix(head, []byte("\xEF\xBB\xBF"))
	line := firstLine(head)
	switch {
	case hasKey(head, "trace_version"):
		return Detection{FormatTraceV2, true, "a trace_version key"}
	case len(line) == 0 || line[0] == '#':
		return Detection{Format: FormatTraceV2}
	case line[0] == '{':
		return detectJSON(bytes.TrimLeft(head, " \t\r\n")) // the first line on
	}
	cols := csvNames(line)
	switch {
	case cols["arrival_time_us"]:
		return Detection{FormatTraceV2, true, "a data CSV with arrival_time_us"}
	case cols["TIMESTAMP"] && cols["ContextTokens"] && cols["GeneratedTokens"]:
		return Detection{FormatAzure, true, "columns TIMESTAMP, ContextTokens, GeneratedTokens"}
	case cols["arrived_at"] && cols["num_prefill_tokens"] && cols["num_decode_tokens"]:
		return Detection{FormatVidur, true, "columns arrived_at, num_prefill_tokens, num_decode_tokens"}
	}
	return Detection{Format: FormatTraceV2}
}

// firstLine returns the first line of b that is not blank, trimmed.
func firstLine(b []byte) []byte {
	for len(b) > 0 {
		line, rest, _ := bytes.Cut(b, []byte("\n"))
		if t := bytes.TrimSpace(line); len(t) > 0 {
			return t
		}
		b = rest
	}
	return nil
}

// hasKey reports whether key appears in b as a key: followed, after an
// optional closing quote and blanks, by a colon. Over-matching is the safe
// side: it only keeps an input from being taken for a foreign format.
func hasKey(b []byte, key string) bool {
	for {
		i := bytes.Index(b, []byte(key))
		if i < 0 {
			return false
		}
		b = b[i+len(key):]
		rest := bytes.TrimLeft(b, "\"' \t")
		if len(rest) > 0 && rest[0] == ':' {
			return true
		}
	}
}

// csvNames splits a CSV column row into its names (spaces and quotes
// trimmed). A name is a plain word: a field holding anything else (a YAML
// "key: value", a sentence) names no column.
func csvNames(line []byte) map[string]bool {
	out := map[string]bool{}
	for _, f := range strings.Split(string(line), ",") {
		f = strings.Trim(strings.TrimSpace(f), `"`)
		if f != "" && !strings.ContainsAny(f, " :\t") {
			out[f] = true
		}
	}
	return out
}

// detectJSON looks at the top-level keys of the first JSON object of b
// (which may be cut short: the keys seen before the cut count).
func detectJSON(b []byte) Detection {
	keys := jsonKeys(b)
	switch {
	case keys["timestamp"] && keys["input_length"] && keys["output_length"]:
		return Detection{FormatMooncake, true, "JSON lines with timestamp, input_length, output_length"}
	case keys["input_toks"] && keys["output_toks"] && (keys["arrival_time"] || keys["queued_ts"]):
		return Detection{FormatLLMServingSim, true, "JSON lines with input_toks, output_toks and engine times"}
	case keys["input_lens"] || keys["output_lens"] || keys["ttfts"]:
		return Detection{FormatVLLM, true, "a vllm bench result with per-request arrays"}
	}
	return Detection{Format: FormatTraceV2}
}

// jsonKeys collects the keys at depth 1 of the first JSON value of b when
// it is an object, stopping at its end, at a syntax error or where b is cut.
func jsonKeys(b []byte) map[string]bool {
	keys := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return keys
	}
	depth, expectKey := 1, true
	for {
		tok, err := dec.Token()
		if err != nil {
			return keys
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				depth++
				continue
			}
			depth--
			if depth == 0 {
				return keys
			}
			expectKey = depth == 1 // a nested value ended
		case string:
			if depth == 1 && expectKey {
				keys[t] = true
				expectKey = false
			} else {
				expectKey = depth == 1
			}
		default:
			expectKey = depth == 1
		}
	}
}

// DetectPath detects the format of the trace at path: a directory holding
// an LLMServingSim run (requests.jsonl, or vllm/requests.jsonl, beside
// meta.json) is FormatLLMServingSim; a file is read up to DetectHead bytes
// (gzip decompressed) and given to Detect.
func DetectPath(path string) (Detection, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Detection{}, err
	}
	if st.IsDir() {
		if _, err := llmsRequestsPath(path); err != nil {
			return Detection{}, fmt.Errorf("%s is a directory, and not an LLMServingSim run: it holds no %s (nor vllm/%s)", path, LLMServingSimRequests, LLMServingSimRequests)
		}
		return Detection{FormatLLMServingSim, true, "a directory with " + LLMServingSimRequests}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return Detection{}, err
	}
	defer f.Close()
	d, _, err := DetectReader(f)
	if err != nil {
		return Detection{}, fmt.Errorf("%s: %w", path, err)
	}
	if d.Format == FormatTraceV2 && !d.Sure && filepath.Base(path) == LLMServingSimRequests {
		d = Detection{FormatLLMServingSim, true, "named " + LLMServingSimRequests}
	}
	return d, nil
}

// DetectReader detects the format of the stream r and returns a reader
// that yields all of r again (the bytes looked at included).
func DetectReader(r io.Reader) (Detection, io.Reader, error) {
	br := bufio.NewReaderSize(r, DetectHead)
	head, err := br.Peek(DetectHead)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return Detection{}, nil, err
	}
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		head = gunzipHead(head)
	}
	return Detect(head), br, nil
}

// gunzipHead decompresses as much of the gzip data b as it holds, up to
// DetectHead bytes (a cut or corrupt stream gives what came before).
func gunzipHead(b []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil
	}
	out, _ := io.ReadAll(io.LimitReader(zr, DetectHead))
	return out
}
