package tracev2

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"servesim/internal/exitcode"
	"servesim/internal/outfile"
)

// Create opens a trace output named the way every command's --trace-output
// names it: "-" is the single-stream form on stdout, anything else a prefix
// for the two-file form (PrefixPaths; x_ext in the header with withExt,
// else in the sidecar that BLIS's strict loader leaves alone).
func Create(prefix string, stdout io.Writer, h *Header, cols Columns, withExt bool) (*TraceWriter, error) {
	if prefix == "-" {
		return NewStreamWriter(stdout, h, cols)
	}
	if err := checkPrefix("--trace-output", prefix); err != nil {
		return nil, err
	}
	hp, dp, _ := PrefixPaths(prefix)
	return CreateFiles(hp, dp, h, cols, withExt)
}

// OutputFiles are the files a trace output at prefix writes (flag names it
// in messages), for outfile.Check: the header, the data and the x_ext
// sidecar of the two-file form; none for "-" (stdout). A prefix that names
// a directory ("out/", or an existing directory) is refused: it would
// write the hidden files out/.yaml and out/.csv.
func OutputFiles(flag, prefix string) ([]outfile.Named, error) {
	if prefix == "" || prefix == "-" {
		return nil, nil
	}
	if err := checkPrefix(flag, prefix); err != nil {
		return nil, err
	}
	hp, dp, _ := PrefixPaths(prefix)
	return []outfile.Named{{What: flag + " (header)", Path: hp}, {What: flag + " (data)", Path: dp},
		{What: flag + " (x_ext sidecar)", Path: ExtSidecarPath(hp)}}, nil
}

// checkPrefix refuses a trace prefix without a file name of its own.
func checkPrefix(flag, prefix string) error {
	if strings.HasSuffix(prefix, "/") || strings.HasSuffix(prefix, string(filepath.Separator)) || isDir(prefix) {
		return exitcode.Usagef("%s %s names a directory: give a prefix with a file name (%s for %s.yaml + %s.csv)",
			flag, prefix, filepath.Join(prefix, "trace"), filepath.Join(prefix, "trace"), filepath.Join(prefix, "trace"))
	}
	return nil
}

// InputFiles are the files reading the trace at path may open, for
// outfile.Check: the path, and for the two-file form (a .csv, .yaml or
// .yml name) the other file of the pair, its x_ext sidecar and its ITL
// companion. "-" (stdin) is none.
func InputFiles(path string) []outfile.Named {
	if path == "" || path == "-" {
		return nil
	}
	files := []outfile.Named{{What: "the input", Path: path}}
	base := strings.TrimSuffix(path, ".gz")
	for _, ext := range []string{".csv", ".yaml", ".yml"} {
		if b, ok := strings.CutSuffix(base, ext); ok {
			hp, dp, itl := PrefixPaths(b)
			for _, p := range []string{hp, b + ".yml", dp, ExtSidecarPath(hp), itl} {
				if p != path {
					files = append(files, outfile.Named{What: "the input", Path: p})
				}
			}
			break
		}
	}
	return files
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
