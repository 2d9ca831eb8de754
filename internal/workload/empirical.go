package workload

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
)

// loadEmpiricalFile reads an empirical length file (format in doc.go): either
// a PMF, one "<token count> <weight>" pair a line, or a list of observed
// lengths, one a line (each observation weighs 1). Separators may be commas,
// semicolons, tabs or spaces; blank lines and lines starting with '#' are
// skipped, and so is a first line of column names. The two forms do not mix.
// A negative weight is an error at its line: a weight is a share.
func loadEmpiricalFile(name, baseDir string) (weights map[int]float64, err error) {
	path := name
	if !filepath.IsAbs(path) && baseDir != "" {
		path = filepath.Join(baseDir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("empirical distribution: %w", err)
	}
	defer f.Close()
	// Only regular files: a FIFO or device (/dev/stdin) could block or never end.
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, &Error{File: name, Msg: "empirical distribution: not a regular file"}
	}
	weights = map[int]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	form, lineNo, seenData := 0, 0, false // form: 1 = observed lengths, 2 = PMF
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.FieldsFunc(line, func(r rune) bool {
			return r == ',' || r == ';' || unicode.IsSpace(r)
		})
		if !seenData && isHeader(fields) {
			seenData = true
			continue
		}
		seenData = true
		bad := func(format string, args ...any) error {
			return &Error{File: name, Line: lineNo, Msg: fmt.Sprintf(format, args...)}
		}
		if len(fields) != 1 && len(fields) != 2 {
			return nil, bad("want a token count, or a token count and a weight; got %d fields", len(fields))
		}
		if form != 0 && form != len(fields) {
			return nil, bad("mixes observed lengths and PMF rows")
		}
		form = len(fields)
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || n < 0 || n > MaxSampleTokens {
			return nil, bad("%q is not a token count in [0, %d]", fields[0], MaxSampleTokens)
		}
		w := 1.0
		if form == 2 {
			w, err = strconv.ParseFloat(fields[1], 64)
			if err != nil || math.IsNaN(w) || math.IsInf(w, 0) {
				return nil, bad("weight %q is not a finite number", fields[1])
			}
			if w < 0 {
				return nil, bad("weight %s is negative: a weight is a share, 0 or more", fields[1])
			}
		}
		weights[int(n)] += w
	}
	if err := sc.Err(); err != nil {
		return nil, &Error{File: name, Line: lineNo + 1, Err: err}
	}
	if form == 0 {
		return nil, &Error{File: name, Msg: "no data rows"}
	}
	return weights, nil
}

// isHeader reports whether a first row names columns rather than holding numbers.
func isHeader(fields []string) bool {
	for _, f := range fields {
		if _, err := strconv.ParseFloat(f, 64); err == nil {
			return false
		}
	}
	return len(fields) > 0
}
