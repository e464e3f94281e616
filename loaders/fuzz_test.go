package loaders

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The fuzz targets feed arbitrary bytes to each parser and read whatever it
// accepts to the end. They check that nothing panics, that every failure is
// an *Error, and that an accepted tensor yields exactly Len() elements.
// Seeds are the fixture files under testdata (valid and malformed); inputs
// that once failed are kept by go test in testdata/fuzz/<target>.

func addSeeds(f *testing.F, patterns ...string) {
	addSeedsCut(f, func(b []byte) []byte { return b }, patterns...)
}

// seedRecords is how many lines or records of a long curve file a seed
// keeps: the fuzzer minimizes every new input it finds, which takes minutes
// for a 40 KB seed and leaves no time to fuzz.
const seedRecords = 16

// maxSeed is the largest seed kept, for the same reason.
const maxSeed = 64 << 10

// firstLines cuts text after seedRecords lines.
func firstLines(b []byte) []byte {
	for i, n := 0, 0; i < len(b); i++ {
		if b[i] == '\n' {
			if n++; n == seedRecords {
				return b[:i+1]
			}
		}
	}
	return b
}

// firstRecords cuts a TFRecord file after seedRecords records (8-byte
// length, 4-byte CRC, data, 4-byte CRC).
func firstRecords(b []byte) []byte {
	off := 0
	for n := 0; n < seedRecords && off+12 <= len(b); n++ {
		size := int(binary.LittleEndian.Uint64(b[off:]))
		if size < 0 || size > len(b)-off-16 {
			break
		}
		off += 16 + size
	}
	return b[:off]
}

func addSeedsCut(f *testing.F, cut func([]byte) []byte, patterns ...string) {
	n := 0
	for _, p := range patterns {
		files, err := filepath.Glob(fixture(p))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			if data = cut(data); len(data) > maxSeed {
				continue // covered by the bad-input corpus test instead
			}
			f.Add(data)
			n++
		}
	}
	if n == 0 {
		f.Fatalf("no seeds for %v", patterns)
	}
}

func fuzzFormat(t *testing.T, data []byte, format Format) {
	ts, memberErrs, err := OpenBytes(data, "fuzz", format, Options{V1: Float8E4M3FN})
	for _, e := range append(memberErrs, err) {
		var le *Error
		if e != nil && !errors.As(e, &le) {
			t.Fatalf("error %v is a %T, not an *Error", e, e)
		}
	}
	// an optimizer's moment names a parameter of its own shape in the file
	shapes := map[string][]int{}
	for _, tn := range ts {
		shapes[tn.Name] = tn.Shape
	}
	for _, tn := range ts {
		m := tn.Moment
		if m.Known() && !strings.HasSuffix(tn.Name, "/exp_avg") && !strings.HasSuffix(tn.Name, "/momentum_buffer") {
			t.Fatalf("%s: a moment (%v) of no moment's name", tn.Name, m)
		}
		if shape, ok := shapes[m.Param]; m.Param != "" && (!ok || !slices.Equal(shape, tn.Shape)) {
			t.Fatalf("%s %v: its parameter %q is no tensor of its shape (%v, %v)", tn.Name, tn.Shape, m.Param, shape, ok)
		}
	}
	buf := make([]float64, 4096)
	for _, tn := range ts {
		if tn.Size() > int64(len(data))*1100 && tn.Len() > maxViewElems {
			// A deflated member can expand about 1000-fold at most, a
			// view repeating its storage to maxViewElems elements.
			t.Fatalf("tensor of %d bytes from %d input bytes", tn.Size(), len(data))
		}
		r, err := tn.Open()
		if err != nil {
			continue
		}
		values := int64(0)
		for {
			n, err := r.Read(buf)
			values += int64(n)
			if errors.Is(err, io.EOF) {
				if want := tn.Len() * int64(tn.DType.Components()); values != want {
					t.Fatalf("read %d values, want %d", values, want)
				}
				break
			}
			if err != nil {
				var le *Error
				if !errors.As(err, &le) {
					t.Fatalf("read error %v is a %T", err, err)
				}
				break
			}
		}
		r.Close()
	}
}

func FuzzNPY(f *testing.F) {
	addSeeds(f, "npy/*.npy", "bad/*.npy", "dtypes/float8_*_bits.npy")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFormat(t, data, FormatNPY) })
}

func FuzzNPZ(f *testing.F) {
	addSeeds(f, "npz/*.npz", "bad/*.npz", "runs/tree/step_000001/state.npz")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFormat(t, data, FormatNPZ) })
}

func FuzzSafetensors(f *testing.F) {
	addSeeds(f, "safetensors/*.safetensors", "bad/st_*.safetensors")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFormat(t, data, FormatSafetensors) })
}

// FuzzManifest checks that any manifest text is accepted or refused with an
// error, never a panic.
func FuzzManifest(f *testing.F) {
	addSeeds(f, "runs/*/manifest.json", "runs/*/*/manifest.json", "bad/runs/*/manifest.json")
	f.Fuzz(func(t *testing.T, data []byte) { _, _ = ParseManifest(data) })
}

// The curve readers get the same treatment: any bytes are read or refused
// with an *Error, and an accepted curve has strictly increasing steps and
// one value per step.

func checkCurve(t *testing.T, c *Curve, err error) {
	if err != nil {
		var le *Error
		if !errors.As(err, &le) {
			t.Fatalf("error %v is a %T", err, err)
		}
		return
	}
	if len(c.Steps) != len(c.Values) {
		t.Fatalf("%d steps, %d values", len(c.Steps), len(c.Values))
	}
	for i := 1; i < len(c.Steps); i++ {
		if c.Steps[i] <= c.Steps[i-1] {
			t.Fatalf("steps not increasing at %d: %v", i, c.Steps[i-1:i+1])
		}
	}
}

