package loaders

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/graphdiff/graphdiff/internal/parallel"
)

// NoStep is the step of a tensor that belongs to no step.
const NoStep = -1

// Entry is one tensor of a run: what discovery made of its path, and the
// tensor itself.
type Entry struct {
	// Name is the tensor's name inside its step: the path below the step
	// directory without extension, '/'-separated, with shard directories in
	// front ("grads/fc1.weight", "rank_0/loss").
	Name string
	// Step is the training step, or NoStep.
	Step int
	Kind Kind
	// File is the file's path relative to the run root, '/'-separated.
	File string
	*Tensor

	// deferred is set while the file is not read (see LoadDeferred).
	deferred *deferral
}

// Run is a dump directory, or a single file, as discovered.
type Run struct {
	// Root is the path the run was loaded from.
	Root string
	// Manifest is the run's manifest.json, nil when it has none (or when it
	// could not be read; see Errors).
	Manifest *Manifest
	// Entries are the tensors found, sorted by step (step-less first), kind
	// rank and name.
	Entries []*Entry
	// Errors are the files, members and directories that could not be read,
	// each an *Error. They do not stop discovery of the rest.
	Errors []error
	// Unreadable are the tensors discovery could name but not read: an .npy
	// file, or one member of an .npz or torch.save file, that failed. Each
	// one's Err is also in Errors. A container that cannot be opened at all
	// names no tensors and is only in Errors.
	Unreadable []*Unreadable

	// events are the TensorBoard event files the walk found (names that
	// contain "tfevents"), for CurveOf.
	events []string
}

// Unreadable is a tensor that was found but could not be read.
type Unreadable struct {
	Name string
	Step int
	Kind Kind
	// File is the file's path relative to the run root.
	File string
	Err  error
}

// maxDepth caps directory nesting, which also ends symlink cycles that
// escape the loop check (through bind mounts, say).
const maxDepth = 64

// Load discovers the tensors under path: a run directory, or a single
// tensor file. The error is non-nil only when path does not exist or a
// directory cannot be listed; problems with files (path itself included,
// when it is a file) are collected in Run.Errors.
//
// Discovery rules, for a file at RUN/a/b/c.ext:
//   - Files whose extension is .npy, .npz, .safetensors, .pt or .pth are
//     tensors or containers of tensors, and so are .bin files that are
//     torch.save's zip archives (Hugging Face's pytorch_model.bin,
//     Accelerate's optimizer.bin); other files are ignored,
//     manifest.json is the manifest. A torch.save archive that holds no
//     tensor (a scheduler's state, training arguments) lists none.
//     Random generators' states (rng_state*.pth, as Hugging Face's
//     Trainer saves beside each checkpoint) are not read: a graph draws
//     from its generator at capture and advances it by offsets, so those
//     states differ between correct runs, and they are no number of the
//     model.
//   - Shard directories (rank_N, rankN, tpN_ppM, tpN, ppN, dpN...) directly
//     under the root are part of the name: RUN/rank_0/step_3/loss.npy is
//     "rank_0/loss" at step 3.
//   - A directory directly under the root (or under shard directories)
//     whose name ends in an integer is a step: step_000003, step-3, iter3,
//     3. Deeper directories are part of the name (params/layer1/w).
//   - Without a step directory, a file stem ending in a separator, "step",
//     "iter" or "it", an optional separator and an integer names its step:
//     loss_step3 is "loss" at 3. A bare numeric suffix (fc1.weight.3,
//     loss_3) is a step only when the same stem occurs with at least two
//     different numbers in the same directory, so a lone layer_0 keeps its
//     name.
//   - A file stem that is only a step word and a number (step_1000,
//     iter-3, global_step7; stepWords) is that step, alone in its
//     directory or not.
//   - A container's member is named <dirs below the step>/<container
//     stem>/<member>, e.g. step_1/state.npz member fc2.weight.npy is
//     "state/fc2.weight", except in a container whose stem is only its
//     step (step_1000.pt, as a training loop's torch.save writes one per
//     step): its members are named <dirs>/<member>; loading a container
//     file alone names its members by member name only.
//   - The kind comes from the name (KindOf); a manifest entry can override
//     name, step, kind and dtype for a file.
//   - Two files that give the same name and step are an error on the
//     second, never a silent replacement.
//
// Symbolic links are followed; a link back to a directory being walked is
// reported as a loop.
func Load(root string, opts Options) (*Run, error) {
	return load(root, opts, false)
}

