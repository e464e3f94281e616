package loaders

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/types"
)

// torch.save files (.pt, .pth) are zip archives: NAME/data.pkl is a pickle
// of the saved object, in which each tensor is a call of
// torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...) and
// each storage a persistent id ('storage', torch.FloatStorage, key, device,
// numel) whose bytes are the zip entry NAME/data/KEY, stored uncompressed.
//
// graphdiff unpickles data.pkl with gopickle, which never runs Python, and
// refuses every global outside a short list (tensor rebuilding, storage
// types, OrderedDict): a pickle that names any other function — os.system,
// say — is an error, not a call. Storages are read in place from the zip,
// at any offset. Dicts, lists and tuples of tensors (nested, a state_dict,
// {"loss": .., "grads": {..}}) become tensor names joined with '/'; other
// values (ints, strings) are not tensors and are left out. A file in which
// two tensors get one name is refused (see ptWalk).
//
// Contiguous tensors, in C or Fortran order, are read in place; a view
// with other strides (t[::2]) is gathered in memory from the span of its
// storage it covers. The legacy format (torch.save before PyTorch 1.6, or
// with _use_new_zipfile_serialization=False) is refused, and so is an
// archive that PyTorch would read otherwise than archive/zip (checkZip).

// maxPickle caps data.pkl: it describes tensors, it does not hold them.
const maxPickle = 64 << 20

// maxPTDepth caps the nesting of containers in the saved object.
const maxPTDepth = 64

// maxViewElems caps a view larger than its storage (a stride-0 expand):
// such a view is streamed from a window of its storage, never held whole,
// but reading 2^28 elements already takes about a second.
const maxViewElems = 1 << 28

// maxPTEntries caps how many container entries the walk of a saved object
// visits: the pickle memo lets a container be referenced many times, so a
// few hundred bytes can describe 2^20 paths or more. A state dict, with
// its optimizer state, has thousands of entries.
const maxPTEntries = 1 << 16

// ptStorageTypes maps torch's storage classes to dtypes.
var ptStorageTypes = map[string]DType{
	"FloatStorage": Float32, "DoubleStorage": Float64, "HalfStorage": Float16, "BFloat16Storage": BFloat16,
	"LongStorage": Int64, "IntStorage": Int32, "ShortStorage": Int16, "CharStorage": Int8,
	"ByteStorage": Uint8, "BoolStorage": Bool, "ComplexFloatStorage": Complex64, "ComplexDoubleStorage": Complex128,
	"Float8_e4m3fnStorage": Float8E4M3FN, "Float8_e5m2Storage": Float8E5M2,
}

type ptStorageClass struct{ dtype DType }

type ptStorage struct {
	dtype DType
	key   string
}

type ptTensor struct {
	storage *ptStorage
	offset  int64
	size    []int
	stride  []int64
}

// ptRebuild stands for torch._utils._rebuild_tensor_v2 (and _rebuild_tensor).
type ptRebuild struct{}

func (ptRebuild) Call(args ...interface{}) (interface{}, error) {
	if len(args) < 4 {
		return nil, fmt.Errorf("_rebuild_tensor_v2 with %d arguments", len(args))
	}
	st, ok := args[0].(*ptStorage)
	if !ok {
		return nil, fmt.Errorf("tensor storage is %T, not a storage", args[0])
	}
	off, ok := args[1].(int)
	if !ok || off < 0 {
		return nil, fmt.Errorf("bad storage offset %v", args[1])
	}
	size, err := ptInts(args[2])
	if err != nil {
		return nil, fmt.Errorf("size: %w", err)
	}
	stride, err := ptInts(args[3])
	if err != nil || len(stride) != len(size) {
		return nil, fmt.Errorf("stride %v does not fit size %v", args[3], args[2])
	}
	t := &ptTensor{storage: st, offset: int64(off), size: make([]int, len(size)), stride: make([]int64, len(size))}
	for i := range size {
		if size[i] < 0 || stride[i] < 0 {
			return nil, fmt.Errorf("negative size or stride %v %v", size, stride)
		}
		t.size[i], t.stride[i] = int(size[i]), stride[i]
	}
	return t, nil
}

