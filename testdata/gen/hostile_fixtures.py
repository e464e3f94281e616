#!/usr/bin/python3
"""Hostile inputs for graphdiff's bad-input corpus (testdata/bad/).

Every file starts from bytes a real producer wrote (numpy's np.save and
np.savez, torch.save, Python's zipfile, json and pickle modules, the
TensorBoard curve files that testdata/gen/scenarios.py wrote) and is then damaged in one
documented way. numpy_fixtures.py and torch_fixtures.py write the rest of
testdata/bad/; this script only adds the files listed in HOSTILE below and
the run directories under testdata/bad/runs/, and rewrites
testdata/bad/README_hostile.md; and two files that are no bad input:
testdata/pt_views/expand_1gib.pt, a stride-0 view graphdiff reads
(streamed), and testdata/pt_byteorder/, the tensors of two files of
testdata/pt as a big-endian machine saves them (described in
testdata/pt_byteorder/README.md).

Run from the repository root: /usr/bin/python3 testdata/gen/hostile_fixtures.py
"""
import io
import json
import os
import pickle
import shutil
import struct
import zipfile

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BAD = os.path.join(ROOT, "bad")
RUNS = os.path.join(BAD, "runs")
notes = []


def put(name, data, note):
    with open(os.path.join(BAD, name), "wb") as f:
        f.write(data)
    notes.append(f"- `{name}` ({len(data)} bytes): {note}")


def npy(arr):
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


def with_header(data, new_header):
    """Replaces a v1.0 .npy header (keeping the total header length)."""
    hlen = struct.unpack("<H", data[8:10])[0]
    body = data[10 + hlen:]
    h = new_header.encode("latin1")
    total = ((10 + len(h) + 1 + 63) // 64) * 64
    h = h + b" " * (total - 10 - len(h) - 1) + b"\n"
    return data[:8] + struct.pack("<H", len(h)) + h + body


def torch_refuses(z, words):
    """Check that torch.load refuses the bytes z with a RuntimeError whose
    message holds words."""
    import torch
    try:
        torch.load(io.BytesIO(z))
    except RuntimeError as e:
        assert words in str(e), e
        return
    raise AssertionError("torch.load read it")


def zip_bytes(members, compression=zipfile.ZIP_STORED):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", compression) as z:
        for name, data in members:
            z.writestr(zipfile.ZipInfo(name), data, compress_type=compression)
    return b.getvalue()


def gen_npy():
    base = npy(np.arange(12, dtype="<f4").reshape(3, 4))
    put("nan_shape.npy", with_header(base, "{'descr': '<f4', 'fortran_order': False, 'shape': (nan, 4), }"),
        "np.save f4 (3,4) file whose header shape is rewritten to (nan, 4)")
    deep = "(" * 5000 + ")" * 5000
    put("deep_header.npy", with_header(base, "{'descr': '<f4', 'fortran_order': False, 'shape': " + deep + ", }"),
        "np.save f4 (3,4) file whose header shape is rewritten to 5,000 nested empty tuples")
    put("huge_dim.npy", with_header(base, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, ), }"),
        "np.save f4 (3,4) file whose header shape is rewritten to (99999999999999999999999,) (beyond 64 bits)")
    put("nul_in_header.npy", with_header(base, "{'descr': '<f4\x00', 'fortran_order': False, 'shape': (3, 4), }"),
        "np.save f4 (3,4) file whose header descr is rewritten to '<f4' followed by a NUL byte")