// load is Load, and LoadDeferred with deferNPY.
func load(root string, opts Options, deferNPY bool) (*Run, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, &Error{Path: root, Err: unwrapPathError(err)}
	}
	run := &Run{Root: root}
	d := &discovery{run: run, opts: opts, walked: map[any]string{}}
	if deferNPY {
		d.deferral = &deferral{opts: opts}
	}
	if !st.IsDir() {
		if deferNPY && FormatOf(root) == FormatNPY {
			// read now, through the descriptor its data is read with
			name := stem(filepath.Base(root))
			e := deferredEntry(name, NoStep, filepath.Base(root), name, root, d.deferral)
			if err := Resolve([]*Entry{e})[0]; err != nil {
				run.Errors = []error{err}
			} else {
				d.add(e, nil)
			}
			return run, nil
		}
		tensors, errs, err := OpenFile(root, opts)
		if err != nil {
			errs = append(errs, err)
		}
		run.Errors = errs
		for _, t := range tensors {
			d.add(&Entry{Name: t.Name, Step: NoStep, Kind: KindOf(t.Name), File: filepath.Base(root), Tensor: t}, nil)
		}
		d.finish()
		return run, nil
	}
	if m, err := ReadManifest(filepath.Join(root, ManifestName)); err == nil {
		run.Manifest = m
		d.overrides, _ = m.overrides()
		d.namedFiles = map[string]bool{}
		for key := range d.overrides {
			d.namedFiles[key[0]] = true
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		run.Errors = append(run.Errors, err)
	}
	if key, ok := dirKey(st); ok {
		d.walked[key] = root
	}
	if err := d.walk(root, "", []os.FileInfo{st}); err != nil {
		return nil, err
	}
	for key, o := range d.overrides {
		if !o.used {
			where := key[0]
			if key[1] != "" {
				where += " member " + key[1]
			}
			run.Errors = append(run.Errors, &Error{Path: filepath.Join(root, ManifestName),
				Err: fmt.Errorf("manifest lists %s, which is not a tensor in the run", where)})
		}
	}
	d.finish()
	return run, nil
}

type stepName struct {
	step int
	name string
}

type discovery struct {
	run  *Run
	opts Options
	// deferral, when set, lists .npy files by name (LoadDeferred): it is
	// what their entries share until each is read.
	deferral *deferral
	// namedFiles are the files the manifest names.
	namedFiles map[string]bool
	overrides  map[[2]string]*manifestOverride
	// walked holds the directories walked (dirKey): each is walked once,
	// however many symbolic links lead to it.
	walked map[any]string
	// kindSet is true once the manifest set an entry's kind: entries of
	// the same step and name may then sort apart (finish).
	kindSet bool
}

var (
	stepDirRE    = regexp.MustCompile(`^.*?(\d+)$`)
	shardDirRE   = regexp.MustCompile(`^(?i:(rank|local_rank|shard|worker|node)[_-]?\d+|((tp|pp|dp|ep|cp|mp|sp)[_-]?\d+)([_-](tp|pp|dp|ep|cp|mp|sp)[_-]?\d+)*)$`)
	stepSuffixRE = regexp.MustCompile(`^(.+?)[._-](?i:step|iter|it)[._-]?(\d+)$`)
	numSuffixRE  = regexp.MustCompile(`^(.+)[._-](\d+)$`)
	// stepOnlyRE is a stem that is a word and a number: a step when the
	// word is one of stepWords (step_1000, iter3, global_step-7)
	stepOnlyRE = regexp.MustCompile(`^([A-Za-z_]+?)[._-]?(\d+)$`)
)

