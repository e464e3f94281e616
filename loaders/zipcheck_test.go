package loaders

import (
	"archive/zip"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAmbiguousZip opens the archives that Python's zipfile (np.load) or
// PyTorch read otherwise than archive/zip, and checks that each is refused
// whole, with an error naming the file and the disagreement; and that
// archive/zip alone does list them as the generator's notes say, so that
// the refusal is what stands between the user and the wrong tensors.
func TestAmbiguousZip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file   string
		want   string   // in the error message
		goList []string // what archive/zip alone lists
	}{
		{"npz_two_directories.npz",
			"ambiguous zip archive: its zip64 and classic end records name different central directories (numpy would read other members)",
			[]string{"a.npy"}},
		{"npz_two_directories_same_fields.npz",
			"ambiguous zip archive: graphdiff and numpy would read different central directories (at offsets 199 and 471)",
			[]string{"a.npy"}},
		{"npz_local_name_differs.npz",
			`ambiguous zip archive: member "a.npy" has a local header that names "b.npy" (Python's zipfile, which np.load uses, refuses such an archive)`,
			[]string{"a.npy", "b.npy"}},
		{"pt_two_directories.pt",
			"ambiguous zip archive: its zip64 and classic end records name different central directories (PyTorch would read other members)",
			[]string{"archive/data.pkl", "archive/data/0", "archive/version"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			path := fixture("bad", tc.file)
			ts, errs, err := OpenFile(path, Options{})
			var le *Error
			if !errors.As(err, &le) || le.Path != path || le.Member != "" {
				t.Fatalf("error %v (%T) does not name %s alone", err, err, path)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if len(ts)+len(errs) > 0 {
				t.Errorf("%d tensors and %d member errors from a refused archive", len(ts), len(errs))
			}
			zr, err := zip.OpenReader(path)
			if err != nil {
				t.Fatal(err)
			}
			defer zr.Close()
			var names []string
			for _, f := range zr.File {
				names = append(names, f.Name)
			}
			if !slices.Equal(names, tc.goList) {
				t.Errorf("archive/zip lists %q, want %q", names, tc.goList)
			}
		})
	}
}

// TestValidArchivesAreNotAmbiguous opens every .npz and torch.save file of
// the valid fixtures (written by np.savez, np.savez_compressed and
// torch.save, the corpus and scenarios included) and an archive written by
// Go's own zip.Writer (data descriptors after each member): none is
// refused.
func TestValidArchivesAreNotAmbiguous(t *testing.T) {
	t.Parallel()
	n := 0
	err := filepath.WalkDir(fixture(), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "bad" {
			return filepath.SkipDir
		}
		if f := FormatOf(path); d.IsDir() || f != FormatNPZ && f != FormatPT || isRNGState(d.Name()) {
			return nil // (generators' states are not read: discovery passes them over)
		}
		n++
		if _, _, err := OpenFile(path, Options{}); err != nil {
			t.Errorf("%v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Errorf("only %d archives found under %s", n, fixture())
	}

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"f4.npy", "f8.npy"} {
		data, err := os.ReadFile(fixture("npy", name))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	ts, errs, err := OpenBytes(buf.Bytes(), "go.npz", FormatNPZ, Options{})
	if err != nil || len(errs) > 0 || len(ts) != 2 {
		t.Errorf("archive written by zip.Writer: %d tensors, %v %v", len(ts), err, errs)
	}
}
