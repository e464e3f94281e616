package loaders

import (
	"errors"
	"strings"
	"testing"
)

// TestBadInput opens each malformed file in testdata/bad and checks that the
// problem is reported as an *Error naming the file with a message that says
// what is wrong: no panic, no allocation from the file's word, and for
// containers, the readable members still listed.
func TestBadInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file string
		want string // in the error message
		ok   int    // tensors still readable from the file
	}{
		{"empty.npy", "empty file", 0},
		{"short_preamble.npy", "ends inside the .npy preamble", 0},
		{"bad_magic.npy", "not an .npy file", 0},
		{"bad_version.npy", "unsupported .npy format version 9.0", 0},
		{"truncated.npy", "needs 400 data bytes but the file holds 393", 0},
		{"trailing_bytes.npy", "needs 12 data bytes but the file holds 17", 0},
		{"header_past_end.npy", "header length 60000 runs past the end of the file", 0},
		{"header_huge_v2.npy", "header length 4294967280 runs past the end of the file", 0},
		{"shape_overflow.npy", "more elements than fit in 64 bits", 0},
		{"shape_mismatch.npy", "shape (100,) of <f4 needs 400 data bytes but the file holds 40", 0},
		{"negative_shape.npy", "shape entry 0 is negative (-3)", 0},
		{"float_shape.npy", "is not an integer", 0},
		{"unknown_dtype.npy", `unsupported dtype "<f3"`, 0},
		{"header_syntax.npy", `unexpected "Flase`, 0},
		{"missing_key.npy", "exactly the keys 'descr', 'fortran_order' and 'shape'", 0},
		{"object.npy", "graphdiff never unpickles", 0},
		{"structured.npy", "structured dtype", 0},
		{"unicode.npy", `string dtype "<U2"`, 0},
		{"datetime.npy", "datetime dtype", 0},
		{"not_a_zip.npz", "not a readable .npz (zip) archive", 0},
		{"truncated.npz", "not a readable .npz (zip) archive", 0},
		{"not_npy_member.npz", "readme.txt: member is not an .npy array", 1},
		{"bomb.npz", "needs 16000000 data bytes but the member holds 872", 0},
		{"bomb_header.npz", "needs 4398046511104 data bytes but the member holds 16", 0},
		{"st_empty.safetensors", "too short for a .safetensors header", 0},
		{"st_short.safetensors", "too short for a .safetensors header", 0},
		{"st_header_huge.safetensors", "header length 1152921504606846976 runs past the end", 0},
		{"st_header_past_end.safetensors", "runs past the end of the file", 0},
		{"st_bad_json.safetensors", "header is not a JSON object", 0},
		{"st_overlap.safetensors", "overlap", 0},
		{"st_offsets_past_end.safetensors", "run past the end of the data", 0},
		{"st_shape_mismatch.safetensors", "shape (5, 4) of F32 needs 80 bytes but data_offsets span 64", 0},
		{"st_negative_shape.safetensors", "is not a non-negative integer", 0},
		{"st_unknown_dtype.safetensors", `unsupported dtype "F12"`, 0},
		{"st_truncated.safetensors", "run past the end of the data", 0},
		{"st_duplicate_key.safetensors", `header gives the key "w" twice: a JSON reader keeps only one of the two`, 0},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) { runBadCase(t, tc.file, tc.want, tc.ok) })
	}
}

func runBadCase(t *testing.T, file, want string, ok int) {
	path := fixture("bad", file)
	ts, memberErrs, err := OpenFile(path, Options{})
	if err == nil && len(memberErrs) > 0 {
		err = memberErrs[0]
	}
	if err == nil {
		// Some damage only shows when the data is read.
		for _, tn := range ts {
			if r, e := tn.Open(); e != nil {
				err = e
			} else {
				buf := make([]float64, 1024)
				for e == nil {
					_, e = r.Read(buf)
				}
				r.Close()
				if !strings.Contains(e.Error(), "EOF") {
					err = e
				}
			}
		}
	}
	if err == nil {
		t.Fatalf("no error")
	}
	var le *Error
	if !errors.As(err, &le) || le.Path != path {
		t.Errorf("error %v (%T) does not name %s", err, err, path)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if len(ts) != ok {
		t.Errorf("%d readable tensors, want %d", len(ts), ok)
	}
}

// TestCorruptDeflate reads an archive whose first member's compressed data
// was overwritten: the damaged member fails when read, with the member
// named, and the other member is still read.
func TestCorruptDeflate(t *testing.T) {
	t.Parallel()
	path := fixture("bad", "corrupt_deflate.npz")
	ts, errs, err := OpenFile(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	failed, read := 0, 0
	for _, e := range errs {
		t.Logf("listing error: %v", e)
		failed++
	}
	for _, tn := range ts {
		r, err := tn.Open()
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]float64, 1<<10)
		for err == nil {
			_, err = r.Read(buf)
		}
		r.Close()
		if strings.Contains(err.Error(), "EOF") {
			read++
			continue
		}
		failed++
		if !strings.Contains(err.Error(), path+": "+tn.Member+": ") {
			t.Errorf("error %q does not name file and member", err)
		}
	}
	if failed != 1 || read != 1 {
		t.Errorf("%d failed, %d read; want 1 and 1", failed, read)
	}
}
