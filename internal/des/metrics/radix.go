package metrics

// sortedCopy returns v's values in ascending order, by an LSD radix sort on
// bytes: the summary sorts every request's TTFT, E2E and scheduling delay,
// and at a million requests comparison sorting was a visible share of a
// whole simulation. Byte positions where all values agree are skipped, so
// µs latencies (a few bytes wide) take three or four passes.
func sortedCopy(v []int64) []int64 {
	n := len(v)
	out := make([]int64, n)
	if n == 0 {
		return out
	}
	// Flipping the sign bit makes unsigned order equal signed order.
	const flip = uint64(1) << 63
	src := make([]uint64, n)
	first := uint64(v[0]) ^ flip
	var diff uint64
	for i, x := range v {
		u := uint64(x) ^ flip
		src[i] = u
		diff |= u ^ first
	}
	if n < 64 {
		insertionSort(src)
		return unflip(out, src)
	}
	dst := make([]uint64, n)
	var count [256]int
	for shift := uint(0); shift < 64; shift += 8 {
		if (diff>>shift)&0xff == 0 {
			continue
		}
		count = [256]int{}
		for _, u := range src {
			count[(u>>shift)&0xff]++
		}
		pos := 0
		for b, c := range count {
			count[b] = pos
			pos += c
		}
		for _, u := range src {
			b := (u >> shift) & 0xff
			dst[count[b]] = u
			count[b]++
		}
		src, dst = dst, src
	}
	return unflip(out, src)
}

func insertionSort(s []uint64) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func unflip(out []int64, src []uint64) []int64 {
	for i, u := range src {
		out[i] = int64(u ^ (1 << 63))
	}
	return out
}