// walk reads directory dir, at rel below the root, whose ancestors
// (including itself) are stack.
func (d *discovery) walk(dir, rel string, stack []os.FileInfo) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		e := &Error{Path: dir, Err: fmt.Errorf("cannot read directory: %w", unwrapPathError(err))}
		if rel == "" {
			return e
		}
		d.run.Errors = append(d.run.Errors, e)
		return nil
	}
	if len(stack) > maxDepth {
		d.run.Errors = append(d.run.Errors, &Error{Path: dir, Err: fmt.Errorf("directories nest deeper than %d levels", maxDepth)})
		return nil
	}
	var files []string
	clean := filepath.Clean(dir) == dir // below the root, always
	for _, de := range entries {
		name := de.Name()
		// joined only where needed: most entries are tensor files, whose
		// paths addFiles joins
		fullPath := func() string { return joinFile(dir, name, clean) }
		isDir := de.IsDir()
		if de.Type()&fs.ModeSymlink != 0 {
			full := fullPath()
			st, err := os.Stat(full)
			if err != nil {
				d.run.Errors = append(d.run.Errors, &Error{Path: full, Err: fmt.Errorf("broken symbolic link: %w", unwrapPathError(err))})
				continue
			}
			if st.IsDir() {
				if loopsBack(st, stack) {
					d.run.Errors = append(d.run.Errors, &Error{Path: full, Err: errors.New("symbolic link loop: links back to a directory that contains it")})
					continue
				}
				isDir = true
			}
		}
		switch {
		case isDir:
			full := fullPath()
			st, err := os.Stat(full)
			if err != nil {
				d.run.Errors = append(d.run.Errors, &Error{Path: full, Err: unwrapPathError(err)})
				continue
			}
			if key, ok := dirKey(st); ok {
				if first, again := d.walked[key]; again {
					d.run.Errors = append(d.run.Errors, &Error{Path: full, Err: fmt.Errorf("the same directory as %s (through symbolic links): walked once", first)})
					continue
				}
				d.walked[key] = full
			}
			if err := d.walk(full, joinClean(rel, name), append(stack, st)); err != nil {
				return err
			}
		case rel == "" && name == ManifestName:
		case isRNGState(name):
			// a generator's state, not numbers of the model
		case FormatOf(name) == formatBin:
			if isTorchBin(fullPath()) {
				files = append(files, name)
			}
		case FormatOf(name) != "":
			files = append(files, name)
		case strings.Contains(name, "tfevents"):
			d.run.events = append(d.run.events, fullPath())
		}
	}
	if d.opts.Found != nil && len(files) > 0 {
		d.opts.Found(len(files))
	}
	d.addFiles(dir, rel, clean, files)
	return nil
}

func loopsBack(st os.FileInfo, stack []os.FileInfo) bool {
	for _, a := range stack {
		if os.SameFile(st, a) {
			return true
		}
	}
	return false
}

// splitDirs splits a directory path below the root into the shard prefix,
// the step (NoStep when there is no step directory) and the directories
// below the step.
func splitDirs(rel string) (shards []string, step int, below []string) {
	step = NoStep
	if rel == "" {
		return nil, step, nil
	}
	parts := strings.Split(rel, "/")
	i := 0
	for i < len(parts) && shardDirRE.MatchString(parts[i]) {
		i++
	}
	shards = parts[:i]
	if i < len(parts) {
		if m := stepDirRE.FindStringSubmatch(parts[i]); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				return shards, n, parts[i+1:]
			}
		}
	}
	return shards, step, parts[i:]
}

// addFiles turns the tensor files of one directory into entries; clean
// says whether dir is clean (filepath.Clean(dir) == dir).
func (d *discovery) addFiles(dir, rel string, clean bool, files []string) {
	shards, dirStep, below := splitDirs(rel)
	// A bare numeric suffix is a step only if its stem occurs with two or
	// more numbers here.
	numbers := map[string]map[int]bool{}
	if dirStep == NoStep {
		for _, f := range files {
			if m := numSuffixRE.FindStringSubmatch(stem(f)); m != nil {
				if n, err := strconv.Atoi(m[2]); err == nil {
					key := m[1] + filepath.Ext(f)
					if numbers[key] == nil {
						numbers[key] = map[int]bool{}
					}
					numbers[key][n] = true
				}
			}
		}
	}
	found := make([]foundFile, len(files))
	prefix := path.Join(path.Join(shards...), path.Join(below...))
	for i, f := range files {
		name, step := stem(f), dirStep
		if step == NoStep {
			if m := stepSuffixRE.FindStringSubmatch(name); m != nil {
				if n, err := strconv.Atoi(m[2]); err == nil {
					name, step = m[1], n
				}
			} else if m := stepOnlyRE.FindStringSubmatch(name); m != nil && stepWords[strings.ToLower(m[1])] {
				if n, err := strconv.Atoi(m[2]); err == nil {
					name, step = m[1], n // step_1000.pt, alone or not
				}
			} else if m := numSuffixRE.FindStringSubmatch(name); m != nil && len(numbers[m[1]+filepath.Ext(f)]) >= 2 {
				n, _ := strconv.Atoi(m[2])
				name, step = m[1], n
			}
		}
		// rel, name and base are parts of full where they can be: one
		// string per file stays alive, not four
		full := joinFile(dir, f, clean)
		found[i] = foundFile{full: full, rel: joinIn(full, f, rel, f),
			name: joinIn(full, f, prefix, name), base: joinIn(full, f, "", stem(f)), step: step}
		if dirStep == NoStep && step != NoStep && stepWords[strings.ToLower(name)] {
			found[i].members = prefix // step_3.pt: its members are named alone
		} else {
			found[i].members = found[i].name
		}
	}
	d.openAll(found)
	for i := range found {
		d.addFile(&found[i])
	}
}

