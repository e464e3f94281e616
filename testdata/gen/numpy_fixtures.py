#!/usr/bin/python3
"""Generate the numpy-made test fixtures for graphdiff.

Run from the repository root with Debian's numpy:

    /usr/bin/python3 testdata/gen/numpy_fixtures.py

Written with Python 3.11.2 and numpy 1.24.2 (the version is also recorded in
testdata/npy/expected.json and testdata/npz/expected.json).

What it writes (it owns these four directories and deletes and recreates them
on every run; nothing else is touched):

  testdata/npy/   valid .npy files: one per dtype (little-endian, C order,
                  format 1.0), big-endian copies (*_be.npy), Fortran-order
                  files, format 2.0 / 3.0 files, 0-d and empty arrays, a
                  1.2 MB array for streaming tests and its bfloat16 rounding
                  (bf16_big.npy, raw '|V2'); plus expected.json with
                  descr, dtype, shape, fortran_order, version and values of
                  each file.
  testdata/npz/   stored.npz (np.savez) and deflated.npz
                  (np.savez_compressed) with the same five members; plus
                  expected.json.
  testdata/bad/   malformed or unsupported .npy/.npz files, each derived from
                  a numpy-written file, plus README.md (one line per file).
  testdata/runs/  dump trees for discovery tests: runs/tree/, runs/flat/ and
                  runs/README.md with the expected discovery result.

Rules followed:
  * every .npy/.npz comes from numpy (np.save, np.lib.format.write_array,
    np.savez, np.savez_compressed); "bad" files are numpy-written files that
    are then corrupted programmatically (each corruption is described in a
    comment and in testdata/bad/README.md);
  * deterministic: fixed values, no randomness. Zips written here with
    zipfile use an explicit 2020-01-01 00:00:00 timestamp; np.savez members
    get ZipInfo's default 1980-01-01 00:00:00 on Python 3.11, and
    fixed_zip_clock pins the clock in case another Python version stamps the
    current time. Two runs give byte-identical output.

Encoding of "values" in the expected.json files: the array flattened in C
order; floats as JSON numbers (exact repr, -0.0 kept), nan/inf/-inf as the
strings "nan", "inf", "-inf"; ints as exact JSON ints; bool as 0/1; complex as
[re, im] pairs with the same rules per component.
"""

import ast
import contextlib
import io
import json
import math
import os
import re
import shutil
import struct
import sys
import types
import zipfile

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TESTDATA = os.path.join(ROOT, "testdata")
NPY_DIR = os.path.join(TESTDATA, "npy")
NPZ_DIR = os.path.join(TESTDATA, "npz")
BAD_DIR = os.path.join(TESTDATA, "bad")
RUNS_DIR = os.path.join(TESTDATA, "runs")
# Directories this script recreates whole. testdata/bad/ and testdata/runs/
# are shared with gpu_fixtures.py, so there only this script's own files
# are removed (see clean_shared).
OWNED_DIRS = [NPY_DIR, NPZ_DIR, os.path.join(RUNS_DIR, "tree"), os.path.join(RUNS_DIR, "flat")]

MAGIC = b"\x93NUMPY"
FIXED_DATE_TIME = (2020, 1, 1, 0, 0, 0)


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

@contextlib.contextmanager
def fixed_zip_clock():
    """Defensive: make zipfile use FIXED_DATE_TIME wherever it reads the clock.

    On Python 3.11, ZipFile.open(name, "w") (used by np.savez and
    np.savez_compressed) builds ZipInfo(name), whose date_time defaults to
    1980-01-01, so this shim changes nothing there; it only matters if a
    zipfile version stamps time.localtime(time.time()) instead. We swap the
    module's `time` reference for a shim and restore it afterwards.
    """
    real_time = zipfile.time
    shim = types.SimpleNamespace(
        time=lambda: 0.0,
        localtime=lambda *a: FIXED_DATE_TIME + (2, 1, -1),
    )
    zipfile.time = shim
    try:
        yield
    finally:
        zipfile.time = real_time


