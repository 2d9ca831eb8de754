package importer

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
)

// Decompress returns r decompressed when it is gzip (detected by its magic
// bytes), else r as it is: an *os.File is rewound and handed back itself,
// so importers that read at offsets (vllm-bench) can. name is used in
// errors. Both replay --from and observe --trace --from read through it.
func Decompress(r io.Reader, name string) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(2)
	if err != nil || magic[0] != 0x1f || magic[1] != 0x8b {
		if f, ok := r.(*os.File); ok {
			// Rewind past what the peek buffered, so the importer gets
			// the *os.File itself.
			if _, err := f.Seek(0, io.SeekStart); err == nil {
				return f, nil
			}
		}
		return br, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, &Error{File: displayName(name), Line: 1, Column: 1, Msg: "gzip: " + err.Error(), Err: err}
	}
	return zr, nil
}
