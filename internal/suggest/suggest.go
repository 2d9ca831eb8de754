package suggest

import (
	"slices"
	"strings"
)

// maxLen bounds the names compared: the edit distance costs len(a)·len(b).
const maxLen = 64

// Closest is the name of names nearest to typed by edit distance
// (Levenshtein: insertions, deletions and substitutions of one byte), or ""
// when none is near enough. Near enough is at most 2 edits, or a quarter of
// typed's length for longer names ("enable-prefix-cache" is 3 edits from
// "enable-prefix-caching"). Ties go to the first name in sorted order, so
// the answer does not depend on the order of names.
func Closest(typed string, names []string) string {
	limit := max(2, len(typed)/4)
	best, bestD := "", limit+1
	for _, n := range slices.Sorted(slices.Values(names)) {
		if n == typed {
			continue
		}
		if d := distance(typed, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// distance is the edit distance of a and b; beyond maxLen bytes it is
// larger than any limit.
func distance(a, b string) int {
	if len(a) > maxLen || len(b) > maxLen {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Near is at most n names of names that resemble typed, nearest first: those
// sharing a word with it (words are the runs between '-', '_', '.', '/' and
// spaces; one of them longer than a byte, so that a lone "5" is no
// likeness) or within Closest's reach, more shared words first, then fewer
// edits, then in sorted order. typed itself is left out. It is nil when
// nothing resembles typed ("gpt-5" among model names).
func Near(typed string, names []string, n int) []string {
	type cand struct {
		name          string
		shared, edits int
	}
	limit := max(2, len(typed)/4)
	tw := words(typed)
	var cs []cand
	for _, name := range names {
		if name == typed {
			continue
		}
		c := cand{name: name, edits: distance(typed, name)}
		long := false
		for _, w := range words(name) {
			if slices.Contains(tw, w) {
				c.shared++
				long = long || len(w) > 1
			}
		}
		if long || c.edits <= limit {
			cs = append(cs, c)
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.shared != b.shared {
			return b.shared - a.shared
		}
		if a.edits != b.edits {
			return a.edits - b.edits
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

// words are the distinct runs of s between separators.
func words(s string) []string {
	var ws []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune("-_./ ", r) }) {
		if !slices.Contains(ws, w) {
			ws = append(ws, w)
		}
	}
	return ws
}