func FuzzCSVCurve(f *testing.F) {
	addSeedsCut(f, firstLines, "curves/*/*/loss.csv", "bad/curve_*.csv")
	f.Add([]byte("epoch,step,train_loss\n0,0,\n0,1,0.5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseCSVCurve(bytes.NewReader(data), "fuzz.csv", "")
		checkCurve(t, c, err)
	})
}

func FuzzJSONLCurve(f *testing.F) {
	addSeedsCut(f, firstLines, "curves/*/*/loss.jsonl", "bad/curve_*.jsonl")
	f.Add([]byte("{\"step\": 1, \"loss\": NaN}\n{\"iteration\": 2.0, \"train_loss\": -Infinity}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseJSONLCurve(bytes.NewReader(data), "fuzz.jsonl", "")
		checkCurve(t, c, err)
	})
}

func FuzzTFEvents(f *testing.F) {
	addSeedsCut(f, firstRecords, "curves/*/*/tb/*", "curves/*/*/tb_tensor/*", "bad/tb_*")
	f.Fuzz(func(t *testing.T, data []byte) {
		scalars, _, err := parseTFEvents(bytes.NewReader(data), int64(len(data)), "fuzz.tfevents")
		if err != nil {
			var le *Error
			if !errors.As(err, &le) {
				t.Fatalf("error %v is a %T", err, err)
			}
		}
		if len(scalars) > len(data)/8 {
			t.Fatalf("%d scalars from %d bytes", len(scalars), len(data))
		}
	})
}

// FuzzResolve checks that a run read a step at a time reads any .npy file
// as Load does: Resolve of a deferred entry gives the description OpenFile
// gives, or the same error, and the same values, whether the file is small
// enough to be held in memory or read through its kept descriptor; and
// that the walk tells Options.Found of the one file.
func FuzzResolve(f *testing.F) {
	for _, p := range []string{"npy/*.npy", "bad/*.npy", "dtypes/float8_*_bits.npy"} {
		files, _ := filepath.Glob(fixture(p))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil && len(data) <= maxSeed {
				f.Add(data, false)
				f.Add(data, true)
			}
		}
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, large bool) {
		if large && len(data) <= heldMax { // the path of files not held
			data = append(data, make([]byte, heldMax+1-len(data))...)
		}
		step := filepath.Join(dir, "step_1")
		if err := os.MkdirAll(step, 0o755); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(step, "x.npy")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		opts := Options{V1: Float8E4M3FN}
		want, _, wantErr := OpenFile(file, opts)
		found := 0
		opts.Found = func(n int) { found += n }
		run, err := LoadDeferred(dir, opts)
		if err != nil || len(run.Entries) != 1 || !run.Entries[0].Deferred() || found != 1 {
			t.Fatalf("LoadDeferred: %v, entries %v, %d files found", err, run.Entries, found)
		}
		e := run.Entries[0]
		gotErr := Resolve(run.Entries)[0]
		defer e.Release()
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("Resolve: error %v; OpenFile: %v", gotErr, wantErr)
		}
		if gotErr != nil {
			return
		}
		w := want[0]
		if e.DType != w.DType || e.Descr != w.Descr || e.FortranOrder != w.FortranOrder || e.BigEndian != w.BigEndian ||
			len(e.Shape) != len(w.Shape) || e.Size() != w.Size() {
			t.Fatalf("Resolve: %s %s %v; OpenFile: %s %s %v", e.Descr, e.DType, e.Shape, w.Descr, w.DType, w.Shape)
		}
		got, gerr := e.Tensor.Values()
		exp, werr := w.Values()
		if (gerr == nil) != (werr == nil) || len(got) != len(exp) {
			t.Fatalf("values: %d (%v) against %d (%v)", len(got), gerr, len(exp), werr)
		}
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(exp[i]) {
				t.Fatalf("value %d: %v against %v", i, got[i], exp[i])
			}
		}
	})
}

// FuzzNPYHeaderText checks that the fast reading of headers as numpy writes
// them (parseCanonical) agrees with the general literal parser on every
// header it accepts. Seeds are the headers of the .npy fixtures.
func FuzzNPYHeaderText(f *testing.F) {
	for _, p := range []string{"npy/*.npy", "bad/*.npy", "dtypes/*.npy"} {
		files, _ := filepath.Glob(fixture(p))
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil || len(data) < 10 || !bytes.HasPrefix(data, npyMagic) {
				continue
			}
			start, n := 10, int(binary.LittleEndian.Uint16(data[8:]))
			if data[6] != 1 && len(data) >= 12 {
				start, n = 12, int(binary.LittleEndian.Uint32(data[8:]))
			}
			if n >= 0 && n <= maxSeed && start+n <= len(data) {
				f.Add(string(data[start : start+n]))
			}
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		descr, fortran, shape, ok := parseCanonical(text)
		if !ok {
			return
		}
		var h npyHeader
		if err := h.parseLiteral(text); err != nil {
			t.Fatalf("read fast as %q %v %v, but the literal parser says: %v", descr, fortran, shape, err)
		}
		if h.Descr != descr || h.Fortran != fortran || !slices.Equal(h.Shape, shape) || shape == nil {
			t.Fatalf("read fast as %q %v %v, by the literal parser as %q %v %v", descr, fortran, shape, h.Descr, h.Fortran, h.Shape)
		}
	})
}