// foundFile is a tensor file found by the walk, and what opening it gave.
type foundFile struct {
	full, rel, name string
	// members is the name a container's members are named under: name,
	// or the directories above it alone where the file's stem is only a
	// step (step_3.pt, iter-3.npz: the file is the step, not a tensor).
	members  string
	base     string // the file's name without its extension
	step     int
	tensors  []*Tensor
	errs     []error // errors about parts of the file
	err      error   // the file as a whole could not be read
	deferred bool    // not opened (LoadDeferred)
}

// openAll opens the files' headers, several at a time: with thousands of
// small files per step, opening them is most of the work of a load, and
// it waits on the file system more than on the processor.
func (d *discovery) openAll(files []foundFile) {
	parallel.For(len(files), runtime.GOMAXPROCS(0)*openersPerCPU, func(i int) {
		f := &files[i]
		if d.deferral != nil && FormatOf(f.full) == FormatNPY && !d.named(f.rel) {
			f.deferred = true
			return
		}
		f.tensors, f.errs, f.err = OpenFile(f.full, d.fileOptions(f.rel))
	})
}

// named reports whether a manifest entry names the file at rel.
func (d *discovery) named(rel string) bool { return d.namedFiles[rel] }

// openersPerCPU is how many files are opened at once per processor.
const openersPerCPU = 2

// fileOptions returns the options to open the file at rel with: a
// manifest may declare that its float8 data is of one format.
func (d *discovery) fileOptions(rel string) Options {
	opts := d.opts
	for key, o := range d.overrides {
		if key[0] == rel && (o.dtype == Float8E4M3FN || o.dtype == Float8E5M2) {
			opts.V1 = o.dtype
		}
	}
	return opts
}

func stem(file string) string { return strings.TrimSuffix(file, filepath.Ext(file)) }

// stepWords are the file stems that, before the step number that names the
// file's step, only say that the file is one step's dump (step_3.pt,
// iter-3.npz, global_step_1000.safetensors): its members are named alone,
// not under the stem. (A checkpoint's stem, ckpt_1003.pt, says what its
// members are: see KindOf.)
var stepWords = map[string]bool{"step": true, "steps": true, "iter": true, "iteration": true, "it": true,
	"global_step": true, "globalstep": true}

// joinClean is path.Join(dir, name) for a dir that is clean already
// (path.Clean(dir) == dir), without Join's cleaning where there is nothing
// to clean: dir neither "", "." nor ending in '/', and name one element
// other than "." and "..". A run of many small files joins three names per
// file.
func joinClean(dir, name string) string {
	if dir == "" || dir == "." || dir[len(dir)-1] == '/' || name == "" || name == "." || name == ".." ||
		strings.IndexByte(name, '/') >= 0 {
		return path.Join(dir, name)
	}
	return dir + "/" + name
}

// joinIn returns joinClean(dir, x) for an x that begins f, the last
// element of full: the part of full that spells it when full ends with
// dir + "/" + f (or with f, for a dir of "" or "."), a new string
// otherwise.
func joinIn(full, f, dir, x string) string {
	start := len(full) - len(f)
	if !strings.HasPrefix(f, x) || !strings.HasSuffix(full, f) || x == "" || x == "." || x == ".." ||
		strings.IndexByte(x, '/') >= 0 {
		return joinClean(dir, x)
	}
	if dir == "" || dir == "." {
		return full[start : start+len(x)]
	}
	if dir[len(dir)-1] != '/' && start > len(dir) && full[start-1] == '/' && full[start-1-len(dir):start-1] == dir {
		return full[start-1-len(dir) : start+len(x)]
	}
	return joinClean(dir, x)
}

// joinFile is filepath.Join(dir, name), through joinClean where it gives
// the same: dirClean says whether filepath.Clean(dir) == dir.
func joinFile(dir, name string, dirClean bool) string {
	if filepath.Separator != '/' || !dirClean {
		return filepath.Join(dir, name)
	}
	return joinClean(dir, name)
}

// deferredEntry returns the entry of the .npy file full, not read yet
// (LoadDeferred), to be read as d says: its name, step, file (rel) and
// tensor name (base) come from its path. Entry and tensor are one
// allocation: a run may list hundreds of thousands of files.
func deferredEntry(name string, step int, rel, base, full string, d *deferral) *Entry {
	n := &struct {
		e Entry
		t Tensor
	}{
		e: Entry{Name: name, Step: step, Kind: KindOf(name), File: rel, deferred: d},
		t: Tensor{Name: base, Path: full},
	}
	n.e.Tensor = &n.t
	return &n.e
}

