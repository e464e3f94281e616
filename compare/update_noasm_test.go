//go:build !amd64 || purego

package compare

// updateBlockElemsForTest is a block length for the tests to cross: there
// are no blocks without the assembly.
const updateBlockElemsForTest = 512
