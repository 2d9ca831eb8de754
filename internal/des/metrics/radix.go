package metrics

import "unsafe"

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
	for i, x := range v {
		src[i] = uint64(x) ^ flip
	}
	return unflip(out, radixSort(src))
}

// radixSort32 sorts v ascending, in place.
func radixSort32(v []uint32) {
	if s := radixSort(v); len(s) > 0 && &s[0] != &v[0] {
		copy(v, s)
	}
}

// radixSort orders v ascending by an LSD radix sort on bytes, skipping the
// bytes in which every value agrees, with one scratch buffer of len(v) (none
// below 64 values: an insertion sort), and returns the slice that holds
// the result: v or the scratch buffer.
func radixSort[T uint32 | uint64](v []T) []T {
	n := len(v)
	if n < 64 {
		for i := 1; i < n; i++ {
			for j := i; j > 0 && v[j] < v[j-1]; j-- {
				v[j], v[j-1] = v[j-1], v[j]
			}
		}
		return v
	}
	var diff T
	for _, x := range v {
		diff |= x ^ v[0]
	}
	src, dst := v, make([]T, n)
	var count [256]int
	for shift := uint(0); shift < uint(8*unsafe.Sizeof(diff)); shift += 8 {
		if (diff>>shift)&0xff == 0 {
			continue
		}
		count = [256]int{}
		for _, x := range src {
			count[(x>>shift)&0xff]++
		}
		pos := 0
		for b, c := range count {
			count[b] = pos
			pos += c
		}
		for _, x := range src {
			b := (x >> shift) & 0xff
			dst[count[b]] = x
			count[b]++
		}
		src, dst = dst, src
	}
	return src
}

func unflip(out []int64, src []uint64) []int64 {
	for i, u := range src {
		out[i] = int64(u ^ (1 << 63))
	}
	return out
}
