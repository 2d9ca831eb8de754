package tracev2

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"servesim/internal/strictyaml"
)

// maxHeaderBytes bounds a header (or trailer) YAML text.
const maxHeaderBytes = MaxHeaderBytes

// MaxHeaderBytes bounds a header (or trailer) YAML text: a larger one is
// an error.
const MaxHeaderBytes = 16 << 20

// ReadHeader reads a header YAML (two-file form) from r. name is used in
// messages. Unknown keys warn through opts.Warn (errors with opts.Strict);
// syntax, type and value errors are *Error with the file's line and column.
// A leading byte-order mark and gzip compression are accepted.
func ReadHeader(r io.Reader, name string, opts Options) (*Header, error) {
	br, err := newInput(r, name)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(br, maxHeaderBytes+1))
	if err != nil {
		return nil, inputError(name, 0, err)
	}
	if len(data) > maxHeaderBytes {
		return nil, &Error{File: name, Msg: "header is larger than 16 MiB"}
	}
	h, _, err := decodeHeaderText(data, name, lineMap{first: 1}, opts, false)
	return h, err
}

// ReadHeaderFile reads the header YAML at path ("-" is not accepted here).
func ReadHeaderFile(path string, opts Options) (*Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot open header: " + pathErrText(err), Err: err}
	}
	defer f.Close()
	return ReadHeader(f, path, opts)
}

// lineMap converts a position in a YAML text to a physical position in the
// file it came from: in a single stream every YAML line sits behind a "# "
// (or "#+ ") prefix on some physical line.
type lineMap struct {
	first    int   // physical line of YAML line 1 when phys is nil
	phys     []int // physical line of each YAML line, if not consecutive
	colShift int   // characters of prefix before YAML column 1
}

func (m lineMap) line(l int) int {
	if l < 1 {
		l = 1
	}
	if l-1 < len(m.phys) {
		return m.phys[l-1]
	}
	if len(m.phys) > 0 {
		return m.phys[len(m.phys)-1] + l - len(m.phys)
	}
	return m.first + l - 1
}

// parseYAML parses the first YAML document of data into a node tree whose
// positions are physical. An empty document gives a nil node.
func parseYAML(data []byte, name string, m lineMap, opts *Options) (*yaml.Node, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, yamlSyntaxError(err, name, m)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		opts.warnf(fmt.Sprintf("%s:%d:1: yaml: more than one document; only the first is read", name, m.line(extra.Line)))
	}
	if err := remap(&doc, name, m, 0); err != nil {
		return nil, err
	}
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil, nil
		}
		return doc.Content[0], nil
	}
	return &doc, nil
}

// yamlSyntaxError turns a yaml.v3 parse error ("yaml: line 3: ...") into an
// *Error on the physical line. yaml.v3 reports no column for syntax errors,
// so the column is the start of the line's YAML text.
func yamlSyntaxError(err error, name string, m lineMap) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.IndexByte(rest, ':'); i > 0 {
			if n, aerr := strconv.Atoi(rest[:i]); aerr == nil {
				line = n
				msg = strings.TrimSpace(rest[i+1:])
			}
		}
	}
	// yaml.v3 numbers parser errors (as opposed to scanner errors) by the
	// 0-based line of the construct it was parsing; these are they.
	for _, p := range []string{"did not find expected key", "did not find expected node content",
		"did not find expected ',' or", "did not find expected '-' indicator", "did not find expected <document start>"} {
		if strings.HasPrefix(msg, p) {
			line++
			break
		}
	}
	return &Error{File: name, Line: m.line(line), Column: 1 + m.colShift, What: "yaml syntax", Msg: oneLine(msg), Err: err}
}

