package input

import (
	"servesim/internal/outfile"
	"servesim/internal/tracev2"
)

// Files are the files reading cfg's trace may open (tracev2.InputFiles of
// each path), for outfile.Check: an output must be none of them.
func (cfg *Config) Files() []outfile.Named {
	var files []outfile.Named
	for _, p := range append(append([]string{}, cfg.Paths...), cfg.HeaderPath, cfg.DataPath) {
		files = append(files, tracev2.InputFiles(p)...)
	}
	return files
}
