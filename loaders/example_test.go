package loaders_test

import (
	"fmt"

	"github.com/graphdiff/graphdiff/loaders"
)

// Load discovers a run directory; entries come sorted by step, kind and name.
func ExampleLoad() {
	run, err := loaders.Load("../testdata/runs/mlp_fp32/graph", loaders.Options{})
	if err != nil {
		panic(err)
	}
	for _, e := range run.Entries[:5] {
		fmt.Println(e.Step, e.Kind, e.Name, e.DType, loaders.FormatShape(e.Shape))
	}
	fmt.Println(len(run.Entries), "tensors,", len(run.Errors), "errors, run", run.Manifest.Run.Name)
	// Output:
	// -1 loss losses float32 (4,)
	// 0 loss loss float32 ()
	// 0 grad grads/fc1.bias float32 (64,)
	// 0 grad grads/fc1.weight float32 (64, 32)
	// 0 grad grads/fc2.bias float32 (64,)
	// 61 tensors, 0 errors, run graph
}

// PairRuns matches the tensors of two runs by name and step.
func ExamplePairRuns() {
	eager, _ := loaders.Load("../testdata/runs/mlp_bf16/eager", loaders.Options{})
	graph, _ := loaders.Load("../testdata/runs/mlp_bf16/graph", loaders.Options{})
	pairs := loaders.PairRuns(eager, graph)
	p := pairs[1]
	fmt.Println(len(pairs), "pairs; second:", p.Step, p.Name, p.A.DType, p.A.Descr, p.B != nil)
	// Output:
	// 46 pairs; second: 0 loss bfloat16 <V2 true
}

// A Reader decodes elements into float64 a buffer at a time.
func ExampleTensor_Open() {
	tensors, _, err := loaders.OpenFile("../testdata/npy/f2.npy", loaders.Options{})
	if err != nil {
		panic(err)
	}
	r, err := tensors[0].Open()
	if err != nil {
		panic(err)
	}
	defer r.Close()
	buf := make([]float64, 16)
	n, _ := r.Read(buf)
	fmt.Println(tensors[0].DType, buf[:n])
	// Output:
	// float16 [0 -0 1.5 -2.25 5.960464477539063e-08 65504 NaN +Inf -Inf -65504 6.103515625e-05 0.0999755859375]
}
