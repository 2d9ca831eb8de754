package kvcache

// Pool recycles the block tables and hash lists of finished sequences, so a
// simulation allocates them only while its population grows. Caches on one
// goroutine may share a pool: a cluster's instances do, with the router that
// hashes a prompt before it knows which instance takes it (Prepare). Not safe
// for concurrent use.
type Pool struct {
	blocks [][]int32
	hashes [][]Hash
	notes  [][]note
}

const poolMax = 4096

// NewPool returns an empty pool.
func NewPool() *Pool { return &Pool{} }

// Prepare gives s pooled buffers where it has none.
func (p *Pool) Prepare(s *Seq) {
	if s.hashes == nil {
		if k := len(p.hashes); k > 0 {
			s.hashes = p.hashes[k-1]
			p.hashes = p.hashes[:k-1]
		}
	}
	if s.blocks == nil {
		if k := len(p.blocks); k > 0 {
			s.blocks = p.blocks[k-1]
			p.blocks = p.blocks[:k-1]
		}
	}
	if s.notes == nil && s.Private {
		if k := len(p.notes); k > 0 {
			s.notes = p.notes[k-1]
			p.notes = p.notes[:k-1]
		}
	}
}

// put takes s's buffers back and clears s.
func (p *Pool) put(s *Seq) {
	if cap(s.blocks) > 0 && len(p.blocks) < poolMax {
		p.blocks = append(p.blocks, s.blocks[:0])
	}
	if cap(s.hashes) > 0 && len(p.hashes) < poolMax {
		p.hashes = append(p.hashes, s.hashes[:0])
	}
	if cap(s.notes) > 0 && len(p.notes) < poolMax {
		p.notes = append(p.notes, s.notes[:0])
	}
	*s = Seq{}
}
