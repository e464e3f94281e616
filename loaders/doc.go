// Package loaders owns everything about reading dumps: the file formats
// (.npy, .npz, .safetensors, torch.save), decoding every dtype to float64,
// discovering the tensors of a run directory, and pairing two runs
// (PairRuns; PairSingleFiles for two single-tensor files; Shard for a
// deterministic part of the pairs). Meta describes a tensor as a value,
// for results that must hold no file handle.
//
// # Formats
//
// .npy files of format versions 1.0, 2.0 and 3.0 are read with their
// header parsed here (see npy.go for why not through npyio): dtypes bool,
// int8–int64, uint8–uint64, float16, float32, float64, complex64 and
// complex128, either byte order, C or Fortran order, 0-d and empty arrays.
// numpy's raw 2-byte dtype '<V2' is read as bfloat16 (what np.save writes
// for ml_dtypes.bfloat16) unless Options.V2 says otherwise; '<f1' is
// float8_e5m2 (ml_dtypes' descr for it); '<V1' is float8 whose format comes
// from Options.V1 or a manifest. Object arrays are refused: graphdiff never
// unpickles. Structured, string and datetime dtypes are refused.
//
// .npz archives may hold stored (np.savez) or deflated
// (np.savez_compressed) members; .safetensors files may hold BOOL, U8–U64,
// I8–I64, F8_E4M3, F8_E5M2, F16, BF16, F32, F64 and C64 tensors; torch.save
// files (.pt, .pth) hold containers of tensors, read without running any
// code from their pickle, big-endian when their byteorder record says so
// (see pt.go). Loss curves come from .npy, CSV, JSON lines and TensorBoard
// event files (ReadCurve).
//
// # Decoding
//
// Tensor.Open returns a Reader that decodes a buffer of elements at a time
// into float64: exact for every float type (float16, bfloat16 and both
// float8 formats included: subnormals, ±0, ±Inf, NaN) and for integers up
// to 2^53 in magnitude. Tensor.OpenRange reads any element range of data
// that is stored uncompressed, so one large tensor can be read by several
// goroutines.
//
// # Bad input
//
// Every problem is an *Error naming the file (and member) and what is
// wrong. No length, shape or offset read from a file is used to allocate or
// seek before it has been checked against the file's size and fixed caps;
// element counts are checked for overflow. In a run directory one bad file
// is reported in Run.Errors and the rest are still read.
//
// A container that could be read in two ways is refused whole, never read
// one way: an .npz or torch.save archive that numpy or PyTorch would read
// otherwise than archive/zip (end records naming different central
// directories, a local header naming another file, overlapping members: see
// zipcheck.go); a torch.save archive that holds a member twice or two
// pickles; a torch.save object in which two tensors flatten into one name (a
// key containing '/' beside a nested container, or a key given twice); a
// torch.save byteorder record other than "little" or "big" ("big" is read
// big-endian); a safetensors header that gives a key twice.
package loaders