// remap rewrites node positions to physical ones and rejects aliases, which
// no writer of traces emits and which could multiply the work of a reader.
func remap(n *yaml.Node, name string, m lineMap, depth int) error {
	if depth > 100 {
		return &Error{File: name, Line: m.line(n.Line), Column: n.Column + m.colShift, What: "yaml syntax", Msg: "nested deeper than 100 levels"}
	}
	if n.Line > 0 {
		n.Line = m.line(n.Line)
		n.Column += m.colShift
	}
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return &Error{File: name, Line: n.Line, Column: n.Column, What: "yaml syntax", Msg: "anchors and aliases are not supported in a trace header"}
	}
	for _, c := range n.Content {
		if err := remap(c, name, m, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// decodeHeaderText parses and decodes a header. partial skips the checks of
// required keys (used for a trailer alone). It returns the root node too, so a
// single-stream reader can merge the trailer into it later.
func decodeHeaderText(data []byte, name string, m lineMap, opts Options, partial bool) (*Header, *yaml.Node, error) {
	root, err := parseYAML(data, name, m, &opts)
	if err != nil {
		return nil, nil, err
	}
	if root == nil {
		if partial {
			return &Header{}, nil, nil
		}
		return nil, nil, &Error{File: name, Line: m.line(1), Column: 1, What: "key trace_version", Msg: "missing (the header is empty)"}
	}
	h, err := decodeHeaderNode(root, name, opts, partial)
	return h, root, err
}

// headerDecoder walks a node tree against the Header struct by yaml tags, so
// every unknown key and every type error is located exactly.
type headerDecoder struct {
	name    string
	opts    Options
	pos     map[string]*yaml.Node // dotted key path -> value node
	unknown warnLimiter           // unknown keys: at most maxWarnings shown
}

func decodeHeaderNode(root *yaml.Node, name string, opts Options, partial bool) (*Header, error) {
	d := &headerDecoder{name: name, opts: opts, pos: map[string]*yaml.Node{}, unknown: warnLimiter{warn: opts.Warn}}
	var h Header
	if root.Kind != yaml.MappingNode {
		return nil, d.errAt(root, "header", "want a YAML mapping of keys, got "+kindName(root))
	}
	if err := d.mapping(root, reflect.ValueOf(&h).Elem(), ""); err != nil {
		return nil, err
	}
	if n := d.unknown.suppressed; n > 0 {
		opts.warnf(fmt.Sprintf("%s: %d more unknown keys ignored", name, n))
	}
	if err := d.check(&h, root, partial); err != nil {
		return nil, err
	}
	return &h, nil
}

func (d *headerDecoder) errAt(n *yaml.Node, what, msg string) error {
	return &Error{File: d.name, Line: max(n.Line, 1), Column: n.Column, What: what, Msg: msg}
}

func (d *headerDecoder) warnAt(n *yaml.Node, what, msg string) {
	d.opts.warnf((&Error{File: d.name, Line: max(n.Line, 1), Column: n.Column, What: what, Msg: msg}).Error())
}

// kindName names what a node holds, for "want X, got Y": a scalar as "the
// value" and its text quoted and cut short, anything else in strictyaml's
// words ("a mapping", "a list"). Aliases never get here: remap rejects them.
func kindName(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return "the value " + quote([]byte(n.Value))
	}
	return strictyaml.Describe(n)
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// mapping decodes a mapping node into the struct v.
func (d *headerDecoder) mapping(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return d.errAt(n, "key "+path, "want a mapping, got "+kindName(n))
	}
	seen := map[string]*yaml.Node{}
	t := v.Type()
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return d.errAt(k, "key "+path, "a key must be a plain string")
		}
		p := joinPath(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			return d.errAt(k, "key "+p, fmt.Sprintf("duplicated (first at line %d)", first.Line))
		}
		seen[k.Value] = k
		f := fieldByTag(t, k.Value)
		if f < 0 {
			if d.opts.Strict {
				return d.errAt(k, "key "+p, "unknown key")
			}
			d.unknown.add((&Error{File: d.name, Line: max(k.Line, 1), Column: k.Column, What: "key " + joinPath(path, QuoteName(k.Value)),
				Msg: "unknown key, ignored"}).Error())
			continue
		}
		d.pos[p] = val
		if err := d.value(val, v.Field(f), p); err != nil {
			return err
		}
	}
	return nil
}

func fieldByTag(t reflect.Type, key string) int {
	for i := 0; i < t.NumField(); i++ {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if tag == key {
			return i
		}
	}
	return -1
}

