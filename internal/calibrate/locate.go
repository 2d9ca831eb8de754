package calibrate

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"servesim/internal/exitcode"
	"servesim/internal/infile"
	"servesim/internal/jsonscan"
	"servesim/internal/report"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/input"
)

// positions turns byte offsets of one input into 1-based line and column.
// Offsets must be asked for in non-decreasing order.
type positions struct {
	data      []byte
	off       int // offsets before this one are counted
	line      int
	lineStart int
}

func newPositions(data []byte) *positions { return &positions{data: data, line: 1} }

func (p *positions) at(off int) (line, col int) {
	off = min(max(off, 0), len(p.data))
	if off < p.off { // out of order: start again
		p.off, p.line, p.lineStart = 0, 1, 0
	}
	for ; p.off < off; p.off++ {
		if p.data[p.off] == '\n' {
			p.line++
			p.lineStart = p.off + 1
		}
	}
	return p.line, off - p.lineStart + 1
}

// plain undoes the transparent encodings the tracev2 readers accept (gzip, a
// byte-order mark), so offsets match what the reader reported.
func plain(data []byte) []byte {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		if zr, err := gzip.NewReader(bytes.NewReader(data)); err == nil {
			if out, err := io.ReadAll(zr); err == nil {
				data = out
			}
		}
	}
	return bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
}

// simLocations names where each SimResult of a JSON array or JSON Lines input
// starts, as "file:line:column". It is used only to name duplicate ids, so a
// malformed input (already rejected by the reader) just stops it.
func simLocations(data []byte, name string) []string {
	data = plain(data)
	pos := newPositions(data)
	// The reader accepted data with encoding/json's nesting limit.
	s := jsonscan.NewMaxDepth(data, jsonNestingLimit)
	var locs []string
	value := func() error {
		s.WS()
		line, col := pos.at(s.Offset())
		if err := s.Skip(); err != nil {
			return err
		}
		locs = append(locs, fmt.Sprintf("%s:%d:%d", name, line, col))
		return nil
	}
	if s.Peek() == '[' {
		_ = s.Array(value) // a malformed input stops it
		return locs
	}
	for s.Peek() != 0 && value() == nil {
	}
	return locs
}

// jsonNestingLimit is encoding/json's: arrays and objects nest at most
// this deep.
const jsonNestingLimit = 10000

// readSimResults reads a SimResult file. Locations are returned only when two
// results share a request_id, for the error that will name both.
func readSimResults(path string, stdin io.Reader) ([]tracev2.SimResult, []string, error) {
	var data []byte // stdin cannot be read twice: keep it for the locations
	rc, name, err := input.OpenFile(path, stdin)
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	var r io.Reader = rc
	if name == tracev2.StdinName {
		if data, err = io.ReadAll(rc); err != nil {
			return nil, nil, err
		}
		r = bytes.NewReader(data)
	}
	sims, err := tracev2.ReadSimResults(r, name)
	if err != nil {
		return nil, nil, err
	}
	if !dupIndex(len(sims), func(i int) int64 { return sims[i].RequestID }) {
		return sims, nil, nil
	}
	if data == nil {
		if data, err = os.ReadFile(path); err != nil {
			return sims, nil, nil // the report still names the results by position
		}
	}
	locs := simLocations(data, name)
	if len(locs) != len(sims) {
		locs = nil
	}
	return sims, locs, nil
}

// simMetricsFile is what calibrate reads from replay's summary JSON: the
// simulated prefix-cache hit rate and the deployment it ran (under
// "deployment", or "config" as older writers named it), as deployment-YAML
// keys, and the requests the gateway let go per class and per tenant
// (per_class, per_tenant). Every other key is ignored.
type simMetricsFile struct {
	CacheHitRate *float64                    `json:"cache_hit_rate"`
	Deployment   map[string]any              `json:"deployment"`
	Config       map[string]any              `json:"config"`
	PerClass     map[string]simGatewayCounts `json:"per_class"`
	PerTenant    map[string]simGatewayCounts `json:"per_tenant"`
}

// simGatewayCounts are the gateway buckets of a summary's per-class or
// per-tenant block (absent keys are 0).
type simGatewayCounts struct {
	Rejected int `json:"rejected_requests"`
	Shed     int `json:"gateway_queue_shed"`
	Expired  int `json:"gateway_expired"`
	Evicted  int `json:"gateway_evicted"`
}

// gatewayCounts converts a summary's per-class or per-tenant blocks; nil
// when there are none, ok false when a count is negative.
func gatewayCounts(src map[string]simGatewayCounts) (out map[string]report.GatewayCounts, ok bool) {
	if len(src) == 0 {
		return nil, true
	}
	out = make(map[string]report.GatewayCounts, len(src))
	for k, g := range src {
		if g.Rejected < 0 || g.Shed < 0 || g.Expired < 0 || g.Evicted < 0 {
			return nil, false
		}
		out[k] = report.GatewayCounts{Refused: g.Rejected, Shed: g.Shed, Expired: g.Expired, Evicted: g.Evicted}
	}
	return out, true
}

// readSimMetrics reads --sim-metrics; a malformed file is an input error
// located as file:line:column.
func readSimMetrics(path string, stdin io.Reader) (*report.SimMetrics, error) {
	rc, name, err := input.OpenFile(path, stdin)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := infile.Read(rc, name, infile.ConfigBytes)
	if err != nil {
		return nil, err
	}
	data = plain(data)
	var f simMetricsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, jsonError(name, data, err)
	}
	if v := f.CacheHitRate; v != nil && !(*v >= 0 && *v <= 1) {
		line, col := newPositions(data).at(max(bytes.Index(data, []byte(`"cache_hit_rate"`)), 0))
		return nil, exitcode.Usagef("%s:%d:%d: field cache_hit_rate: %g is outside [0, 1]", name, line, col, *v)
	}
	m := &report.SimMetrics{CacheHitRate: f.CacheHitRate, Deployment: f.Deployment}
	for _, b := range []struct {
		key string
		src map[string]simGatewayCounts
		dst *map[string]report.GatewayCounts
	}{{"per_class", f.PerClass, &m.ClassGateway}, {"per_tenant", f.PerTenant, &m.TenantGateway}} {
		var ok bool
		if *b.dst, ok = gatewayCounts(b.src); !ok {
			line, col := newPositions(data).at(max(bytes.Index(data, []byte(`"`+b.key+`"`)), 0))
			return nil, exitcode.Usagef("%s:%d:%d: field %s: a gateway count is negative", name, line, col, b.key)
		}
	}
	if m.Deployment == nil {
		m.Deployment = f.Config
	}
	return m, nil
}

// jsonError locates a JSON decoding error as a usage error "file:line:col: ...".
func jsonError(name string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off, msg := -1, err.Error()
	switch {
	case errors.As(err, &se):
		off = int(se.Offset) - 1
	case errors.As(err, &te):
		off = int(te.Offset) - 1
		msg = fmt.Sprintf("field %s: cannot read a JSON %s as %s", te.Field, te.Value, te.Type)
	}
	if off < 0 {
		return exitcode.Usagef("%s: json: %s", name, msg)
	}
	line, col := newPositions(data).at(off)
	return exitcode.Usagef("%s:%d:%d: json: %s", name, line, col, msg)
}