def gen_npz():
    a = npy(np.arange(4, dtype="<f4"))
    put("member_dotdot.npz", zip_bytes([("../../evil.npy", a)]),
        "zipfile archive whose only member, a valid np.save f4 (4,), is named ../../evil.npy")
    put("member_absolute.npz", zip_bytes([("/etc/evil.npy", a)]),
        "zipfile archive whose only member, a valid np.save f4 (4,), is named /etc/evil.npy")
    z = zip_bytes([("XX.npy", a)])
    z = z.replace(b"XX.npy", b"\xff\xfe.npy")  # local header and central directory
    put("member_not_utf8.npz", z,
        "zipfile archive whose only member, a valid np.save f4 (4,), is named XX.npy, the name's bytes then patched to ff fe (not UTF-8, no UTF-8 flag)")
    put("member_duplicate.npz", zip_bytes([("a.npy", a), ("a.npy", a)]),
        "zipfile archive with two members both named a.npy (zipfile warns and writes both)")
    inner = zip_bytes([("a.npy", a)])
    put("nested_zip.npz", zip_bytes([("inner.npy", inner)]),
        "zipfile archive whose member inner.npy holds another zip archive, not an .npy file")
    zeros = npy(np.zeros(1 << 20, dtype="<f4"))
    z = bytearray(zip_bytes([("a.npy", zeros)], zipfile.ZIP_DEFLATED))
    # declared uncompressed size patched to 2**32-2 in the local header
    # (offset 22) and the central directory entry: a bomb by declaration
    cd = bytes(z).rfind(b"PK\x01\x02")
    struct.pack_into("<I", z, 22, 0xFFFFFFFE)
    struct.pack_into("<I", z, cd + 24, 0xFFFFFFFE)
    put("bomb_declared.npz", bytes(z),
        "zipfile ZIP_DEFLATED archive of np.save(np.zeros(2**20, f4)) whose uncompressed size is patched to 4294967294 in the local header and the central directory")


def npz_bytes(**arrays):
    b = io.BytesIO()
    np.savez(b, **arrays)
    return b.getvalue()


def gen_zip_ambiguity():
    """Archives that Python's zipfile (np.load) or PyTorch read otherwise
    than Go's archive/zip, which graphdiff lists archives with. This script
    can only check the Python side; the Go side is stated in each note, and
    loaders/zipcheck_test.go checks it."""
    import torch
    # Two np.savez archives one after the other: the first (a.npy) as
    # np.savez writes it, the second (b.npy) with the zip64 end record and
    # locator that zipfile writes for archives of more than 65,535 members
    # (zipfile.ZIP_FILECOUNT_LIMIT set to 0 while np.savez writes it). The
    # second archive's classic end record is then rewritten to name the
    # first archive's central directory; its zip64 end record still names
    # its own. With a.npy longer than b.npy the two records' directory
    # offsets differ; with both of one length they are the same number,
    # but zipfile counts it from the second archive's start (it places a
    # directory just before the end record that names it) and archive/zip
    # from the file's.
    for name, n, which in [("npz_two_directories.npz", 6, "the directory offsets the two records give differ"),
                           ("npz_two_directories_same_fields.npz", 4, "the two records give the same directory offset, "
                            "size and count, but zipfile counts the offset from the second archive's start")]:
        first = npz_bytes(a=np.arange(n, dtype="<f4"))
        limit = zipfile.ZIP_FILECOUNT_LIMIT
        zipfile.ZIP_FILECOUNT_LIMIT = 0
        try:
            second = npz_bytes(b=-np.arange(4, dtype="<f4"))
        finally:
            zipfile.ZIP_FILECOUNT_LIMIT = limit
        assert b"PK\x06\x06" in second and b"PK\x06\x07" in second
        end = first.rfind(b"PK\x05\x06")
        count, size, offset = struct.unpack("<HLL", first[end + 10:end + 20])
        z = bytearray(first + second)
        assert z[-22:-18] == b"PK\x05\x06"
        same = z[-22 + 10:-22 + 20] == first[end + 10:end + 20]
        assert same == (n == 4), (n, same)
        struct.pack_into("<HHLL", z, len(z) - 22 + 8, count, count, size, offset)
        z = bytes(z)
        with zipfile.ZipFile(io.BytesIO(z)) as zf:
            assert zf.namelist() == ["b.npy"], zf.namelist()
        with np.load(io.BytesIO(z)) as npz:
            assert npz.files == ["b"] and (npz["b"] == -np.arange(4)).all()
        put(name, z,
            f"two np.savez archives concatenated: a.npy = arange({n}) f4, then b.npy = -arange(4) f4 with the zip64 end "
            "record and locator zipfile writes (zipfile.ZIP_FILECOUNT_LIMIT set to 0 while np.savez writes it); the "
            f"second's classic end record is rewritten to name the first's central directory ({which}). np.load "
            "(checked here) lists only b.npy, from the zip64 end record; Go's archive/zip, which reads the classic "
            "end record when its fields are not saturated, lists only a.npy")

    z = bytearray(npz_bytes(a=np.arange(4, dtype="<f4"), b=-np.arange(4, dtype="<f4")))
    with zipfile.ZipFile(io.BytesIO(bytes(z))) as zf:
        h = zf.getinfo("a.npy").header_offset
    assert z[h:h + 4] == b"PK\x03\x04" and z[h + 30:h + 35] == b"a.npy"
    z[h + 30:h + 35] = b"b.npy"
    z = bytes(z)
    try:
        with np.load(io.BytesIO(z)) as npz:
            npz["a"]
        raise AssertionError("np.load read a.npy")
    except zipfile.BadZipFile as e:
        assert "differ" in str(e), e
    put("npz_local_name_differs.npz", z,
        "np.savez archive of a.npy = arange(4) f4 and b.npy = -arange(4) f4 whose first local header's file name "
        "a.npy is rewritten to b.npy (the central directory still says a.npy): np.load's zipfile raises BadZipFile "
        "\"File name in directory 'a.npy' and header b'b.npy' differ\" (checked here); Go's archive/zip never reads "
        "a local header's name and reads a.npy")

    # torch.save output whose zip64 end record is rewritten to name only
    # its last central directory entry (archive/version)
    b = io.BytesIO()
    torch.save({"w": torch.arange(4, dtype=torch.float32)}, b)
    z = bytearray(b.getvalue())
    end = len(z) - 22
    assert z[end:end + 4] == b"PK\x05\x06" and z[end - 20:end - 16] == b"PK\x06\x07" and z[end - 76:end - 72] == b"PK\x06\x06"
    size, offset = struct.unpack("<LL", z[end + 12:end + 20])
    last = z.rfind(b"PK\x01\x02", offset, end)
    struct.pack_into("<QQQQ", z, end - 76 + 24, 1, 1, offset + size - last, last)
    z = bytes(z)
    torch_refuses(z, "data.pkl")
    put("pt_two_directories.pt", z,
        "torch.save({'w': arange(4) f4}) output whose zip64 end record is rewritten to name only its last central "
        "directory entry, archive/version: torch.load, whose reader uses the zip64 end record, finds no data.pkl "
        "(checked here); Go's archive/zip reads the classic end record and lists all three members")


