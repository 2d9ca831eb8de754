package tracev2

import "io"

// cutBack removes the n bytes that a failed write left at the end of w,
// when w is a file (Seek and Truncate): a row, or a request's ITL rows, is
// then in the file whole or not at all, even when the disk filled up in
// its middle. Elsewhere (a pipe) the bytes are out of reach and stay.
func cutBack(w io.Writer, n int64) {
	f, ok := w.(interface {
		Seek(offset int64, whence int) (int64, error)
		Truncate(size int64) error
	})
	if !ok || n <= 0 {
		return
	}
	end, err := f.Seek(0, io.SeekCurrent)
	if err != nil || end < n {
		return
	}
	if f.Truncate(end-n) == nil {
		f.Seek(end-n, io.SeekStart)
	}
}

// countingWriter counts the bytes written through it since the last reset,
// for cutBack.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
