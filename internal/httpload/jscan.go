package httpload

import (
	"strconv"

	"servesim/internal/jsonscan"
)

// jscan is the JSON scanner of a streamed response's chunks (chunk.go): it
// never unescapes values, because the client only needs to know whether a
// string is empty, and finish reasons are plain ASCII.
type jscan struct{ jsonscan.Scanner }

// count reads a token count: an integer, or null (0). Fractions are
// truncated; negative or huge values are errors.
func (s *jscan) count() (int, error) {
	if s.Null() {
		return 0, nil
	}
	raw, err := s.Num()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range raw {
		if c < '0' || c > '9' {
			f, ferr := strconv.ParseFloat(string(raw), 64)
			if ferr != nil || f < 0 || f > 1e15 {
				return 0, s.Fail("token count out of range")
			}
			return int(f), nil
		}
		if n > 1e15 {
			return 0, s.Fail("token count out of range")
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}
