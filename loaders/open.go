package loaders

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// Options say how to read data whose dtype the file does not record.
// The zero value reads '<V2' as bfloat16 and refuses '|V1'.
type Options struct {
	// V2 is how numpy's 2-byte raw dtype ('<V2', what np.save writes for an
	// ml_dtypes.bfloat16 array) is read: BFloat16 (when Invalid), Float16,
	// Int16 or Uint16.
	V2 DType
	// V1 is how numpy's 1-byte raw dtype ('|V1', ml_dtypes' float8 types)
	// is read: Float8E4M3FN or Float8E5M2. When Invalid, such files are an
	// error asking for the format.
	V1 DType
	// Found, when set, is told how many tensor files a directory holds as
	// the walk finds them, before any is opened: a caller can size what it
	// is about to hold. Two runs loaded at once call it at once.
	Found func(files int)
}

func (o Options) v2() DType {
	if o.V2 == Invalid {
		return BFloat16
	}
	return o.V2
}

// Check reports options that cannot apply: a V2 that is not a 2-byte type
// or a V1 that is not a float8 format.
func (o Options) Check() error {
	if o.V2 != Invalid && o.V2.Size() != 2 {
		return fmt.Errorf("'<V2' can be read as a 2-byte dtype only (bfloat16, float16, int16, uint16), not %s", o.V2)
	}
	if o.V1 != Invalid && o.V1 != Float8E4M3FN && o.V1 != Float8E5M2 {
		return fmt.Errorf("'|V1' can be read as float8_e4m3fn or float8_e5m2 only, not %s", o.V1)
	}
	return nil
}

// Format is a tensor file format graphdiff reads.
type Format string

// The formats, by their usual file extension.
const (
	FormatNPY         Format = ".npy"
	FormatNPZ         Format = ".npz"
	FormatSafetensors Format = ".safetensors"
	FormatPT          Format = ".pt"
)

// FormatOf returns the format a file name's extension says, or "" when it
// names none.
func FormatOf(name string) Format {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".npy":
		return FormatNPY
	case ".npz":
		return FormatNPZ
	case ".safetensors":
		return FormatSafetensors
	case ".pt", ".pth":
		return FormatPT
	case ".bin":
		return formatBin
	}
	return ""
}

// formatBin is what FormatOf says of a .bin file: a torch.save archive
// under another name (Hugging Face's pytorch_model.bin, Accelerate's
// optimizer.bin) where its first bytes are a zip's (isTorchBin), and no
// tensor file otherwise, which discovery passes over.
const formatBin Format = ".bin"

// isTorchBin reports whether the file at path is a regular file that
// begins as a zip archive does, as a torch.save archive named .bin does.
func isTorchBin(path string) bool {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return false // a pipe would block the open; a device is no archive
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [4]byte
	n, _ := io.ReadFull(f, head[:])
	return sniff(head[:n]) == FormatNPZ // a zip's magic
}

// sniff guesses a format from a file's first bytes, for names without a
// known extension.
func sniff(head []byte) Format {
	switch {
	case bytes.HasPrefix(head, npyMagic):
		return FormatNPY
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return FormatNPZ
	case len(head) >= 9 && head[8] == '{':
		return FormatSafetensors
	}
	return ""
}

// fileOpener returns an opener for the file at path.
func fileOpener(path string) opener {
	return func() (io.ReaderAt, io.Closer, error) {
		f, err := openData(path)
		if err != nil {
			return nil, nil, unwrapPathError(err)
		}
		return f, f, nil
	}
}

// errNotRegular is why a named pipe, socket or device is not read.
var errNotRegular = errors.New("not a regular file (a named pipe, socket or device): not read")

// OpenFile lists the tensors in one file: an .npy file holds one, an .npz
// or .safetensors file any number. A file whose extension names no format
// is recognized by its first bytes. It returns the tensors it could read
// and one error per member it could not; with a fatal error (an *Error), the
// file could not be read at all.
func OpenFile(path string, opts Options) (tensors []*Tensor, memberErrs []error, fatal error) {
	f, err := openData(path)
	if err != nil {
		return nil, nil, &Error{Path: path, Err: unwrapPathError(err)}
	}
	size, dir, err := f.stat()
	if err != nil {
		f.Close()
		return nil, nil, &Error{Path: path, Err: unwrapPathError(err)}
	}
	if dir {
		f.Close()
		return nil, nil, &Error{Path: path, Err: fmt.Errorf("is a directory")}
	}
	format := FormatOf(path)
	bin := format == formatBin
	if format == "" || bin {
		head := make([]byte, 16)
		n, _ := f.ReadAt(head, 0)
		sniffed := sniff(head[:n])
		if bin && sniffed == FormatNPZ {
			sniffed = FormatPT // a zip named .bin: torch.save's
		}
		format = sniffed
	}
	tensors, memberErrs, fatal = listOpen(f, size, path, format, opts)
	if bin && errors.Is(fatal, errNoTorchPickle) {
		return nil, nil, nil // a zip of another kind under a .bin name: no tensor file
	}
	return tensors, memberErrs, fatal
}

// listOpen lists the tensors of the file of size bytes that f has open,
// as OpenFile does, and closes f.
func listOpen(f *dataFile, size int64, path string, format Format, opts Options) (tensors []*Tensor, memberErrs []error, fatal error) {
	// Listing reads through the descriptor already open (the first open
	// the reader asks for); reads of the data, later, open the file anew.
	var listing atomic.Pointer[dataFile]
	listing.Store(f)
	open := func() (io.ReaderAt, io.Closer, error) {
		if g := listing.Swap(nil); g != nil {
			return g, io.NopCloser(nil), nil
		}
		return fileOpener(path)()
	}
	tensors, memberErrs, fatal = openReaderAt(open, size, path, format, opts)
	listing.Store(nil)
	f.Close()
	for _, t := range tensors {
		if t.data.stream == nil {
			t.data.file = path // in place in the file: can be mapped
		}
	}
	return tensors, memberErrs, fatal
}

// OpenBytes lists the tensors in an in-memory file of the given format, as
// OpenFile does for a file on disk; name is used in errors.
func OpenBytes(data []byte, name string, format Format, opts Options) ([]*Tensor, []error, error) {
	open := func() (io.ReaderAt, io.Closer, error) { return bytes.NewReader(data), io.NopCloser(nil), nil }
	return openReaderAt(open, int64(len(data)), name, format, opts)
}

func openReaderAt(open opener, size int64, path string, format Format, opts Options) ([]*Tensor, []error, error) {
	switch format {
	case FormatNPY:
		t, err := readNPY(open, 0, size, path, "", opts)
		if err != nil {
			return nil, nil, err
		}
		t.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		return []*Tensor{t}, nil, nil
	case FormatNPZ:
		return readNPZ(open, size, path, opts)
	case FormatSafetensors:
		ts, err := readSafetensors(open, size, path)
		return ts, nil, err
	case FormatPT:
		return readPT(open, size, path, opts)
	}
	return nil, nil, &Error{Path: path, Err: fmt.Errorf("not a tensor file graphdiff reads (.npy, .npz, .safetensors, .pt)")}
}

// unwrapPathError drops the *os.PathError wrapper, whose path the *Error
// around it already names.
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