// value decodes n into v, whose type is one of the header's field types.
func (d *headerDecoder) value(n *yaml.Node, v reflect.Value, path string) error {
	if isNull(n) {
		return nil // absent: zero value, nil pointer
	}
	switch v.Kind() {
	case reflect.Pointer:
		e := reflect.New(v.Type().Elem())
		if err := d.value(n, e.Elem(), path); err != nil {
			return err
		}
		v.Set(e)
		return nil
	case reflect.Struct:
		return d.mapping(n, v, path)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return d.errAt(n, "key "+path, "want a mapping, got "+kindName(n))
		}
		if len(n.Content) == 0 {
			return nil
		}
		m := reflect.MakeMap(v.Type())
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return d.errAt(k, "key "+path, "a key must be a plain string")
			}
			p := joinPath(path, k.Value)
			if m.MapIndex(reflect.ValueOf(k.Value)).IsValid() {
				return d.errAt(k, "key "+p, "duplicated")
			}
			e := reflect.New(v.Type().Elem()).Elem()
			d.pos[p] = val
			if err := d.value(val, e, p); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k.Value), e)
		}
		v.Set(m)
		return nil
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return d.errAt(n, "key "+path, "want a list, got "+kindName(n))
		}
		if len(n.Content) == 0 {
			return nil
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			if err := d.value(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.Interface:
		// A free-form value (x_ext.deployment): any YAML the decoder gives,
		// its floats finite.
		var x any
		if err := n.Decode(&x); err != nil {
			return d.errAt(n, "key "+path, "cannot be read: "+oneLine(err.Error()))
		}
		if x = plainValue(x); x != nil {
			if p := nonFinite(reflect.ValueOf(x), ""); p != "" {
				return d.errAt(n, "key "+joinPath(path, p), "is not a finite number")
			}
			v.Set(reflect.ValueOf(x))
		}
		if k, ok := strings.CutPrefix(path, "x_ext.deployment."); ok && d.opts.DeploymentKey != nil {
			if err := d.opts.DeploymentKey(k, x); err != nil {
				return d.errAt(n, "key "+path, err.Error())
			}
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return d.errAt(n, "key "+path, "want a single value, got "+kindName(n))
	}
	isInt := v.Kind() == reflect.Int || v.Kind() == reflect.Int64
	if err := n.Decode(v.Addr().Interface()); err != nil || (isInt && n.ShortTag() != "!!int") {
		// yaml.v3 would read 4.2 into an integer as 4.
		return d.errAt(n, "key "+path, fmt.Sprintf("%s is not %s", quote([]byte(n.Value)), kindWant(v.Kind())))
	}
	if v.Kind() == reflect.Float64 {
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return d.errAt(n, "key "+path, quote([]byte(n.Value))+" is not a finite number")
		}
	}
	return nil
}

func kindWant(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	}
	return "a string"
}

// check validates values against docs/tracev2.md §3, with positions.
func (d *headerDecoder) check(h *Header, root *yaml.Node, partial bool) error {
	at := func(path string) *yaml.Node {
		if n := d.pos[path]; n != nil {
			return n
		}
		return root
	}
	if !partial {
		if d.pos["trace_version"] == nil {
			return d.errAt(root, "key trace_version", "missing")
		}
		if d.pos["time_unit"] == nil {
			d.warnAt(root, "key time_unit", "missing, assuming us")
			h.TimeUnit = TimeUnitUs
		}
	}
	if n := d.pos["trace_version"]; n != nil {
		switch {
		case h.TraceVersion < MinTraceVersion:
			return d.errAt(n, "key trace_version", fmt.Sprintf("version %d is not supported (readers accept 2 and 3)", h.TraceVersion))
		case h.TraceVersion > TraceVersion:
			d.warnAt(n, "key trace_version", fmt.Sprintf("version %d is newer than 3; reading it as 3", h.TraceVersion))
		}
	}
	if n := d.pos["time_unit"]; n != nil && !ValidTimeUnit(h.TimeUnit) {
		return d.errAt(n, "key time_unit", quote([]byte(h.TimeUnit))+" is not us, µs or microseconds")
	}
	if n := d.pos["mode"]; n != nil || !partial {
		switch h.Mode {
		case ModeReal, ModeGenerated, ModeReplayed:
		default:
			d.warnAt(at("mode"), "key mode", quote([]byte(h.Mode))+" is not real, generated or replayed")
		}
	}
	if h.WarmUpRequests < 0 {
		return d.errAt(at("warm_up_requests"), "key warm_up_requests", fmt.Sprintf("%d is negative", h.WarmUpRequests))
	}
	if h.SessionContextGrowth != "" && h.SessionContextGrowth != SessionAccumulate {
		return d.errAt(at("session_context_growth"), "key session_context_growth",
			quote([]byte(h.SessionContextGrowth))+` is not "" or accumulate`)
	}
	if h.CreatedAt != "" {
		if _, err := time.Parse(time.RFC3339Nano, h.CreatedAt); err != nil {
			d.warnAt(at("created_at"), "key created_at", quote([]byte(h.CreatedAt))+" is not an RFC 3339 instant")
		}
	}
	for class, t := range h.GoodputSLOTargets {
		for _, f := range []struct {
			key string
			v   float64
		}{{"ttft_ms", t.TTFTMs}, {"itl_ms", t.ITLMs}, {"e2e_ms", t.E2EMs}} {
			if f.v < 0 {
				p := "goodput_slo_targets." + class + "." + f.key
				return d.errAt(at(p), "key "+p, fmt.Sprintf("%v is negative", f.v))
			}
		}
	}
	if err := d.checkCounts(h, at); err != nil {
		return err
	}
	if m := h.ObservedKVMetrics; m != nil && (m.HitRate < 0 || m.HitRate > 1) {
		d.warnAt(at("observed_kv_metrics.hit_rate"), "key observed_kv_metrics.hit_rate", fmt.Sprintf("%v is outside [0, 1]", m.HitRate))
	}
	if x := h.XExt; x != nil {
		if x.TimeOrigin != "" && x.TimeOrigin != OriginRelative && x.TimeOrigin != OriginEpoch {
			d.warnAt(at("x_ext.time_origin"), "key x_ext.time_origin", quote([]byte(x.TimeOrigin))+" is not relative or epoch")
		}
		if x.Loop != "" && x.Loop != "open" && x.Loop != "closed" {
			d.warnAt(at("x_ext.loop"), "key x_ext.loop", quote([]byte(x.Loop))+" is not open or closed")
		}
		// An unknown source is warned about and dropped, as unknown keys
		// are; any other problem of x_ext's facts is an error.
		for {
			p, msg, warn := checkExt(x)
			if p == "" {
				break
			}
			if !warn {
				return d.errAt(at(p), "key "+p, msg)
			}
			d.warnAt(at(p), "key "+p, msg+"; ignored")
			delete(x.Sources, strings.TrimPrefix(p, "x_ext.sources."))
		}
		if len(x.Sources) == 0 {
			x.Sources = nil
		}
		if p, msg := h.serverConflict(); p != "" {
			return d.errAt(at(p), "key "+p, msg)
		}
	}
	return nil
}

