// Package clip shortens text for messages and logs: at most a number of
// bytes, cut on a character boundary, the cut marked with "…".
//
// It is a leaf: it knows nothing of the text it shortens and imports
// nothing of the suite.
package clip

import "unicode/utf8"

// Text shortens s to at most limit bytes, on a character boundary,
// marking the cut with "…".
func Text(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	n := limit
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
