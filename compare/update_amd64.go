//go:build amd64 && !purego

package compare

import (
	"math"
	"math/bits"
)

// updateBlockElems is the most elements addUpdatesAVX512 takes at once:
// with its buffers (16 KiB of terms) and the five inputs (10 KiB) they
// stay in the first-level cache between its two passes.
const updateBlockElems = 512

// updateState is what addUpdatesAVX512 reads and writes. Its layout is
// the assembly's (US_* offsets; TestUpdateStateLayout checks them).
type updateState struct {
	pa, ca, pb, cb, g *float32 // the block's first element of each stream
	n                 int64    // elements, a multiple of 16
	eps, floor        float64  // UpdateJob.Epsilon; worstElems.floor
	sums              *[updateRows][4]float64
	counts            *[8][256]int64
	terms             *[4]float64 // buffers of the block (updateBlock)
	offs              *uint32     // and masks and cand, at offsets from it
	moved             [4]int64    // added to: MovedA, MovedB, UlpMovedA, UlpMovedB
}

// updateBlock holds the buffers addUpdatesAVX512 passes from its first
// pass over a block to its second (update_amd64.s says what they hold).
type updateBlock struct {
	terms *[updateBlockElems][4]float64 // 64-byte aligned
	// offs, masks and cand are read at offsets from offs (UB_* in the
	// assembly; TestUpdateStateLayout checks them)
	offs  [updateBlockElems]uint32
	masks [updateBlockElems]uint8
	cand  [updateBlockElems / 8]uint8
	zeros [updateBlockElems]float32 // the gradient where there is none
}

//go:noescape
func addUpdatesAVX512(st *updateState)

// addUpdates512 adds the leading elements of vals to s as addUpdates does,
// in blocks of up to updateBlockElems, and returns how many it took: all
// but the last len mod 16. The assembly adds every element's sums and
// counts; the elements it marks as candidates (finite, |d| above the
// floor of worstElems at the start of the block) go to worstElems.add
// here, in element order, each tested against the floor as it is then.
func (s *updateSums) addUpdates512(done int64, vals [][]float32) int {
	pa, ca, pb, cb := vals[0], vals[1], vals[2], vals[3]
	n := len(ca) &^ 15
	if n == 0 {
		return 0
	}
	pa, pb, cb = pa[:n], pb[:n], cb[:n]
	var g []float32
	if len(vals) == 5 {
		g = vals[4][:n]
	}
	if s.blk == nil {
		s.blk = &updateBlock{terms: (*[updateBlockElems][4]float64)(alignedFloats(4 * updateBlockElems))}
	}
	b := s.blk
	st := updateState{eps: s.eps, sums: &s.t.sums, counts: &s.t.counts,
		terms: &b.terms[0], offs: &b.offs[0]}
	for i := 0; i < n; i += updateBlockElems {
		m := min(updateBlockElems, n-i)
		st.pa, st.ca, st.pb, st.cb, st.g = &pa[i], &ca[i], &pb[i], &cb[i], &b.zeros[0]
		if g != nil {
			st.g = &g[i]
		}
		st.n, st.floor = int64(m), s.worst.floor
		addUpdatesAVX512(&st)
		for w, c := range b.cand[:m/8] {
			for ; c != 0; c &= c - 1 {
				k := i + 8*w + bits.TrailingZeros8(c)
				ua := float64(ca[k]) - float64(pa[k])
				ub := float64(cb[k]) - float64(pb[k])
				d := ub - ua
				if math.Abs(d) <= s.worst.floor {
					continue
				}
				e := 0
				if g != nil {
					if x := int(math.Float32bits(g[k])>>23) & 0xff; x != 0xff {
						e = x
					}
				}
				s.worst.add(done+int64(k), e, d)
			}
		}
	}
	s.u.MovedA += st.moved[0]
	s.u.MovedB += st.moved[1]
	s.u.UlpMovedA += st.moved[2]
	s.u.UlpMovedB += st.moved[3]
	return n
}