def write_bytes(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def npy_bytes(arr, version=None, allow_pickle=False):
    """Bytes of a .npy file as written by numpy."""
    buf = io.BytesIO()
    if version is None:
        np.save(buf, arr, allow_pickle=allow_pickle)
    else:
        np.lib.format.write_array(buf, arr, version=version, allow_pickle=allow_pickle)
    return buf.getvalue()


def save_npy(path, arr, version=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if version is None:
        np.save(path, arr, allow_pickle=False)
    else:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, arr, version=version, allow_pickle=False)


def split_npy(data):
    """Return (version, header_len_field_size, header_text, data_offset)."""
    assert data[:6] == MAGIC, data[:8]
    major = data[6]
    if major == 1:
        (hlen,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (hlen,) = struct.unpack("<I", data[8:12])
        start = 12
    enc = "utf8" if major == 3 else "latin1"
    text = data[start:start + hlen].decode(enc)
    return (major, data[7]), start, text, start + hlen


def read_header(path):
    """Read the header back: numpy's own reader for 1.0/2.0, literal_eval for 3.0."""
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            shape = fortran = dtype = None
    # Parse the raw dict ourselves as well, to get the exact descr text.
    _, _, text, _ = split_npy(read_bytes(path))
    d = ast.literal_eval(text)
    if shape is not None:
        assert tuple(d["shape"]) == tuple(shape) and d["fortran_order"] == fortran
        assert np.dtype(np.lib.format.descr_to_dtype(d["descr"])) == dtype
    return version, d


def rewrite_header(data, new_dict_text):
    """Replace the header dict text of a numpy-written .npy, keeping its length.

    The header is <dict text><spaces>\\n; the new dict text is padded with
    spaces before the final newline so the header-length field, the total
    header size and the data offset all stay unchanged.
    """
    version, start, text, data_off = split_npy(data)
    hlen = data_off - start
    assert text.endswith("\n")
    if len(new_dict_text) + 1 > hlen:
        raise ValueError("new header text does not fit: %r" % new_dict_text)
    new_text = new_dict_text + " " * (hlen - 1 - len(new_dict_text)) + "\n"
    enc = "utf8" if version[0] == 3 else "latin1"
    new = new_text.encode(enc)
    assert len(new) == hlen
    return data[:start] + new + data[data_off:]


def enc_float(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def enc_values(arr):
    flat = np.asarray(arr).flatten(order="C")
    kind = flat.dtype.kind
    if kind == "b":
        return [1 if bool(v) else 0 for v in flat]
    if kind in "iu":
        return [int(v) for v in flat]
    if kind == "f":
        return [enc_float(v) for v in flat]
    if kind == "c":
        return [[enc_float(v.real), enc_float(v.imag)] for v in flat]
    raise TypeError(flat.dtype)


def dump_json(path, obj):
    text = json.dumps(obj, indent=1, allow_nan=False) + "\n"
    write_bytes(path, text.encode("utf8"))
    return text


# --------------------------------------------------------------------------
# 1. testdata/npy
# --------------------------------------------------------------------------

def int_edges(t, extra=()):
    info = np.iinfo(t)
    vals = [info.min, info.max, 0, 1] + list(extra)
    if info.min < 0:
        vals += [-1]
    return np.array(vals, dtype=t)


def float_edges(t):
    fi = np.finfo(t)
    vals = [0.0, -0.0, 1.5, -2.25, fi.smallest_subnormal, fi.max, np.nan,
            np.inf, -np.inf, -fi.max, fi.tiny, 0.1]
    return np.array(vals, dtype=t)


def complex_edges(t):
    ft = np.float32 if t == np.complex64 else np.float64
    fi = np.finfo(ft)
    pairs = [(1.0, 2.0), (-0.0, 0.0), (0.0, -0.0), (np.nan, 1.0), (1.0, np.nan),
             (np.inf, -np.inf), (-2.25, 1.5), (fi.smallest_subnormal, fi.max)]
    arr = np.zeros(len(pairs), dtype=t)
    # set components separately so signed zeros / nans survive exactly
    arr.real = np.array([p[0] for p in pairs], dtype=ft)
    arr.imag = np.array([p[1] for p in pairs], dtype=ft)
    return arr


def gen_npy():
    files = []  # (name, array, version)

    base = {
        "bool": np.array([True, False, False, True, True], dtype=np.bool_),
        "i1": int_edges(np.int8, [42, -42]),
        "i2": int_edges(np.int16, [1000, -1000]),
        "i4": int_edges(np.int32, [123456789]),
        "i8": int_edges(np.int64, [2 ** 53 + 1, -(2 ** 53 + 1)]),
        "u1": int_edges(np.uint8, [200]),
        "u2": int_edges(np.uint16, [40000]),
        "u4": int_edges(np.uint32, [3000000000]),
        "u8": int_edges(np.uint64, [2 ** 53 + 1, 2 ** 63]),
        "f2": float_edges(np.float16),
        "f4": float_edges(np.float32).reshape(2, 6),
        "f8": float_edges(np.float64),
        "c8": complex_edges(np.complex64),
        "c16": complex_edges(np.complex128),
    }
    for name, arr in base.items():
        files.append((name + ".npy", arr, None))

    for name in ["i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"]:
        arr = base[name]
        be = arr.astype(arr.dtype.newbyteorder(">"))
        assert be.dtype.str.startswith(">")
        files.append((name + "_be.npy", be, None))

    f4_23 = np.array([[0.0, -0.0, 1.5], [-2.25, np.nan, np.inf]], dtype=np.float32)
    files.append(("f4_fortran.npy",
                  np.asfortranarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 0.5 - 3),
                  None))
    # the same values in C order, to compare against the Fortran-order file
    files.append(("f4_corder.npy",
                  np.ascontiguousarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 0.5 - 3),
                  None))
    files.append(("i2_fortran.npy",
                  np.asfortranarray(np.array([[1, -2], [3, -4], [32767, -32768]], dtype=np.int16)),
                  None))
    files.append(("f4_2x3.npy", f4_23, None))
    files.append(("f4_v2.npy", f4_23, (2, 0)))
    files.append(("f4_v3.npy", f4_23, (3, 0)))
    files.append(("f4_scalar.npy", np.array(np.float32(3.5)), None))
    files.append(("i8_scalar.npy", np.array(np.int64(-(2 ** 63))), None))
    files.append(("f4_empty.npy", np.zeros((0,), dtype=np.float32), None))
    files.append(("f8_empty3d.npy", np.zeros((3, 0, 2), dtype=np.float64), None))
    big = np.arange(300000, dtype=np.float32).reshape(1000, 300) * np.float32(0.5) - np.float32(1000)
    assert big.dtype == np.float32
    files.append(("f4_big.npy", big, None))
    # the same values rounded to bfloat16 (to nearest, ties to even, on the
    # bit patterns) and saved as numpy's raw 2-byte dtype, as ml_dtypes
    # saves bfloat16: against f4_big.npy, a float32 vs bfloat16 pair large
    # enough to be memory-mapped, where small values are equal and larger
    # ones differ by up to half a bfloat16 step
    bits = big.view(np.uint32)
    big16 = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16).view("V2")
    files.append(("bf16_big.npy", big16, None))

    entries = []
    for name, arr, version in files:
        path = os.path.join(NPY_DIR, name)
        save_npy(path, arr, version)
        raw = read_bytes(path)
        if version == (2, 0):
            assert raw.startswith(b"\x93NUMPY\x02\x00"), raw[:8]
        elif version == (3, 0):
            assert raw.startswith(b"\x93NUMPY\x03\x00"), raw[:8]
        else:
            assert raw.startswith(b"\x93NUMPY\x01\x00"), raw[:8]
        ver, hdr = read_header(path)
        back = np.load(path, allow_pickle=False)
        assert back.dtype == arr.dtype and back.shape == arr.shape
        assert np.array_equal(back, arr, equal_nan=arr.dtype.kind in "fc")
        if name.endswith("_fortran.npy"):
            assert hdr["fortran_order"] is True
        e = {
            "file": name,
            "descr": hdr["descr"],
            "dtype": arr.dtype.name,
            "shape": list(hdr["shape"]),
            "fortran_order": hdr["fortran_order"],
            "version": list(ver),
        }
        if name in ("f4_big.npy", "bf16_big.npy"):
            vals = big if name == "f4_big.npy" else \
                (big16.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
            f64 = vals.astype(np.float64).ravel()
            e["values"] = None
            if name == "bf16_big.npy":
                e["dtype"] = "bfloat16"  # what the raw 2-byte elements hold (numpy: void16)
            e["sum"] = math.fsum(f64.tolist())
            assert e["sum"] == float(f64.sum())
            e["min"] = float(vals.min())
            e["max"] = float(vals.max())
        else:
            e["values"] = enc_values(arr)
        entries.append(e)

    text = dump_json(os.path.join(NPY_DIR, "expected.json"),
                     {"numpy_version": np.__version__, "files": entries})
    assert "-0.0" in text and '"nan"' in text and '"-inf"' in text
    assert "18446744073709551615" in text and "-9223372036854775808" in text


# --------------------------------------------------------------------------
# 2. testdata/npz
# --------------------------------------------------------------------------

def npz_members():
    return {
        "loss": np.array(np.float32(0.25)),
        "grads/fc1.weight": np.arange(12, dtype=np.float32).reshape(4, 3) * np.float32(0.1),
        "params/fc1.weight": (np.arange(12).reshape(4, 3) * 0.25 - 1).astype(np.float16),
        "step_count": np.array([7], dtype=np.int64),
        "mask": np.array([True, False, True, True, False]),
    }


def gen_npz():
    os.makedirs(NPZ_DIR, exist_ok=True)
    members = npz_members()
    out = {"numpy_version": np.__version__, "archives": []}
    for fname, saver, ctype in [("stored.npz", np.savez, zipfile.ZIP_STORED),
                                ("deflated.npz", np.savez_compressed, zipfile.ZIP_DEFLATED)]:
        path = os.path.join(NPZ_DIR, fname)
        with fixed_zip_clock():
            saver(path, **members)
        mlist = []
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            assert [i.filename for i in infos] == [k + ".npy" for k in members]
            for info in infos:
                assert info.compress_type == ctype, (fname, info.filename, info.compress_type)
                raw = z.read(info)
                _, _, text, _ = split_npy(raw)
                hdr = ast.literal_eval(text)
                arr = members[info.filename[:-4]]
                back = np.load(io.BytesIO(raw))
                assert back.dtype == arr.dtype and np.array_equal(back, arr)
                mlist.append({
                    "member": info.filename,
                    "descr": hdr["descr"],
                    "dtype": arr.dtype.name,
                    "shape": list(hdr["shape"]),
                    "fortran_order": hdr["fortran_order"],
                    "values": enc_values(arr),
                })
        out["archives"].append({"file": fname, "members": mlist})
    dump_json(os.path.join(NPZ_DIR, "expected.json"), out)


# --------------------------------------------------------------------------
# 3. testdata/bad
# --------------------------------------------------------------------------

def zip_with(members, compress_type):
    """A zip written by Python's zipfile with fixed timestamps."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members:
            zi = zipfile.ZipInfo(name, date_time=FIXED_DATE_TIME)
            zi.compress_type = compress_type
            zi.external_attr = 0o644 << 16
            z.writestr(zi, data)
    return buf.getvalue()


def gen_bad():
    os.makedirs(BAD_DIR, exist_ok=True)
    readme = []

    def put(name, data, why):
        write_bytes(os.path.join(BAD_DIR, name), data)
        readme.append("- `%s` (%d bytes): %s" % (name, len(data), why))

    f4_3 = npy_bytes(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    f4_10 = npy_bytes(np.arange(10, dtype=np.float32))
    f4_12 = npy_bytes(np.arange(12, dtype=np.float32).reshape(3, 4))
    f4_100 = npy_bytes(np.arange(100, dtype=np.float32))

    # empty.npy: zero bytes written directly.
    put("empty.npy", b"", "zero bytes.")

    # short_preamble.npy: first 8 bytes (magic + version) of a valid f4 file.
    put("short_preamble.npy", f4_3[:8],
        "only the first 8 bytes (magic + version) of a valid np.save f4 file; "
        "no header-length field.")

    # bad_magic.npy: first byte \x93 replaced by \x00.
    put("bad_magic.npy", b"\x00" + f4_3[1:],
        "valid np.save f4 (3,) file with its first byte (\\x93) replaced by \\x00.")

    # bad_version.npy: major version byte (offset 6) set to 9.
    d = bytearray(f4_3)
    d[6] = 9
    put("bad_version.npy", bytes(d),
        "valid np.save f4 (3,) file with the major version byte (offset 6) set to 9.")

    # truncated.npy: last 7 bytes cut off.
    put("truncated.npy", f4_100[:-7],
        "valid np.save f4 (100,) file with its last 7 bytes cut off (data 7 bytes short).")

    # trailing_bytes.npy: 5 extra bytes appended.
    put("trailing_bytes.npy", f4_3 + b"\x01\x02\x03\x04\x05",
        "valid np.save f4 (3,) file with 5 extra bytes (01 02 03 04 05) appended.")

    # header_past_end.npy: v1.0 header-length field (offsets 8-9, <u2) := 60000.
    d = bytearray(f4_3)
    assert d[6] == 1
    d[8:10] = struct.pack("<H", 60000)
    put("header_past_end.npy", bytes(d),
        "valid v1.0 f4 (3,) file whose 2-byte little-endian header-length field "
        "(offset 8) is patched to 60000; the file is only %d bytes." % len(d))

    # header_huge_v2.npy: v2.0 header-length field (offsets 8-11, <u4) := 0xFFFFFFF0.
    v2 = npy_bytes(np.array([1.0, 2.0, 3.0], dtype=np.float32), version=(2, 0))
    assert v2.startswith(b"\x93NUMPY\x02\x00")
    d = bytearray(v2)
    d[8:12] = struct.pack("<I", 0xFFFFFFF0)
    put("header_huge_v2.npy", bytes(d),
        "valid v2.0 f4 (3,) file (write_array version=(2,0)) whose 4-byte header-length "
        "field (offset 8) is patched to 0xFFFFFFF0.")

    # The following rewrite the header dict text of a valid file, padding with
    # spaces before the final newline so the header length is unchanged.
    put("shape_overflow.npy",
        rewrite_header(f4_10, "{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (4294967296, 4294967296, 4294967296), }"),
        "np.save f4 (10,) file whose header shape is rewritten to "
        "(4294967296, 4294967296, 4294967296) (element count overflows 64 bits); "
        "header length kept by re-padding.")
    put("shape_mismatch.npy",
        rewrite_header(f4_10, "{'descr': '<f4', 'fortran_order': False, 'shape': (100,), }"),
        "np.save f4 (10,) file (40 data bytes) whose header shape is rewritten to (100,).")
    put("negative_shape.npy",
        rewrite_header(f4_12, "{'descr': '<f4', 'fortran_order': False, 'shape': (-3, 4), }"),
        "np.save f4 (3,4) file whose header shape is rewritten to (-3, 4).")
    put("float_shape.npy",
        rewrite_header(f4_12, "{'descr': '<f4', 'fortran_order': False, 'shape': (2.5, 4), }"),
        "np.save f4 (3,4) file whose header shape is rewritten to (2.5, 4).")
    put("unknown_dtype.npy",
        rewrite_header(f4_3, "{'descr': '<f3', 'fortran_order': False, 'shape': (3,), }"),
        "np.save f4 (3,) file whose header descr is rewritten to '<f3'.")
    put("header_syntax.npy",
        rewrite_header(f4_3, "{'descr': '<f4', 'fortran_order': Flase, 'shape': (3,), }"),
        "np.save f4 (3,) file whose header reads `'fortran_order': Flase` "
        "(not a valid Python literal).")
    put("missing_key.npy",
        rewrite_header(f4_3, "{'descr': '<f4', 'shape': (3,), }"),
        "np.save f4 (3,) file whose header dict is rewritten without the 'fortran_order' key.")

    # Valid numpy files with dtypes graphdiff does not support.
    put("object.npy", npy_bytes(np.array([{"a": 1}, None], dtype=object), allow_pickle=True),
        "np.save(allow_pickle=True) of np.array([{'a': 1}, None], dtype=object): "
        "descr '|O', the data is a pickle.")
    put("structured.npy",
        npy_bytes(np.array([(1.5, 2), (-3.0, 4)], dtype=[("a", "<f4"), ("b", "<i4")])),
        "np.save of a structured array, dtype [('a','<f4'),('b','<i4')] "
        "(descr is a list, not a string).")
    put("unicode.npy", npy_bytes(np.array(["ab", "cd"])),
        "np.save of np.array(['ab','cd']): descr '<U2'.")
    put("datetime.npy", npy_bytes(np.array(["2020-01-01"], dtype="datetime64[D]")),
        "np.save of np.array(['2020-01-01'], dtype='datetime64[D]'): descr '<M8[D]'.")

    # not_a_zip.npz: a plain .npy under an .npz name.
    put("not_a_zip.npz", f4_3,
        "the bytes of a valid np.save f4 (3,) .npy file under an .npz name (no zip).")

    # truncated.npz: valid np.savez archive with the last 40 bytes cut.
    buf = io.BytesIO()
    with fixed_zip_clock():
        np.savez(buf, a=np.arange(10, dtype=np.float32), b=np.ones(3, dtype=np.float64))
    full = buf.getvalue()
    put("truncated.npz", full[:-40],
        "valid np.savez archive (members a.npy, b.npy) with its last 40 bytes cut "
        "(end-of-central-directory record and part of the central directory gone).")

    # not_npy_member.npz: zipfile archive with a.npy (np.save into BytesIO) and readme.txt.
    put("not_npy_member.npz",
        zip_with([("a.npy", npy_bytes(np.arange(4, dtype=np.float32))),
                  ("readme.txt", b"this member is not a .npy file\n")], zipfile.ZIP_STORED),
        "zip written by zipfile (ZIP_STORED) holding a valid a.npy (np.save of f4 (4,)) "
        "and a non-npy member readme.txt.")

    # bomb.npz: 16 MB of zeros deflated to a few KB; declared uncompressed size
    # patched to 1000 in both the local file header (offset 22) and the central
    # directory entry (offset 24). CRC left as is.
    zeros = npy_bytes(np.zeros(4_000_000, dtype=np.float32))
    data = bytearray(zip_with([("a.npy", zeros)], zipfile.ZIP_DEFLATED))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        info = z.infolist()[0]
        lho = info.header_offset
        assert info.file_size == len(zeros) and info.file_size < 0xFFFFFFFF
    assert data[lho:lho + 4] == b"PK\x03\x04"
    assert struct.unpack("<I", data[lho + 22:lho + 26])[0] == len(zeros)
    data[lho + 22:lho + 26] = struct.pack("<I", 1000)
    cdo = data.rfind(b"PK\x01\x02")
    assert cdo > 0 and struct.unpack("<I", data[cdo + 24:cdo + 28])[0] == len(zeros)
    data[cdo + 24:cdo + 28] = struct.pack("<I", 1000)
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        assert z.infolist()[0].file_size == 1000
    assert len(data) < 50_000
    put("bomb.npz", bytes(data),
        "zipfile ZIP_DEFLATED archive with a.npy = np.save(np.zeros(4_000_000, f4)) "
        "(%d bytes inflating to %d); the uncompressed size in both the local header and "
        "the central directory is patched to 1000 (CRC unchanged)." % (len(data), len(zeros)))

    # bomb_header.npz: honest zip, but the member's npy header claims shape (2**40,).
    small = npy_bytes(np.zeros(4, dtype=np.float32))
    lying = rewrite_header(small, "{'descr': '<f4', 'fortran_order': False, "
                                  "'shape': (1099511627776,), }")
    put("bomb_header.npz", zip_with([("a.npy", lying)], zipfile.ZIP_DEFLATED),
        "zipfile ZIP_DEFLATED archive, honest sizes, holding a.npy = np.save of f4 (4,) "
        "whose header shape is rewritten to (1099511627776,) (2**40 elements, 16 data bytes).")

    # corrupt_deflate.npz: np.savez_compressed, 16 bytes in the middle of the
    # first member's compressed data overwritten with 0xFF.
    buf = io.BytesIO()
    with fixed_zip_clock():
        np.savez_compressed(buf, a=np.arange(1000, dtype=np.float32),
                            b=np.arange(5, dtype=np.int64))
    data = bytearray(buf.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        info = z.infolist()[0]
    lho = info.header_offset
    assert data[lho:lho + 4] == b"PK\x03\x04"
    nlen, elen = struct.unpack("<HH", data[lho + 26:lho + 30])
    start = lho + 30 + nlen + elen
    assert info.compress_size > 64
    mid = start + info.compress_size // 2 - 8
    data[mid:mid + 16] = b"\xff" * 16
    put("corrupt_deflate.npz", bytes(data),
        "np.savez_compressed archive (a.npy = arange(1000) f4, b.npy) where 16 bytes in the "
        "middle of a.npy's %d bytes of deflate data (file offset %d) are overwritten "
        "with 0xFF." % (info.compress_size, mid))

    # sanity: numpy refuses these (not negative_shape.npy: numpy 1.24 reads it
    # as (3, 4), since it reshapes with -3 treated as an unknown dimension)
    for name in ["empty.npy", "short_preamble.npy", "bad_magic.npy", "bad_version.npy",
                 "truncated.npy", "header_past_end.npy", "header_huge_v2.npy",
                 "float_shape.npy", "unknown_dtype.npy",
                 "header_syntax.npy", "missing_key.npy", "shape_mismatch.npy"]:
        try:
            np.load(os.path.join(BAD_DIR, name), allow_pickle=False)
        except Exception:
            pass
        else:
            raise AssertionError("numpy loaded bad file " + name)

    text = ("# Malformed and unsupported inputs\n\n"
            "Generated by `testdata/gen/numpy_fixtures.py` (numpy %s); every file is derived "
            "from bytes written by numpy (or numpy inside Python's zipfile). Do not edit by "
            "hand.\n\n" % np.__version__) + "\n".join(readme) + "\n"
    write_bytes(os.path.join(BAD_DIR, "README.md"), text.encode("utf8"))


# --------------------------------------------------------------------------
# 4. testdata/runs
# --------------------------------------------------------------------------

def f32(*vals):
    return np.array(vals, dtype=np.float32)


def gen_runs():
    tree = os.path.join(RUNS_DIR, "tree")
    flat = os.path.join(RUNS_DIR, "flat")

    def s(root, rel, arr):
        save_npy(os.path.join(root, rel), arr)

    manifest = {
        "graphdiff_manifest": 1,
        "run": {"name": "tree", "graphed": False, "torch_version": "numpy-only fixture",
                "compute_dtype": "float32"},
        "tensors": [{"path": "step_000000/grads/fc1.weight.npy", "dtype": "bfloat16"}],
    }
    dump_json(os.path.join(tree, "manifest.json"), manifest)
    for step in (0, 1):
        d = "step_%06d" % step
        k = np.float32(step)
        s(tree, d + "/loss.npy", np.array(np.float32(2.5) - k))
        s(tree, d + "/grads/fc1.weight.npy",
          np.arange(6, dtype=np.float32).reshape(2, 3) * np.float32(0.125) + k)
        s(tree, d + "/params/fc1.weight.npy",
          np.arange(6, dtype=np.float32).reshape(2, 3) * np.float32(-0.5) + k)
        s(tree, d + "/inputs/x.npy", f32(1.0, 2.0, 3.0, 4.0) + k)
    with fixed_zip_clock():
        np.savez(os.path.join(tree, "step_000001/state.npz"),
                 **{"fc2.weight": f32(0.5, -0.5, 1.0, -1.0).reshape(2, 2),
                    "fc2.bias": f32(0.25, -0.25)})
    s(tree, "step_2/loss.npy", np.array(np.float32(0.75)))
    s(tree, "iter3/loss.npy", np.array(np.float32(0.5)))
    s(tree, "losses.npy", f32(2.5, 1.5, 0.75, 0.5))
    s(tree, "rank_0/step_000000/grads/w.npy", f32(0.0, -1.0, 2.0))
    s(tree, "params/layer1/w.npy", f32(1.0, 1.0, 2.0, 3.0).reshape(2, 2))
    write_bytes(os.path.join(tree, "notes.txt"),
                b"Not a tensor: discovery must ignore this file.\n")

    s(flat, "loss_step0.npy", np.array(np.float32(2.5)))
    s(flat, "loss_step1.npy", np.array(np.float32(1.5)))
    for i in range(3):
        s(flat, "fc1.weight.%d.npy" % i, f32(1.0, 2.0, 3.0) * np.float32(i + 1))
    s(flat, "layer_0.npy", f32(4.0, 5.0))
    s(flat, "bias-iter7.npy", f32(0.125))

    readme = """# Dump trees for discovery tests

Generated by `testdata/gen/numpy_fixtures.py` (numpy %s). All tensors are
tiny float32 arrays written by np.save / np.savez.

Discovery rules these trees exercise:

* A directory directly under the run root whose name ends in an integer is a
  step (`step_000000` -> 0, `step_2` -> 2, `iter3` -> 3). Shard directories
  (`rank_N`, `rankN`, `tpN_ppM`) are not steps; they become part of the name,
  and a step directory directly under them is a step.
* A file stem ending in `step`/`iter`/`it`, an optional separator and an
  integer gives name + step (`loss_step1` -> `loss`, 1); the separator before
  `step`/`iter`/`it` is dropped from the name.
* A bare numeric suffix after `.`, `_` or `-` (`fc1.weight.2`) is a step only
  when the same base name occurs with at least two different numbers in the
  same directory.
* Names are the path relative to the step directory (or to the run root when
  there is no step directory), with shard directories prefixed, without `.npy`.
  A `.npz` member is named `<container dir relative to step>/<container stem>/<member
  without .npy>`.
* Kind comes from the `/`-separated components of the name: loss/losses ->
  loss; grad/grads/gradient/gradients -> grad; param/params/parameter/
  parameters/weight/weights -> param; input/inputs -> input; output/outputs/
  activation/activations -> output; else tensor. (`fc1.weight` is one
  component, not `weight`, so it does not make a name a param by itself.)
* Non-tensor files (`notes.txt`, `manifest.json`) are not tensors;
  `manifest.json` is the run manifest.

## tree/

`manifest.json` declares run name `tree`, graphed false, compute dtype
float32, and that `step_000000/grads/fc1.weight.npy` was bfloat16 originally.

| file | name | step | kind |
|---|---|---|---|
| `step_000000/loss.npy` | `loss` | 0 | loss |
| `step_000000/grads/fc1.weight.npy` | `grads/fc1.weight` | 0 | grad |
| `step_000000/params/fc1.weight.npy` | `params/fc1.weight` | 0 | param |
| `step_000000/inputs/x.npy` | `inputs/x` | 0 | input |
| `step_000001/loss.npy` | `loss` | 1 | loss |
| `step_000001/grads/fc1.weight.npy` | `grads/fc1.weight` | 1 | grad |
| `step_000001/params/fc1.weight.npy` | `params/fc1.weight` | 1 | param |
| `step_000001/inputs/x.npy` | `inputs/x` | 1 | input |
| `step_000001/state.npz` member `fc2.weight.npy` | `state/fc2.weight` | 1 | tensor |
| `step_000001/state.npz` member `fc2.bias.npy` | `state/fc2.bias` | 1 | tensor |
| `step_2/loss.npy` | `loss` | 2 | loss |
| `iter3/loss.npy` | `loss` | 3 | loss |
| `losses.npy` | `losses` | none | loss |
| `rank_0/step_000000/grads/w.npy` | `rank_0/grads/w` | 0 | grad |
| `params/layer1/w.npy` | `params/layer1/w` | none | param |
| `notes.txt` | ignored | | |
| `manifest.json` | manifest, not a tensor | | |

So the tree has 15 tensors: `loss` at steps 0, 1, 2, 3; `grads/fc1.weight`,
`params/fc1.weight`, `inputs/x` at steps 0, 1; `state/fc2.weight`,
`state/fc2.bias` at step 1; `rank_0/grads/w` at step 0; and the step-less
`losses` and `params/layer1/w` (`params` does not end in an integer, and
`layer1` is not directly under the run root, so neither is a step).

## flat/

No step directories; steps come from file names.

| file | name | step | kind |
|---|---|---|---|
| `loss_step0.npy` | `loss` | 0 | loss |
| `loss_step1.npy` | `loss` | 1 | loss |
| `fc1.weight.0.npy` | `fc1.weight` | 0 | tensor |
| `fc1.weight.1.npy` | `fc1.weight` | 1 | tensor |
| `fc1.weight.2.npy` | `fc1.weight` | 2 | tensor |
| `layer_0.npy` | `layer_0` | none | tensor |
| `bias-iter7.npy` | `bias` | 7 | tensor |

`layer_0` keeps its suffix because no other `layer_N` exists in the directory.
""" % np.__version__
    write_bytes(os.path.join(RUNS_DIR, "README.md"), readme.encode("utf8"))


# --------------------------------------------------------------------------

def our_bad_files():
    """The files of the shared bad/ directory that this script wrote: its
    README.md and the files that README lists. The other generators' files
    there (gpu_fixtures.py's, torch_fixtures.py's, hostile_fixtures.py's
    files and runs/) are left alone."""
    readme = os.path.join(BAD_DIR, "README.md")
    if not os.path.exists(readme):
        return []
    with open(readme, encoding="utf8") as f:
        listed = re.findall(r"^- `([^`]+)`", f.read(), re.M)
    return ["README.md"] + listed


def clean_shared():
    for name in our_bad_files():
        path = os.path.join(BAD_DIR, name)
        if os.path.isfile(path):
            os.remove(path)
    readme = os.path.join(RUNS_DIR, "README.md")
    if os.path.exists(readme):
        os.remove(readme)


def main():
    if not np.__version__.startswith("1.24"):
        print("warning: fixtures were made with numpy 1.24.x, this is %s" % np.__version__,
              file=sys.stderr)
    for d in OWNED_DIRS:
        if os.path.isdir(d):
            shutil.rmtree(d)
    clean_shared()
    gen_npy()
    gen_npz()
    gen_bad()
    gen_runs()
    total = 0
    for d in OWNED_DIRS:
        for dp, _, fns in os.walk(d):
            total += sum(os.path.getsize(os.path.join(dp, f)) for f in fns)
    total += sum(os.path.getsize(os.path.join(BAD_DIR, f)) for f in our_bad_files())
    assert total < 3_000_000, total
    print("wrote fixtures under %s (%d bytes)" % (TESTDATA, total))


if __name__ == "__main__":
    main()
