#!/usr/bin/python3
"""Large hostile inputs, too big to commit, written where graphdiff's test
asks (cmd/graphdiff TestLargeHostileInputs runs this into a temporary
directory):

    /usr/bin/python3 testdata/gen/hostile_large.py OUTDIR

Each file is assembled with Python's json module in a documented format
(safetensors: an 8-byte little-endian header length, then the JSON header)
or written as text, like the committed ones of testdata/gen/hostile_fixtures.py:

  st_million_tensors.safetensors  a header of 1,000,000 empty float32 tensors (~50 MB)
  st_huge_dims.safetensors        one tensor whose shape has 10,000,000 dimensions of 1 (~20 MB)
  st_huge_metadata.safetensors    a __metadata__ string of 99 MiB
  curve_wide.csv                  a header of 10,000,000 columns, "loss" last
  curve_long_line.csv             a header, then one line of 200 MB
"""
import json
import os
import struct
import sys


def safetensors(path, header):
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    safetensors(os.path.join(out, "st_million_tensors.safetensors"),
                {"t%d" % i: {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]} for i in range(1_000_000)})
    safetensors(os.path.join(out, "st_huge_dims.safetensors"),
                {"t": {"dtype": "F32", "shape": [1] * 10_000_000, "data_offsets": [0, 4]}})
    safetensors(os.path.join(out, "st_huge_metadata.safetensors"),
                {"__metadata__": {"note": "x" * (99 << 20)}, "t": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}})
    with open(os.path.join(out, "curve_wide.csv"), "w") as f:
        f.write(",".join("c%d" % i for i in range(10_000_000 - 1)) + ",loss\n")
        f.write(",".join("0" for _ in range(10_000_000)) + "\n")
    with open(os.path.join(out, "curve_long_line.csv"), "w") as f:
        f.write("step,loss\n0," + "1" * (200 << 20) + "\n")


if __name__ == "__main__":
    main()