// checkCounts refuses the negative values of the header's measured
// numbers (0 is "not recorded" for each).
func (d *headerDecoder) checkCounts(h *Header, at func(string) *yaml.Node) error {
	var checks []struct {
		path string
		v    float64
	}
	add := func(path string, v float64) {
		checks = append(checks, struct {
			path string
			v    float64
		}{path, v})
	}
	if s := h.Server; s != nil {
		add("server.tensor_parallel", float64(s.TensorParallel))
		add("server.max_num_seqs", float64(s.MaxNumSeqs))
		add("server.block_size", float64(s.BlockSize))
		add("server.max_model_len", float64(s.MaxModelLen))
		add("server.gpu_memory_utilization", s.GPUMemoryUtilization)
	}
	if n := h.Network; n != nil {
		add("network.measured_rtt_ms", n.MeasuredRTTMs)
	}
	if m := h.ObservedKVMetrics; m != nil {
		add("observed_kv_metrics.block_hits", float64(m.BlockHits))
		add("observed_kv_metrics.block_queries", float64(m.BlockQueries))
	}
	for _, c := range checks {
		if c.v < 0 {
			return d.errAt(at(c.path), "key "+c.path, fmt.Sprintf("%v is negative", c.v))
		}
	}
	if s := h.Server; s != nil && s.GPUMemoryUtilization > 1 {
		return d.errAt(at("server.gpu_memory_utilization"), "key server.gpu_memory_utilization", fmt.Sprintf("%v is above 1", s.GPUMemoryUtilization))
	}
	return nil
}

// mergeTrailer merges the trailer mapping into the header mapping in place
// (docs/tracev2.md §6): nested mappings merge key by key; a key present in both with a
// non-mapping value is an error located at the trailer's key.
func mergeTrailer(hdr, trailer *yaml.Node, name, path string) error {
	if trailer.Kind != yaml.MappingNode {
		return &Error{File: name, Line: max(trailer.Line, 1), Column: trailer.Column, What: "trailer",
			Msg: "want a YAML mapping of keys, got " + kindName(trailer)}
	}
	for i := 0; i+1 < len(trailer.Content); i += 2 {
		k, v := trailer.Content[i], trailer.Content[i+1]
		p := joinPath(path, k.Value)
		j := findKey(hdr, k.Value)
		if j < 0 {
			hdr.Content = append(hdr.Content, k, v)
			continue
		}
		hv := hdr.Content[j+1]
		if hv.Kind == yaml.MappingNode && v.Kind == yaml.MappingNode {
			if err := mergeTrailer(hv, v, name, p); err != nil {
				return err
			}
			continue
		}
		return &Error{File: name, Line: k.Line, Column: k.Column, What: "key " + p,
			Msg: fmt.Sprintf("present in both the header (line %d) and the trailer", hdr.Content[j].Line)}
	}
	return nil
}

func findKey(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}