// addFile records what opening one file gave, in the order of the walk.
func (d *discovery) addFile(f *foundFile) {
	full, rel, name, step := f.full, f.rel, f.name, f.step
	if f.deferred {
		d.add(deferredEntry(name, step, rel, f.base, full, d.deferral), nil) // no manifest entry names it
		return
	}
	tensors, errs, err := f.tensors, f.errs, f.err
	container := FormatOf(full) != FormatNPY
	unreadable := func(name string, err error) {
		d.run.Unreadable = append(d.run.Unreadable, &Unreadable{Name: name, Step: step, Kind: KindOf(name), File: rel, Err: err})
	}
	if err != nil {
		d.run.Errors = append(d.run.Errors, err)
		if !container {
			unreadable(name, err)
		}
		return
	}
	d.run.Errors = append(d.run.Errors, errs...)
	for _, err := range errs {
		var le *Error
		if errors.As(err, &le) && le.Member != "" && checkName(le.Member) == nil {
			unreadable(path.Join(f.members, strings.TrimSuffix(le.Member, ".npy")), err)
		}
	}
	for _, t := range tensors {
		e := &Entry{Name: name, Step: step, File: rel, Tensor: t}
		if container {
			e.Name = path.Join(f.members, t.Name)
		}
		e.Kind = KindOf(e.Name)
		d.add(e, d.overrides[[2]string{rel, t.Member}])
	}
}

func (d *discovery) add(e *Entry, o *manifestOverride) {
	r := d.run
	if o != nil {
		o.used = true
		if o.name != "" {
			e.Name = o.name
			e.Kind = KindOf(o.name)
		}
		if o.step != nil {
			e.Step = *o.step
		}
		if o.kind != "" {
			e.Kind = o.kind
			d.kindSet = true
		}
		if err := applyDType(e.Tensor, o.dtype); err != nil {
			r.Errors = append(r.Errors, &Error{Path: e.Path, Member: e.Member, Err: err})
			return
		}
	}
	r.Entries = append(r.Entries, e) // dedup drops it if an earlier entry has its step and name
}

// finish puts the run in order once the walk is done: entries without a
// repeated step and name (dedup), sorted (Less), and errors sorted. The
// walk finds most runs in strict order already (steps in directories
// named in order, names sorted in each): checked in one pass, such a run
// needs neither a map of names nor a sort, since a step and name repeated
// would sit side by side. Not where the manifest set a kind: Less orders
// by kind before name, so the same step and name of two kinds sort apart.
func (d *discovery) finish() {
	r := d.run
	if d.kindSet || !inOrder(r.Entries) {
		d.dedup()
		sort.SliceStable(r.Entries, func(i, j int) bool { return Less(r.Entries[i], r.Entries[j]) })
	}
	sort.SliceStable(r.Errors, func(i, j int) bool { return r.Errors[i].Error() < r.Errors[j].Error() })
	matchAcross(r.Entries)
}

// dedup drops each entry whose step and name an earlier entry (in the
// order found) has, with an error naming both files; the map is sized
// once for every entry.
func (d *discovery) dedup() {
	r := d.run
	seen := make(map[stepName]string, len(r.Entries)) // name and step -> file that gave them
	kept := r.Entries[:0]
	for _, e := range r.Entries {
		key := stepName{e.Step, e.Name}
		if prev, dup := seen[key]; dup {
			r.Errors = append(r.Errors, &Error{Path: e.Path, Member: e.Member,
				Err: fmt.Errorf("tensor %q%s also comes from %s; rename one", e.Name, stepSuffix(e.Step), prev)})
			continue
		}
		seen[key] = e.File
		kept = append(kept, e)
	}
	clear(r.Entries[len(kept):])
	r.Entries = kept
}

func stepSuffix(step int) string {
	if step == NoStep {
		return ""
	}
	return fmt.Sprintf(" at step %d", step)
}

// Less orders entries by step (step-less first), kind rank, then name.
func Less(a, b *Entry) bool {
	if a.Step != b.Step {
		return a.Step < b.Step
	}
	if ra, rb := a.Kind.Rank(), b.Kind.Rank(); ra != rb {
		return ra < rb
	}
	return a.Name < b.Name
}

// inOrder reports whether es are in strictly ascending order (Less).
func inOrder(es []*Entry) bool {
	for i := 1; i < len(es); i++ {
		if !Less(es[i-1], es[i]) {
			return false
		}
	}
	return true
}

// isRNGState reports whether a file name is a random generator's state
// saved beside a checkpoint (rng_state.pth, rng_state_3.pth), which
// discovery does not read.
func isRNGState(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), "rng_state") && FormatOf(name) == FormatPT
}
