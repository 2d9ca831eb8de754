package importer

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"servesim/internal/tracev2"
)

// vidurRow binds one row of a Vidur processed trace by column name. Other
// columns (num_total_tokens, pd_ratio, request_id, ...) are ignored.
type vidurRow struct {
	ArrivedAt  string `csv:"arrived_at"`
	Prefill    string `csv:"num_prefill_tokens"`
	Decode     string `csv:"num_decode_tokens"`
	BlockHashs string `csv:"block_hash_ids"` // optional; a JSON list
}

// Vidur imports Vidur's processed-trace CSV, the input of its trace-replay
// request generator: arrived_at (seconds from the trace start, float),
// num_prefill_tokens, num_decode_tokens, and optionally block_hash_ids (a JSON
// list of prefix-block hashes, written by some Vidur forks).
//
// Mapping: arrival_time_us = round(arrived_at × 10⁶) (kept on the file's own
// origin, not re-based); send_time_us = arrival_time_us; input_tokens =
// num_prefill_tokens; output_tokens = num_decode_tokens; ext_hash_ids =
// block_hash_ids; request_id = 0-based row index; status ok; chunk times 0.
// Token counts written as whole decimals ("12.0", as pandas writes integer
// columns with gaps) are accepted; fractions are errors.
type Vidur struct {
	src    *csvSource[vidurRow]
	client string
	hasIDs bool
	hdr    *tracev2.Header
	row    vidurRow
	stream
}

// NewVidur reads the column row and the first data row of a Vidur trace.
func NewVidur(name string, r io.Reader, opts Options) (*Vidur, error) {
	src, err := newCSVSource[vidurRow](name, r, []string{"arrived_at", "num_prefill_tokens", "num_decode_tokens"})
	if err != nil {
		return nil, err
	}
	_, hasIDs := src.index["block_hash_ids"]
	v := &Vidur{
		src:    src,
		client: clientID(opts, "vidur", name),
		hasIDs: hasIDs,
		hdr:    newHeader(),
	}
	if err := v.start(v.read); err != nil {
		return nil, err
	}
	return v, nil
}

// Header describes the imported trace (no wall-clock origin is known).
func (v *Vidur) Header() *tracev2.Header { return v.hdr.Clone() }

func (v *Vidur) read() (tracev2.Record, error) {
	if err := v.src.next(&v.row); err != nil {
		return tracev2.Record{}, err
	}
	row := &v.row
	arrival, prob := parseDuration(row.ArrivedAt, 1e6)
	if prob != "" {
		return tracev2.Record{}, v.src.errField("arrived_at", quote(row.ArrivedAt)+" "+prob)
	}
	in, prob := parseCount(row.Prefill, true)
	if prob != "" {
		return tracev2.Record{}, v.src.errField("num_prefill_tokens", quote(row.Prefill)+" "+prob)
	}
	out, prob := parseCount(row.Decode, true)
	if prob != "" {
		return tracev2.Record{}, v.src.errField("num_decode_tokens", quote(row.Decode)+" "+prob)
	}
	rec := tracev2.Record{
		RequestID:     int64(v.src.records - 1),
		ClientID:      v.client,
		InputTokens:   in,
		OutputTokens:  out,
		ArrivalTimeUs: arrival,
		SendTimeUs:    arrival,
		Status:        "ok",
	}
	if v.hasIDs && strings.TrimSpace(row.BlockHashs) != "" {
		ids, ok := parseIDList(row.BlockHashs)
		if !ok {
			return tracev2.Record{}, v.src.errField("block_hash_ids",
				quote(row.BlockHashs)+" is not a JSON list of integers")
		}
		if len(ids) > tracev2.MaxHashIDs {
			return tracev2.Record{}, v.src.errField("block_hash_ids", fmt.Sprintf("%d entries, more than %d", len(ids), tracev2.MaxHashIDs))
		}
		rec.HashIDs = ids
	}
	return rec, nil
}

// parseIDList parses a JSON list of integers such as "[1, 2, 3]".
func parseIDList(s string) ([]int64, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, false
	}
	ids := []int64{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		n, ok := tok.(json.Number)
		if !ok {
			return nil, false
		}
		id, prob := parseInt64(n.String())
		if prob != "" {
			return nil, false
		}
		ids = append(ids, id)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return ids, true
}