def safetensors(header_bytes, data=b""):
    return struct.pack("<Q", len(header_bytes)) + header_bytes + data


def gen_safetensors():
    data = np.arange(4, dtype="<f4").tobytes()
    h = json.dumps({"XX": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    put("st_key_not_utf8.safetensors", safetensors(h.replace(b"XX", b"\xff\xfe"), data),
        "json.dumps header of one F32 [4] tensor named XX, the name's bytes then patched to ff fe (not UTF-8)")
    h = json.dumps({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    put("st_nan_shape.safetensors", safetensors(h.replace(b"[4]", b"[NaN]"), data),
        "json.dumps header of one F32 [4] tensor with the shape patched to [NaN] (not JSON)")
    h = b'{"a": ' + b"[" * 20000 + b"]" * 20000 + b"}"
    put("st_deep_json.safetensors", safetensors(h, data),
        "header that is 20,000 nested JSON arrays under key a")
    h = json.dumps({"a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
                    "b": {"dtype": "F32", "shape": [4], "data_offsets": [16, 18446744073709551615]}}).encode()
    put("st_offset_overflow.safetensors", safetensors(h, data),
        "json.dumps header whose second tensor's end offset is 2**64-1")
    w, v = np.arange(4, dtype="<f4"), -np.arange(4, dtype="<f4")
    h = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                    "v": {"dtype": "F32", "shape": [4], "data_offsets": [16, 32]}})
    assert h.count('"v"') == 1
    h = h.replace('"v"', '"w"').encode()
    parsed = json.loads(h)
    assert list(parsed) == ["w"] and parsed["w"]["data_offsets"] == [16, 32]
    put("st_duplicate_key.safetensors", safetensors(h, w.tobytes() + v.tobytes()),
        "json.dumps header of two F32 [4] tensors, w = arange(4) at [0, 16) and v = -arange(4) at [16, 32), "
        "the key \"v\" then rewritten to \"w\" by string surgery on the JSON text (a Python dict cannot hold a "
        "key twice): json.loads keeps the second w (checked here), Go's encoding/json into a map the second too, "
        "the safetensors library's serde map one of the two")


def gen_pt():
    # A torch.save archive's layout (NAME/data.pkl, NAME/version) around a
    # pickle of a list nested 100,000 deep. pickle.dumps recurses once per
    # level and overflows the C stack, so the stream is assembled from the
    # pickle module's own opcodes: PROTO 2, EMPTY_LIST x N, APPEND x N-1,
    # STOP; pickle.loads (iterative) checks it.
    n = 100_000
    pkl = pickle.PROTO + b"\x02" + pickle.EMPTY_LIST * n + pickle.APPEND * (n - 1) + pickle.STOP
    depth, x = 0, pickle.loads(pkl)
    while x:
        depth, x = depth + 1, x[0]
    assert depth == n - 1, depth
    put("pt_deep_pickle.pt", zip_bytes([("archive/data.pkl", pkl), ("archive/version", b"3\n")]),
        "zip with a torch.save layout (archive/data.pkl, archive/version) whose pickle (protocol 2, checked with pickle.loads) is a list nested 100,000 deep")
    put("pt_no_pickle.pt", zip_bytes([("archive/version", b"3\n"), ("archive/data/0", b"\0" * 16)]),
        "zip with a torch.save layout but no data.pkl")


def gen_pt_views():
    """torch.save archives whose tensors are views: made by torch itself, or
    pickled with torch's own rebuild function and storage record (how
    torch.save pickles) where torch would refuse the view."""
    import torch
    # a 64-byte storage viewed as 2^28 float32 elements by stride 0 (what
    # expand() makes): torch.save keeps the storage and the strides
    # (within graphdiff's cap: read, streamed; written to testdata/pt_views,
    # not here), and 2^34 elements (beyond it: refused)
    views = os.path.join(ROOT, "pt_views")
    os.makedirs(views, exist_ok=True)
    torch.save({"w": torch.full((16,), 0.5).as_strided((1 << 14, 1 << 14), (0, 0))}, os.path.join(views, "expand_1gib.pt"))
    b = io.BytesIO()
    torch.save({"w": torch.zeros(16).as_strided((1 << 17, 1 << 17), (0, 0))}, b)
    put("pt_expand_64gib.pt", b.getvalue(),
        "torch.save of a 64-byte storage viewed by as_strided((2^17, 2^17), (0, 0)): 2^34 float32 elements, 64 GiB if gathered")

    # strides that overflow int64 when multiplied out: torch.save's pickle
    # (protocol 2, persistent ids for storages, torch._utils._rebuild_tensor_v2)
    # of a 16-element storage with stride (2^62, 1)
    storage = object()  # stands for the storage: persistent_id writes its record

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            if obj is storage:
                return ("storage", torch.FloatStorage, "0", "cpu", 16)
            return None

    class View:
        def __reduce__(self):
            return (torch._utils._rebuild_tensor_v2, (storage, 0, (4, 4), (1 << 62, 1), False, {}))

    pkl = io.BytesIO()
    Pickler(pkl, protocol=2).dump({"w": View()})
    put("pt_stride_overflow.pt", zip_bytes([("archive/data.pkl", pkl.getvalue()), ("archive/data/0", b"\0" * 64),
                                            ("archive/version", b"3\n")]),
        "a torch.save layout whose pickle (torch's rebuild function and storage record) views a 16-element storage as (4, 4) with stride (2^62, 1)")

    # a pickle memo DAG: each of 21 lists holds the one before twice (by
    # memo reference), 2^21 paths to the innermost one, in 200 bytes
    ops = pickle.PROTO + b"\x02" + pickle.EMPTY_LIST + pickle.BINPUT + b"\x00"
    for k in range(1, 22):
        ops += pickle.EMPTY_LIST + pickle.MARK + pickle.BINGET + bytes([k - 1]) + pickle.BINGET + bytes([k - 1]) + \
            pickle.APPENDS + pickle.BINPUT + bytes([k])
    ops += pickle.STOP
    x, paths = pickle.loads(ops), 1
    while x:
        x, paths = x[0], paths * 2
    assert paths == 1 << 21, paths
    # a string whose length claims 16 TiB: pickle.dumps output (protocol 2
    # writes str as BINUNICODE, 'X' and a 4-byte length) with that opcode
    # turned into BINUNICODE8 ('\x8d', an 8-byte length) claiming 2^44 bytes
    pkl = pickle.dumps({"w": "abc"}, protocol=2)
    i = pkl.index(b"X\x01\x00\x00\x00w")
    pkl = pkl[:i] + b"\x8d" + struct.pack("<Q", 1 << 44) + pkl[i + 5:]
    put("pt_pickle_long_string.pt", zip_bytes([("archive/data.pkl", pkl), ("archive/version", b"3\n")]),
        "a torch.save layout whose pickle (pickle.dumps, protocol 2) has its first string opcode turned into BINUNICODE8 claiming 2^44 bytes")
    put("pt_memo_dag.pt", zip_bytes([("archive/data.pkl", ops), ("archive/version", b"3\n")]),
        "a torch.save layout whose pickle (protocol 2, checked with pickle.loads) is 21 lists each holding the one before twice by memo reference: 2^21 paths")


def torch_records(data):
    """The records of a torch.save archive, in order, without the archive's
    prefix and without its version record."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return [(n.split("/", 1)[1], z.read(n)) for n in z.namelist() if n.split("/", 1)[1] != "version"]


def torch_archive(records):
    """A torch.save archive of records (name, bytes), written by PyTorch's
    own zip writer (torch._C.PyTorchFileWriter, which torch.save uses; it
    names the archive "archive" and adds the version record itself)."""
    import torch
    b = io.BytesIO()
    w = torch._C.PyTorchFileWriter(b)
    for name, data in records:
        w.write_record(name, data, len(data))
    w.write_end_of_file()
    return b.getvalue()


def gen_pt_names():
    """torch.save objects whose tensors, flattened into names joined with
    '/', give one name twice."""
    import torch
    b = io.BytesIO()
    torch.save({"a": {"b": torch.zeros(2)}, "a/b": torch.ones(2)}, b)
    loaded = torch.load(io.BytesIO(b.getvalue()))
    assert list(loaded) == ["a", "a/b"] and (loaded["a"]["b"] == 0).all() and (loaded["a/b"] == 1).all()
    put("pt_name_collision.pt", b.getvalue(),
        "torch.save({'a': {'b': zeros(2)}, 'a/b': ones(2)}), as torch.save wrote it (torch.load gives both back): "
        "flattened into names joined with '/', both tensors are a/b")

    b = io.BytesIO()
    torch.save({"a": torch.zeros(2), "b": torch.ones(2)}, b)
    records = torch_records(b.getvalue())
    key_b, key_a = b"X\x01\x00\x00\x00b", b"X\x01\x00\x00\x00a"  # BINUNICODE 'b', 'a'
    assert dict(records)["data.pkl"].count(key_b) == 1
    z = torch_archive([(n, d.replace(key_b, key_a) if n == "data.pkl" else d) for n, d in records])
    loaded = torch.load(io.BytesIO(z))
    assert list(loaded) == ["a"] and (loaded["a"] == 1).all(), loaded
    put("pt_repeated_key.pt", z,
        "torch.save({'a': zeros(2), 'b': ones(2)}) with the pickle's key 'b' (its BINUNICODE opcode) rewritten to 'a', "
        "the records written again by PyTorch's own zip writer (torch._C.PyTorchFileWriter): the dict is given "
        "the key 'a' twice, and torch.load keeps the second, ones(2) (checked here)")


def torch_storage_units(pkl):
    """Bytes per byte-swapped unit of each storage a torch.save pickle
    names, by key: the element size, half of it for complex dtypes (whose
    two parts torch swaps apart)."""
    units = {}

    class Storages(pickle.Unpickler):
        def persistent_load(self, pid):
            _, cls, key, _, numel = pid
            s = cls(numel)
            units[key] = s.element_size() // (2 if s.dtype.is_complex else 1)
            return s

    Storages(io.BytesIO(pkl)).load()
    return units


def gen_pt_members():
    """torch.save archives with a record twice or two pickles, their
    members as torch.save wrote them, put together by Python's zipfile
    (which warns of a duplicate name and writes it)."""
    import torch

    def records(obj):
        b = io.BytesIO()
        torch.save(obj, b)
        with zipfile.ZipFile(io.BytesIO(b.getvalue())) as z:
            return [(n, z.read(n)) for n in z.namelist()]

    w, v = records({"w": torch.zeros(4)}), records({"v": torch.ones(4)})
    assert [n for n, _ in w] == ["archive/data.pkl", "archive/data/0", "archive/version"] == [n for n, _ in v]
    z = zip_bytes([w[0], v[0]] + w[1:])
    loaded = torch.load(io.BytesIO(z))
    assert list(loaded) == ["v"] and (loaded["v"] == 0).all(), loaded
    put("pt_duplicate_member.pt", z,
        "zipfile archive of torch.save({'w': zeros(4)})'s records with the data.pkl of torch.save({'v': ones(4)}) "
        "added after its own under the same name, archive/data.pkl: torch.load reads the second pickle, {'v'} "
        "(over the first's storage: zeros), checked here")
    z = zip_bytes([("b/version", v[2][1]), ("a/data.pkl", w[0][1]), ("a/data/0", w[1][1]), ("a/version", w[2][1]),
                   ("b/data.pkl", v[0][1]), ("b/data/0", v[1][1])])
    torch_refuses(z, "not in a subdirectory")
    put("pt_two_pickles.pt", z,
        "zipfile archive of the records of torch.save({'w': zeros(4)}) under a/ and of torch.save({'v': ones(4)}) "
        "under b/, b/version first: two pickles, a/data.pkl and b/data.pkl; torch.load refuses members outside "
        "its first member's directory (checked here)")


def gen_pt_byteorder():
    """testdata/pt/tensors.pt and views.pt (torch_fixtures.py) with a
    byteorder record, as torch.save has written one since PyTorch 2.1
    (sys.byteorder of the saving machine; torch.load byte-swaps the storages
    of a file from a machine of the other order). Debian's torch 1.13
    predates the record, so the records are written again by its own zip
    writer with the record added after data.pkl, where torch.save puts
    it."""
    import torch

    def elements(t):  # numpy has no bfloat16: its bits as int16
        t = t.reshape(-1)
        return (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy()

    out = os.path.join(ROOT, "pt_byteorder")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for source, name in [("tensors.pt", "pt_big_endian.pt"), ("views.pt", "pt_big_endian_views.pt")]:
        with open(os.path.join(ROOT, "pt", source), "rb") as f:
            original = f.read()
        records = torch_records(original)
        pkl = dict(records)["data.pkl"]
        units = torch_storage_units(pkl)

        def swapped(record, data):
            unit = units[record.removeprefix("data/")] if record.startswith("data/") else 1
            return data if unit == 1 else np.frombuffer(data, dtype=f"<u{unit}").byteswap().tobytes()

        big = torch_archive([("data.pkl", pkl), ("byteorder", b"big")] +
                            [(n, swapped(n, d)) for n, d in records if n != "data.pkl"])
        # torch 1.13 ignores the record: it loads each storage's bytes as
        # they are, which must be the original's swapped
        want, got = torch.load(io.BytesIO(original)), torch.load(io.BytesIO(big))
        assert list(want) == list(got)
        for t, u in zip(want.values(), got.values()):
            assert elements(t).tobytes() == elements(u).byteswap().tobytes()
        with open(os.path.join(out, name), "wb") as f:
            f.write(big)
        if source == "tensors.pt":
            assert set(units.values()) == {1, 2, 4, 8}
            unknown = torch_archive([("data.pkl", pkl), ("byteorder", b"middle")] +
                                    [(n, d) for n, d in records if n != "data.pkl"])
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("# Big-endian torch.save files\n\nGenerated by `testdata/gen/hostile_fixtures.py`. Do not edit by hand.\n\n"
                "`pt_big_endian.pt` and `pt_big_endian_views.pt` are the tensors of `testdata/pt/tensors.pt` and "
                "`testdata/pt/views.pt` (torch.save, written by `testdata/gen/torch_fixtures.py`) as torch.save "
                "writes them on a big-endian machine: their records written again by PyTorch's own zip writer "
                "(torch._C.PyTorchFileWriter) with a `byteorder` record `big` after data.pkl (PyTorch 2.1 and later "
                "write it) and each storage byte-swapped per element (per part for complex dtypes; bool and uint8 "
                "unchanged). torch 1.13, which predates the record, loads each storage's bytes as they are: the "
                "generator checks they are the original's swapped. A reader that honours the record reads the "
                "values of the original.\n")

    put("pt_byteorder_unknown.pt", unknown,
        "testdata/pt/tensors.pt's records written again by PyTorch's own zip writer (torch._C.PyTorchFileWriter) "
        "with a byteorder record (PyTorch 2.1 and later write one) saying middle: torch.load refuses any value but "
        "little and big (\"Unknown endianness type\", in torch/serialization.py; torch 1.13 predates the record)")


def run_dir(name, manifest_bytes, note):
    d = os.path.join(RUNS, name)
    os.makedirs(os.path.join(d, "step_000001"), exist_ok=True)
    np.save(os.path.join(d, "step_000001", "loss.npy"), np.float32(0.5))
    with open(os.path.join(d, "manifest.json"), "wb") as f:
        f.write(manifest_bytes)
    notes.append(f"- `runs/{name}/`: a run with step_000001/loss.npy (np.save of float32 0.5) and a manifest.json that {note}")


def gen_manifests():
    shutil.rmtree(RUNS, ignore_errors=True)
    m = {"graphdiff_manifest": 1, "tensors": [{"path": "../../npy/f4.npy", "dtype": "float32"}]}
    run_dir("manifest_outside", json.dumps(m).encode(), "points at ../../npy/f4.npy, outside the run")
    m = {"graphdiff_manifest": 1, "tensors": [{"path": "/etc/passwd", "dtype": "float32"}]}
    run_dir("manifest_absolute", json.dumps(m).encode(), "points at /etc/passwd")
    m = {"graphdiff_manifest": 1, "run": {"name": "XX"}}
    run_dir("manifest_not_utf8", json.dumps(m).encode().replace(b"XX", b"\xff\xfe"),
            "is json.dumps output with the run name's bytes patched to ff fe (not UTF-8)")
    m = {"graphdiff_manifest": 1, "run": {"compute_dtyp": "bfloat16"}}
    run_dir("manifest_unknown_key", json.dumps(m).encode(), "misspells compute_dtype as compute_dtyp")
    m = {"graphdiff_manifest": 1, "tensors": [{"path": "step_000001/loss.npy", "dtype": "float32"}]}
    run_dir("manifest_truncated", json.dumps(m).encode()[:30], "is json.dumps output cut after 30 bytes")
    m = {"graphdiff_manifest": 7}
    run_dir("manifest_version", json.dumps(m).encode(), "declares format version 7")


def gen_policies():
    put("policy_unknown_key.yaml", b"rules:\n  - match: {name: 'grads/*'}\n    rtoll: 1e-3\n",
        "a policy rule with the misspelt key rtoll")
    laughs = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        laughs.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 10) + "]")
    put("policy_alias_bomb.yaml", ("\n".join(laughs) + "\nrules: [" + ", ".join(["*i"] * 10) + "]\n").encode(),
        "a billion-laughs alias expansion: 9 levels of 10 aliases, the rule list made of 10 aliases of the last (10**10 strings if expanded)")
    put("policy_bad_glob.yaml", b"rules:\n  - match: {name: 'grads/[fc1'}\n    ignore: true\n",
        "a rule whose name glob has an unclosed [")
    put("policy_negative.yaml", b"rules:\n  - match: {kind: grad}\n    rtol: -1\n", "a rule with rtol -1")
    put("policy_not_utf8.yaml", b"rules:\n  - match: {name: '\xff\xfe'}\n    ignore: true\n",
        "a rule whose name pattern is the bytes ff fe (not UTF-8)")
    put("policy_long_glob.yaml", ("rules:\n  - match: {name: '" + "a*" * 2049 + "'}\n    ignore: true\n").encode(),
        "a rule whose name glob is 'a*' 2,049 times (4,098 bytes: the limit is 4,096; a glob of megabytes "
        "compiles to gigabytes of regular expression)")
    put("policy_many_rules.yaml", ("rules:\n" + "".join(f"  - {{match: {{name: 'a{i}*'}}, max_rel_l2: 0.1}}\n"
                                                        for i in range(1025))).encode(),
        "1,025 rules (the limit is 1,024: every tensor is matched against each)")


def gen_curves():
    put("curve_no_loss.csv", b"step,accuracy\n0,0.5\n1,0.6\n", "a CSV curve with no column whose name contains loss")
    put("curve_bad_step.csv", b"step,loss\n0,0.5\n1.5,0.4\n", "a CSV curve whose second step is 1.5")
    put("curve_short_row.csv", b"loss,step\n0.5,0\n0.4\n",
        "a CSV curve whose second row has a loss but no step column (a fuzzer's find)")
    put("curve_text_value.jsonl", b'{"step": 0, "loss": 0.5}\n{"step": 1, "loss": "low"}\n',
        "a JSON-lines curve whose second loss is the string \"low\"")
    line = json.dumps({"step": 0, "loss": 0.5, "pad": "x" * ((1 << 20) + 16)}).encode()
    put("curve_long_line.jsonl", line + b"\n", "a JSON-lines curve whose only line is just over 1 MiB long")
    put("curve_not_object.jsonl", b"[0, 0.5]\n", "a JSON-lines curve whose line is an array")
    put("curve_huge_step.jsonl", b'{"step": 1e300, "loss": 0.5}\n{"step": 2, "loss": 0.4}\n',
        "a JSON-lines curve whose first step is 1e300")
    src = os.path.join(ROOT, "curves", "frozen_scalar_long", "eager", "tb")
    ev = sorted(os.listdir(src))[0]
    with open(os.path.join(src, ev), "rb") as f:
        tb = f.read()
    # records: 8-byte length, 4-byte length CRC, data, 4-byte data CRC
    ends = [0]
    while len(ends) <= 4:
        ends.append(ends[-1] + 16 + struct.unpack("<Q", tb[ends[-1]:ends[-1] + 8])[0])
    tb = tb[:ends[4]]  # the first four records
    rec2 = ends[1]
    flipped = bytearray(tb)
    flipped[rec2 + 12 + 3] ^= 0xFF
    put("tb_bad_crc.tfevents", bytes(flipped),
        f"testdata/curves/frozen_scalar_long/eager/tb/{ev} (written by scenarios.py), its first four records, with one byte of its second record's data flipped")
    huge = bytearray(tb[:rec2 + 64])
    struct.pack_into("<Q", huge, rec2, 1 << 62)
    put("tb_huge_length.tfevents", bytes(huge),
        "the first record of the same file and 64 bytes of its second, the second record's length patched to 2**62 (its length CRC then fails too)")
    put("tb_truncated.tfevents", tb[:rec2 + 20],
        "the same file cut 20 bytes into its second record")


if __name__ == "__main__":
    gen_npy()
    gen_npz()
    gen_zip_ambiguity()
    gen_safetensors()
    gen_pt()
    gen_pt_views()
    gen_pt_names()
    gen_pt_members()
    gen_pt_byteorder()
    gen_manifests()
    gen_policies()
    gen_curves()
    with open(os.path.join(BAD, "README_hostile.md"), "w") as f:
        f.write("# Hostile inputs\n\nGenerated by `testdata/gen/hostile_fixtures.py` from bytes written by numpy, "
                "Python's zipfile, json and pickle modules, and the TensorBoard files of testdata/curves; "
                "each damaged as described. Do not edit by hand.\n\n" + "\n".join(notes) + "\n")
    print(f"{len(notes)} hostile inputs written")
