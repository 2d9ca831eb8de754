package report

// idIndex maps request ids to positions. Request ids are usually dense (0..N-1,
// docs/tracev2.md §4.2), so it uses a slice when the ids fit in a few times the row count
// and falls back to a map otherwise; at a million rows the slice is several
// times faster than hashing.
type idIndex struct {
	base  int64
	dense []int32 // position+1; 0 = absent
	m     map[int64]int
}

func newIDIndex(ids func(yield func(int64) bool)) idIndex {
	lo, hi, n := int64(0), int64(-1), 0
	for id := range ids {
		if n == 0 || id < lo {
			lo = id
		}
		if n == 0 || id > hi {
			hi = id
		}
		n++
	}
	if n > 0 && hi-lo < int64(4*n+1024) && n < 1<<31-1 {
		return idIndex{base: lo, dense: make([]int32, hi-lo+1)}
	}
	return idIndex{m: make(map[int64]int, n)}
}

func (x *idIndex) get(id int64) (int, bool) {
	if x.m != nil {
		i, ok := x.m[id]
		return i, ok
	}
	k := id - x.base
	if k < 0 || k >= int64(len(x.dense)) || x.dense[k] == 0 {
		return 0, false
	}
	return int(x.dense[k] - 1), true
}

func (x *idIndex) set(id int64, pos int) {
	if x.m != nil {
		x.m[id] = pos
		return
	}
	x.dense[id-x.base] = int32(pos + 1)
}
