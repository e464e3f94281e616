package loaders

import (
	"fmt"
	"slices"
	"strings"
)

// Rename maps tensor names of the first run to those of the second, for
// runs that name some tensors differently (a layer renamed between them):
// Old and New are whole '/'-separated components of a name, one or more
// (fc.weight, or encoder/fc.weight). A name holding Old as a run of whole
// components has that run replaced by New: fc.weight=fc1.weight renames
// params/fc.weight to params/fc1.weight, grads/fc.weight to
// grads/fc1.weight, and leaves params/fc.weight_scale as it is.
type Rename struct{ Old, New string }

// String returns the rename as --rename takes it, OLD=NEW.
func (r Rename) String() string { return r.Old + "=" + r.New }

// ParseRename parses OLD=NEW. Both sides must be names: not empty, no
// leading, trailing or doubled '/', and different.
func ParseRename(s string) (Rename, error) {
	old, to, ok := strings.Cut(s, "=")
	if !ok {
		return Rename{}, fmt.Errorf("%q: want OLD=NEW, e.g. fc.weight=fc1.weight", s)
	}
	r := Rename{Old: old, New: to}
	for _, side := range []string{old, to} {
		if side == "" || slices.Contains(strings.Split(side, "/"), "") {
			return Rename{}, fmt.Errorf("%q: want OLD=NEW, each a tensor name or whole components of one (no empty component), e.g. fc.weight=fc1.weight", s)
		}
		if err := checkName(side); err != nil {
			return Rename{}, fmt.Errorf("%q: %w", s, err)
		}
	}
	if old == to {
		return Rename{}, fmt.Errorf("%q: the two names are the same", s)
	}
	return r, nil
}

// Apply returns name with the first run of whole components equal to
// r.Old replaced by r.New, and whether it held one.
func (r Rename) Apply(name string) (string, bool) {
	for i := 0; i <= len(name)-len(r.Old); {
		j := strings.Index(name[i:], r.Old)
		if j < 0 {
			break
		}
		start, end := i+j, i+j+len(r.Old)
		if (start == 0 || name[start-1] == '/') && (end == len(name) || name[end] == '/') {
			return name[:start] + r.New + name[end:], true
		}
		i = start + 1
	}
	return name, false
}

// Renamed is what RenameEntries did: each rename given and how many of
// the run's tensors it renamed, in the order given.
type Renamed struct {
	Rename
	Tensors int
}

// RenameCollision is the error of RenameEntries for a rename that gives
// two tensors of a run one name at one step: Renamed was renamed by
// Rename to the name Other has (or is renamed to as well).
type RenameCollision struct {
	Rename         Rename
	Renamed, Other string
	To             string
	Step           int
}

func (e *RenameCollision) Error() string {
	return fmt.Sprintf("%s and %s would both be %s%s", e.Other, e.Renamed, e.To, stepSuffix(e.Step))
}

// RenameEntries renames the tensors of run r (its entries and its
// unreadable tensors) by renames, each name by the first rename that
// applies to it, and returns how many tensors each renamed. A tensor's
// kind is the new name's (KindOf) unless a manifest set it. It fails,
// leaving r as it was, when two tensors of one step would then have one
// name. The entries stay in their order (Less).
func RenameEntries(r *Run, renames []Rename) ([]Renamed, error) {
	out := make([]Renamed, len(renames))
	for i, rn := range renames {
		out[i].Rename = rn
	}
	if len(renames) == 0 {
		return out, nil
	}
	// rename returns name renamed, its kind, and which rename did it (-1:
	// none)
	rename := func(name string, kind Kind) (string, Kind, int) {
		for i, rn := range renames {
			if to, ok := rn.Apply(name); ok {
				if kind == KindOf(name) {
					kind = KindOf(to)
				}
				return to, kind, i
			}
		}
		return name, kind, -1
	}
	names := make([]string, len(r.Entries))
	kinds := make([]Kind, len(r.Entries))
	type origin struct {
		name string
		by   int
	}
	seen := make(map[stepName]origin, len(r.Entries))
	counts := make([]int, len(renames))
	for i, e := range r.Entries {
		var by int
		names[i], kinds[i], by = rename(e.Name, e.Kind)
		key := stepName{e.Step, names[i]}
		if prev, dup := seen[key]; dup {
			if by < 0 {
				by, prev.name, e = prev.by, e.Name, &Entry{Name: prev.name}
			}
			return nil, &RenameCollision{Rename: renames[by], Renamed: e.Name, Other: prev.name, To: names[i], Step: key.step}
		}
		seen[key] = origin{e.Name, by}
		if by >= 0 {
			counts[by]++
		}
	}
	for i := range out {
		out[i].Tensors = counts[i]
	}
	for i, e := range r.Entries {
		e.Name, e.Kind = names[i], kinds[i]
	}
	for _, u := range r.Unreadable {
		u.Name, u.Kind, _ = rename(u.Name, u.Kind)
	}
	slices.SortStableFunc(r.Entries, func(a, b *Entry) int {
		switch {
		case Less(a, b):
			return -1
		case Less(b, a):
			return 1
		}
		return 0
	})
	return out, nil
}

// RenameFor returns the rename that maps name a of the first run to name
// b of the second with the fewest components: the components the two do
// not share at their ends, fc.weight=fc1.weight for params/fc.weight and
// params/fc1.weight; where one name holds nothing the other does not
// (params/w against params/enc/w), the shared last components join both
// sides (w=enc/w). Applied to a it gives b.
func RenameFor(a, b string) Rename {
	ca, cb := strings.Split(a, "/"), strings.Split(b, "/")
	pre := 0
	for pre < len(ca) && pre < len(cb) && ca[pre] == cb[pre] {
		pre++
	}
	suf := 0
	for suf < len(ca)-pre && suf < len(cb)-pre && ca[len(ca)-1-suf] == cb[len(cb)-1-suf] {
		suf++
	}
	for suf > 0 && (len(ca)-pre-suf == 0 || len(cb)-pre-suf == 0) {
		suf-- // a side with nothing of its own takes a shared component
	}
	for pre > 0 && (len(ca)-pre-suf == 0 || len(cb)-pre-suf == 0) {
		pre--
	}
	r := Rename{Old: strings.Join(ca[pre:len(ca)-suf], "/"), New: strings.Join(cb[pre:len(cb)-suf], "/")}
	if to, ok := r.Apply(a); !ok || to != b {
		return Rename{Old: a, New: b} // the shorter form means something else in a
	}
	return r
}
