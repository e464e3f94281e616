// Command graphdiff compares tensor dumps of an eager PyTorch run and a
// CUDA-graphed run and says whether they agree, where they first diverged,
// and the most likely cause.
package main

import "os"

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
