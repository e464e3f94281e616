package check

import (
	"errors"
	"io"
	"runtime"

	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/internal/parallel"
	"github.com/graphdiff/graphdiff/loaders"
)

// heads returns the plan of diagnosis' samples over the finished pairs
// and the leading values it asks for: those the comparison kept where it
// kept enough, read from the files elsewhere. A pair that cannot be read,
// or whose two sides give different counts, has none.
func (c *compared) heads() (*diagnose.Plan, diagnose.Heads) {
	plan := diagnose.NewPlan(c.result.Tensors)
	wants := plan.Wants()
	heads := plan.NewHeads()
	// several at a time: thousands of small files wait on the file system
	parallel.For(len(wants), 2*runtime.GOMAXPROCS(0), func(i int) {
		w := wants[i]
		if w.Index < len(c.kept) {
			if k := c.kept[w.Index]; len(k.a) >= w.N && len(k.b) >= w.N {
				heads.Set(i, diagnose.Head{A32: k.a[:w.N], B32: k.b[:w.N]})
				return
			}
		}
		if w.Index >= len(c.entries) {
			return
		}
		e := c.entries[w.Index]
		if e.a == nil || e.b == nil {
			return
		}
		da, db := make([]float64, w.N), make([]float64, w.N)
		na, errA := headInto(e.a.Tensor, da)
		nb, errB := headInto(e.b.Tensor, db)
		if errA == nil && errB == nil && na == nb {
			heads.Set(i, diagnose.Head{A: da[:na], B: db[:nb]})
		}
	})
	return plan, heads
}

// headInto reads the first len(dst) values of a tensor into dst and
// returns how many it read (fewer at the end of the tensor).
func headInto(t *loaders.Tensor, dst []float64) (int, error) {
	var r *loaders.Reader
	var err error
	if t.RandomAccess() {
		r, err = t.OpenRange(0, min(t.Len(), int64(len(dst))))
	} else {
		r, err = t.Open()
	}
	if err != nil {
		return 0, err
	}
	defer r.Close()
	n := 0
	for n < len(dst) {
		var k int
		var err error
		if len(dst)-n < t.DType.Components() { // half a complex value left
			var last [2]float64
			k, err = r.Read(last[:])
			k = copy(dst[n:], last[:k])
		} else {
			k, err = r.Read(dst[n:])
		}
		n += k
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
