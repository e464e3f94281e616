//go:build !amd64 || purego

package compare

// Without assembly kernels the fast paths are the Go loops of kernel.go,
// whatever set of kernels an accumulator was given.

// cpuKernels returns no kernels: there are none to run.
func cpuKernels() kernels { return 0 }

// machineKernels returns no kernels: there are none to run.
func machineKernels() kernels { return 0 }

func (kernels) equalRun32(va, vb []float32, e [lanes]float64) (int, [lanes]float64) {
	return equalRun32Go(va, vb, e)
}

func (kernels) equalRunBF16(ra, rb []byte, e [lanes]float64) (int, [lanes]float64) {
	return equalRunBF16Go(ra, rb, e)
}

func (kernels) equalRunF16(ra, rb []byte, e [lanes]float64) (int, [lanes]float64) {
	return equalRunF16Go(ra, rb, e)
}

func (kernels) equalRunMixed(v []float32, raw []byte, e [lanes]float64) (int, [lanes]float64) {
	return equalRunMixedGo(v, raw, e)
}

// differRun32 takes no elements: block does all the slow path's work.
func (c *acc) differRun32(va, vb []float32, i int, mode ulpMode) (k int, ran bool) { return 0, false }

// fold32 takes no elements: the loops of addF32 take them all.
func (c *acc) fold32(va, vb []float32, i int, mode ulpMode) int { return 0 }

// foldMixed takes no elements: addMixed widens the bfloat16 side.
func (c *acc) foldMixed(v []float32, raw []byte, mode ulpMode) int { return 0 }

// addSpread adds the spread counts to counts and zeroes them; nothing
// fills them without the assembly.
func addSpread(counts []uint32, spread []uint16) { addSpreadRows(counts, spread) }
