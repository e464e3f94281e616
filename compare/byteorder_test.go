package compare

import (
	"testing"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// TestBigEndianPTInPlace compares the tensors of the big-endian torch.save
// file pt_big_endian.pt with those of tensors.pt, the little-endian file
// it was made from (float32, float16, bfloat16, int64, bool, uint8),
// memory-mapped from the first element (mapMinElems 1) and read in
// chunks, with 1 and 4 workers and each kernel set: every pair gives the
// metrics of tensors.pt compared with itself, bit for bit. The in-place
// paths (float32 views of a map, 16-bit pairs compared in place, mixed
// pairs) must leave big-endian bytes to the decoders.
func TestBigEndianPTInPlace(t *testing.T) {
	t.Parallel()
	open := func(path string) map[string]*loaders.Tensor {
		ts, errs, err := loaders.OpenFile(path, loaders.Options{})
		if err != nil || len(errs) > 0 || len(ts) != 7 {
			t.Fatalf("%s: %d tensors, %v %v", path, len(ts), err, errs)
		}
		byName := map[string]*loaders.Tensor{}
		for _, tn := range ts {
			byName[tn.Name] = tn
		}
		return byName
	}
	little, big := open(fixture("pt", "tensors.pt")), open(fixture("pt_byteorder", "pt_big_endian.pt"))
	var same, swapped []Job
	for name, a := range little {
		b := big[name]
		if b == nil || b.DType != a.DType || b.BigEndian != (a.DType.Size() > 1) || a.BigEndian {
			t.Fatalf("%s: %+v against %+v", name, b, a)
		}
		s := tolerances.Resolver{}.Resolve(name, loaders.KindTensor, a.DType, b.DType, loaders.Invalid)
		same = append(same, Job{A: a, B: a, Tolerance: s.Tolerance, DType: s.DType, Heads: 2})
		swapped = append(swapped, Job{A: a, B: b, Tolerance: s.Tolerance, DType: s.DType, Heads: 2})
	}
	want := (&engine{chunkElems: chunkElems, mapMinElems: mapMinElems, kernels: goKernels}).pairs(same, 1, nil)
	eachKernelSet(t, func(t *testing.T, k kernels) {
		for _, chunk := range []int64{chunkElems, 2} {
			e := &engine{chunkElems: chunk, mapMinElems: 1, kernels: k}
			for _, workers := range []int{1, 4} {
				for i, got := range e.pairs(swapped, workers, nil) {
					w := want[i]
					if got.Err != nil || w.Err != nil || !sameMetrics(got.Metrics, w.Metrics) {
						t.Errorf("%s, chunks of %d, %d workers: %+v (%v)\nwant %+v", swapped[i].A.Name, chunk, workers, got.Metrics, got.Err, w.Metrics)
					}
				}
			}
		}
	})
}