// ptParameter stands for torch._utils._rebuild_parameter: the tensor itself.
type ptParameter struct{}

func (ptParameter) Call(args ...interface{}) (interface{}, error) {
	if len(args) < 1 {
		return nil, errors.New("_rebuild_parameter without data")
	}
	return args[0], nil
}

func ptInts(v interface{}) ([]int64, error) {
	t, ok := v.(*types.Tuple)
	if !ok {
		return nil, fmt.Errorf("%v is not a tuple", v)
	}
	out := make([]int64, t.Len())
	for i := range out {
		n, ok := t.Get(i).(int)
		if !ok {
			return nil, fmt.Errorf("%v is not an integer", t.Get(i))
		}
		out[i] = int64(n)
	}
	return out, nil
}

// readPT lists the tensors of a torch.save file. One that holds no
// tensor lists none, without an error (a run of such files alone holds no
// tensors, which the comparison says): a pickle of plain data without
// tensors, or, in an archive with no storage member, which torch.save
// writes for every tensor, a pickle of an object (a class graphdiff
// refuses to call, as a Trainer's training_args.bin names). A malformed
// pickle is an error either way.
func readPT(open opener, size int64, path string, opts Options) (tensors []*Tensor, errs []error, fatal error) {
	fail := func(format string, args ...any) ([]*Tensor, []error, error) {
		return nil, nil, &Error{Path: path, Err: fmt.Errorf(format, args...)}
	}
	ra, closer, err := open()
	if err != nil {
		return nil, nil, &Error{Path: path, Err: err}
	}
	defer closer.Close()
	var head [2]byte
	if _, err := ra.ReadAt(head[:], 0); err == nil && head[0] == 0x80 {
		return fail("legacy torch.save format (a bare pickle, not a zip archive): re-save with PyTorch ≥ 1.6's default format")
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return fail("not a torch.save zip archive: %v", err)
	}
	if err := checkZip(ra, size, zr.File, "PyTorch"); err != nil {
		return fail("%w", err)
	}
	var pkl *zip.File
	entries := map[string]*zip.File{}
	for _, f := range zr.File {
		// torch.save writes each record once, under one directory; an
		// archive with a member twice, or two pickles, could be read
		// either way (torch.load takes the last member of a name, and
		// refuses members outside its first member's directory)
		if entries[f.Name] != nil {
			return fail("the archive holds two members named %q: graphdiff cannot tell which one is meant", f.Name)
		}
		entries[f.Name] = f
		if strings.HasSuffix(f.Name, "/data.pkl") && strings.Count(f.Name, "/") == 1 {
			if pkl != nil {
				return fail("the archive holds two pickles, %q and %q: graphdiff cannot tell which one is meant", pkl.Name, f.Name)
			}
			pkl = f
		}
	}
	if pkl == nil {
		return nil, nil, &Error{Path: path, Err: errNoTorchPickle}
	}
	if pkl.UncompressedSize64 > maxPickle {
		return fail("data.pkl of %d bytes exceeds the %d-byte limit", pkl.UncompressedSize64, maxPickle)
	}
	prefix := strings.TrimSuffix(pkl.Name, "data.pkl")
	// torch.save writes every tensor's storage as a member under data/:
	// an archive without one holds no tensor (a scheduler's state, a
	// pickled object such as training arguments)
	storages := slices.ContainsFunc(zr.File, func(f *zip.File) bool { return strings.HasPrefix(f.Name, prefix+"data/") })
	bigEndian, err := ptByteOrder(entries[prefix+"byteorder"])
	if err != nil {
		return fail("%v", err)
	}
	rc, err := pkl.Open()
	if err != nil {
		return fail("data.pkl: %v", err)
	}
	data, err := io.ReadAll(io.LimitReader(rc, maxPickle+1))
	rc.Close()
	if err != nil {
		return fail("data.pkl: %v", err)
	}
	obj, err := unpicklePT(data)
	var refused *refusedGlobal
	if err != nil && !storages && errors.As(err, &refused) {
		return nil, nil, nil // an object, not tensors: nothing to compare, and nothing run
	}
	if err != nil {
		return fail("%v", err)
	}
	found := &ptFound{leaves: map[string]ptLeaf{}, optBudget: maxPTEntries}
	leaves := found.leaves
	budget := maxPTEntries
	if err := ptWalk(obj, "", 0, false, &budget, found); err != nil {
		return fail("%v", err)
	}
	if len(leaves) == 0 {
		return nil, nil, nil // storages no tensor refers to: nothing to compare
	}
	names := make([]string, 0, len(leaves))
	for n := range leaves {
		names = append(names, n)
	}
	sort.Strings(names)
	moments, order := ptMoments(found)
	hyper := map[string]bool{} // the tensors the optimizers' param groups hold
	for _, o := range found.optims {
		for _, h := range o.hypers {
			hyper[h] = true
		}
	}
	for _, name := range names {
		if err := checkName(name); err != nil {
			errs = append(errs, &Error{Path: path, Member: name, Err: err})
			continue
		}
		t, err := ptTensorOf(leaves[name].tensor, name, entries, prefix, bigEndian, open, size, path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		t.Moment = moments[name]
		t.Hyper = hyper[name]
		if at, ok := order[name]; ok {
			t.Order = at
		}
		tensors = append(tensors, t)
	}
	read := make(map[string]bool, len(tensors))
	for _, t := range tensors {
		read[t.Name] = true
	}
	for _, t := range tensors {
		if !read[t.Moment.Param] {
			t.Moment.Param = "" // a parameter that could not be read judges nothing
		}
	}
	return tensors, errs, nil
}

// unpicklePT unpickles data.pkl with only the globals a tensor file needs.
func unpicklePT(data []byte) (obj interface{}, err error) {
	defer func() {
		if p := recover(); p != nil {
			obj, err = nil, fmt.Errorf("malformed data.pkl: %v", p)
		}
	}()
	if err := checkPickleLengths(data); err != nil {
		return nil, fmt.Errorf("malformed data.pkl: %w", err)
	}
	u := pickle.NewUnpickler(bytes.NewReader(data))
	u.FindClass = func(module, name string) (interface{}, error) {
		switch {
		case module == "torch._utils" && (name == "_rebuild_tensor_v2" || name == "_rebuild_tensor"):
			return ptRebuild{}, nil
		case module == "torch._utils" && name == "_rebuild_parameter":
			return ptParameter{}, nil
		case module == "torch" && ptStorageTypes[name] != Invalid:
			return &ptStorageClass{dtype: ptStorageTypes[name]}, nil
		}
		return nil, &refusedGlobal{module, name}
	}
	u.PersistentLoad = func(pid interface{}) (interface{}, error) {
		t, ok := pid.(*types.Tuple)
		if !ok || t.Len() < 3 {
			return nil, fmt.Errorf("unknown persistent id %v", pid)
		}
		if s, _ := t.Get(0).(string); s != "storage" {
			return nil, fmt.Errorf("unknown persistent id %v", pid)
		}
		cls, ok := t.Get(1).(*ptStorageClass)
		key, ok2 := t.Get(2).(string)
		if !ok || !ok2 {
			return nil, fmt.Errorf("bad storage id %v", pid)
		}
		return &ptStorage{dtype: cls.dtype, key: key}, nil
	}
	return u.Load()
}

// errNoTorchPickle is readPT's error for a zip archive without the
// data.pkl torch.save writes.
var errNoTorchPickle = errors.New("no data.pkl: not a torch.save archive")

// refusedGlobal is the error of a pickle that names a global graphdiff
// does not stand in for (a class, a function): it is never called.
type refusedGlobal struct{ module, name string }

func (e *refusedGlobal) Error() string {
	return fmt.Sprintf("data.pkl names %s.%s: refused, graphdiff never runs code from a pickle (only tensors, dicts, lists and tuples are read)", e.module, e.name)
}

// ptLeaf is a tensor found in the saved object; slashed tells whether a
// key on its path holds a '/', the separator of the names it is joined
// into.
type ptLeaf struct {
	tensor  *ptTensor
	slashed bool
}

// ptWalk collects the tensors of the unpickled object by name: the keys
// (and list indexes) on the way to each, joined with '/'. A name given
// twice refuses the whole file: {"a": {"b": t1}, "a/b": t2} names two
// tensors "a/b", as does a dict that holds a key twice (a pickle can say
// so; a Python dict cannot) or two keys that print alike (1 and "1").
// Keeping either tensor would compare one the user may not have meant,
// and graphdiff cannot tell which was meant; renaming one would give a
// name neither run uses.
func ptWalk(v interface{}, name string, depth int, slashed bool, budget *int, f *ptFound) error {
	if depth > maxPTDepth {
		return fmt.Errorf("containers nest deeper than %d levels", maxPTDepth)
	}
	if *budget--; *budget < 0 {
		return fmt.Errorf("containers hold more than %d entries (shared references expand)", maxPTEntries)
	}
	walk := func(v, key interface{}) error {
		k := fmt.Sprint(key)
		full := ptJoin(name, key)
		return ptWalk(v, full, depth+1, slashed || strings.Contains(k, "/"), budget, f)
	}
	var td tensorDict // the container's tensors, where all it holds are tensors
	n := 0            // what it holds
	held := func(v, key any) {
		n++
		if t, ok := v.(*ptTensor); ok {
			td.names, td.shapes = append(td.names, ptJoin(name, key)), append(td.shapes, t.size)
		}
	}
	switch x := v.(type) {
	case *ptTensor:
		if name == "" {
			name = "tensor"
		}
		if prev, twice := f.leaves[name]; twice {
			why := "a dict holds the key twice, or two keys that print alike, as 1 and '1' do"
			if prev.slashed || slashed {
				why = "a key containing '/' gives the name a nested container gives too"
			}
			return fmt.Errorf("two tensors are named %q (%s): graphdiff cannot tell which one is meant", name, why)
		}
		f.leaves[name] = ptLeaf{x, slashed}
	case *types.Dict:
		if o, ok := optimizerOf(x, name, &f.optBudget); ok {
			f.optims = append(f.optims, o)
		}
		for _, e := range *x {
			held(e.Value, e.Key)
			if err := walk(e.Value, e.Key); err != nil {
				return err
			}
		}
	case *types.OrderedDict:
		for el := x.List.Front(); el != nil; el = el.Next() {
			e, ok := el.Value.(*types.OrderedDictEntry)
			if !ok {
				continue
			}
			held(e.Value, e.Key)
			if err := walk(e.Value, e.Key); err != nil {
				return err
			}
		}
	case *types.List:
		for i, e := range *x {
			if err := walk(e, i); err != nil {
				return err
			}
		}
	case *types.Tuple:
		for i := 0; i < x.Len(); i++ {
			if err := walk(x.Get(i), i); err != nil {
				return err
			}
		}
	}
	if len(td.names) > 0 && len(td.names) == n {
		f.dicts = append(f.dicts, td)
	}
	return nil
}

// ptJoin is the name ptWalk gives what a container named name holds
// under key: the two joined with '/', key alone at the top.
func ptJoin(name string, key any) string {
	if name == "" {
		return fmt.Sprint(key)
	}
	return name + "/" + fmt.Sprint(key)
}

// ptFound is what ptWalk collects: the tensors by name and, for
// ptMoments, the dicts whose values are all tensors (state_dicts) and the
// optimizers' state dicts, in the order met; optBudget bounds what
// reading the optimizers visits (optimizerOf), apart from the walk's own.
type ptFound struct {
	leaves    map[string]ptLeaf
	dicts     []tensorDict
	optims    []optimizerDict
	optBudget int
}

// maxByteOrder caps what is read of the byteorder record: "little" or
// "big", anything longer is refused.
const maxByteOrder = 16

// ptByteOrder reads the archive's byteorder record f (nil when it has
// none) and reports whether its storages are big-endian. torch.save has
// written the record since PyTorch 2.1: sys.byteorder of the machine that
// saved, "little" or "big", and torch.load byte-swaps the storages of a
// file from a machine of the other order. Without the record (older
// files) storages are little-endian, as torch.load takes them; any other
// value is refused, as torch.load refuses it.
func ptByteOrder(f *zip.File) (bigEndian bool, err error) {
	if f == nil {
		return false, nil
	}
	rc, err := f.Open()
	if err != nil {
		return false, fmt.Errorf("byteorder record: %w", err)
	}
	defer rc.Close()
	order, err := io.ReadAll(io.LimitReader(rc, maxByteOrder+1))
	if err != nil {
		return false, fmt.Errorf("byteorder record: %w", err)
	}
	switch string(order) {
	case "little":
		return false, nil
	case "big":
		return true, nil
	}
	shown := string(order)
	if len(order) > maxByteOrder {
		shown = string(order[:maxByteOrder]) + "..."
	}
	return false, fmt.Errorf("byteorder record %q is neither \"little\" nor \"big\": the storages' byte order is unknown (torch.load refuses it too)", shown)
}

// ptTensorOf describes one saved tensor and where its bytes are; a
// multi-byte dtype's are big-endian when bigEndian is set.
func ptTensorOf(p *ptTensor, name string, entries map[string]*zip.File, prefix string, bigEndian bool, open opener, size int64, path string) (*Tensor, error) {
	fail := func(format string, args ...any) (*Tensor, error) {
		return nil, &Error{Path: path, Member: name, Err: fmt.Errorf(format, args...)}
	}
	dt := p.storage.dtype
	es := int64(dt.Size())
	f := entries[prefix+"data/"+p.storage.key]
	if f == nil {
		return fail("storage %q missing from the archive", p.storage.key)
	}
	if f.Method != zip.Store {
		return fail("storage %q is compressed; torch.save stores storages uncompressed", p.storage.key)
	}
	base, err := f.DataOffset()
	if err != nil {
		return fail("storage %q: %v", p.storage.key, err)
	}
	stored := int64(f.UncompressedSize64)
	if base < 0 || stored < 0 || stored > size-base || stored%es != 0 {
		return fail("storage %q: bad entry size %d", p.storage.key, stored)
	}
	n, _, err := elementCount(p.size, dt.Size())
	if err != nil {
		return fail("%v", err)
	}
	t := &Tensor{Name: name, Path: path, Member: name, DType: dt, Shape: p.size, Descr: dt.String(),
		BigEndian: bigEndian && dt.Size() > 1}
	// the last storage element the view touches, every step checked
	// against the storage (strides that overflow are refused, not wrapped)
	elems := stored / es
	if p.offset > elems {
		return fail("offset %d beyond a storage of %d elements", p.offset, elems)
	}
	last := p.offset
	for i, d := range p.size {
		if n > 0 && d > 1 && p.stride[i] > 0 {
			if p.stride[i] > (elems-1-last)/int64(d-1) {
				return fail("strides %v of shape %v reach beyond a storage of %d elements", p.stride, p.size, elems)
			}
			last += int64(d-1) * p.stride[i]
		}
	}
	if n > 0 && last >= elems {
		return fail("view reaches element %d of a storage of %d", last, elems)
	}
	if n > elems && n > maxViewElems {
		return fail("a view of %d elements repeats a storage of %d (stride 0, as expand() makes) beyond %d elements: save it with .contiguous()", n, elems, maxViewElems)
	}
	switch {
	case n == 0 || contiguous(p.size, p.stride, false):
		t.data = dataRef{open: open, offset: base + p.offset*es, size: n * es}
	case contiguous(p.size, p.stride, true):
		t.FortranOrder = true
		t.data = dataRef{open: open, offset: base + p.offset*es, size: n * es}
	default:
		stride, shape, off := p.stride, p.size, p.offset
		t.data = dataRef{size: n * es, stream: func() (io.ReadCloser, error) {
			return gatherStrided(open, base+off*es, shape, stride, es, n)
		}}
	}
	return t, nil
}

// contiguous reports whether strides lay out shape densely in C order (or
// Fortran order); dimensions of size 1 may have any stride.
func contiguous(shape []int, stride []int64, fortran bool) bool {
	want := int64(1)
	for k := range shape {
		i := len(shape) - 1 - k
		if fortran {
			i = k
		}
		if shape[i] != 1 && stride[i] != want {
			return false
		}
		want *= int64(shape[i])
	}
	return true
}

// gatherStrided returns the n elements of a view (of element size es,
// starting at byte off of the file) in C order, read through a window of
// at most stridedWindow bytes of the storage: a view that repeats its
// storage (stride 0, expand) or skips through a large one is streamed,
// never held whole.
func gatherStrided(open opener, off int64, shape []int, stride []int64, es, n int64) (io.ReadCloser, error) {
	ra, closer, err := open()
	if err != nil {
		return nil, err
	}
	return &stridedReader{ra: ra, closer: closer, base: off, shape: shape, stride: stride, es: es,
		idx: make([]int, len(shape)), left: n}, nil
}

// stridedWindow is how much of a storage a strided view keeps in memory.
const stridedWindow = 1 << 20

type stridedReader struct {
	ra                 io.ReaderAt
	closer             io.Closer
	base               int64
	shape              []int
	stride             []int64
	es                 int64
	idx                []int
	left               int64
	window             []byte
	windowStart        int64
	pending            []byte // the rest of an element split across reads
	windowBuf, elemBuf []byte
}

func (s *stridedReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(s.pending) > 0 {
			c := copy(p[n:], s.pending)
			s.pending, n = s.pending[c:], n+c
			continue
		}
		if s.left == 0 {
			if n > 0 {
				return n, nil
			}
			return 0, io.EOF
		}
		var pos int64
		for d, i := range s.idx {
			pos += int64(i) * s.stride[d]
		}
		at := s.base + pos*s.es
		// a run along the last dimension, element by element while whole
		// elements fit in p and stay in the window
		if last := len(s.idx) - 1; last >= 0 && len(p)-n >= int(s.es) && at >= s.windowStart && at+s.es <= s.windowStart+int64(len(s.window)) {
			step := s.stride[last] * s.es
			// whole elements of this run that fit in p and in what is left
			k := min(int64(s.shape[last]-s.idx[last]), s.left, int64(len(p)-n)/s.es)
			switch {
			case step == 0: // a repeated element (expand): copy it, then double the copies
				first := n
				n += copy(p[n:], s.window[at-s.windowStart:at-s.windowStart+s.es])
				for end := first + int(k*s.es); n < end; {
					n += copy(p[n:end], p[first:n])
				}
				s.idx[last] += int(k)
				s.left -= k
			case step == s.es && at+k*s.es <= s.windowStart+int64(len(s.window)): // dense along the run
				n += copy(p[n:], s.window[at-s.windowStart:at-s.windowStart+k*s.es])
				s.idx[last] += int(k)
				s.left -= k
			default:
				for s.idx[last] < s.shape[last] && s.left > 0 && len(p)-n >= int(s.es) &&
					at >= s.windowStart && at+s.es <= s.windowStart+int64(len(s.window)) {
					n += copy(p[n:], s.window[at-s.windowStart:at-s.windowStart+s.es])
					at += step
					s.idx[last]++
					s.left--
				}
			}
			if s.idx[last] == s.shape[last] {
				s.idx[last] = 0
				for d := last - 1; d >= 0; d-- {
					if s.idx[d]++; s.idx[d] < s.shape[d] {
						break
					}
					s.idx[d] = 0
				}
			}
			continue
		}
		if at < s.windowStart || at+s.es > s.windowStart+int64(len(s.window)) {
			if s.windowBuf == nil {
				s.windowBuf = make([]byte, stridedWindow)
			}
			m, err := s.ra.ReadAt(s.windowBuf, at)
			if m < int(s.es) {
				if err == nil || errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return n, err
			}
			s.window, s.windowStart = s.windowBuf[:m], at
		}
		elem := s.window[at-s.windowStart : at-s.windowStart+s.es]
		if c := copy(p[n:], elem); c < len(elem) {
			s.elemBuf = append(s.elemBuf[:0], elem[c:]...)
			s.pending = s.elemBuf
			n += c
		} else {
			n += c
		}
		for d := len(s.idx) - 1; d >= 0; d-- {
			if s.idx[d]++; s.idx[d] < s.shape[d] {
				break
			}
			s.idx[d] = 0
		}
		s.left--
	}
	return n, nil
}

func (s *stridedReader) Close() error { return s.closer.Close() }
