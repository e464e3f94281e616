#!/bin/bash
# Pack the output of testdata/gen/userloops.py into at most 8 .tar.xz parts
# of at most 15 MB each: one per family (userloops_<family>.tar.xz, holding
# <family>/...), and userloops_meta.tar.xz (README.md, userloops.log). A
# family's archive over 15 MB is split into userloops_<family>.tar.xz.partNN
# pieces (join them with cat before unpacking).
#
#   bash testdata/gen/userloops_pack.sh OUT DEST
#
# Unpack (from the repository root, PARTS the directory holding the parts):
#
#   mkdir -p testdata/userloops
#   for f in PARTS/userloops_*.tar.xz; do tar -xJf "$f" -C testdata/userloops; done
#
# (for split pieces: cat PARTS/userloops_F.tar.xz.part* | tar -xJ -C testdata/userloops)
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 OUT DEST" >&2
    exit 2
fi
src=$1
dest=$2
limit=$((15 * 1000 * 1000))
[ -d "$src" ] || { echo "$0: $src is not a directory" >&2; exit 2; }
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

# pack ARCHIVE NAME...: NAME... (relative to $src) into ARCHIVE (.tar.xz):
# GNU tar and xz, names sorted, no owners or times; Python's tarfile where xz is missing
pack() {
    local archive=$1
    shift
    if command -v xz > /dev/null; then
        tar -C "$src" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - "$@" | xz -9 -T1 > "$archive"
    else
        (cd "$src" && python3 -m tarfile -c "$archive" "$@")
    fi
}
parts=0
for d in "$src"/*/; do
    fam=$(basename "$d")
    case "$fam" in .*) continue ;; esac
    out="$dest/userloops_$fam.tar.xz"
    pack "$out" "$fam"
    size=$(stat -c %s "$out")
    if [ "$size" -gt "$limit" ]; then
        split -b "$limit" -d -a 2 "$out" "$out.part"
        rm "$out"
        n=$(ls "$out".part* | wc -l)
        parts=$((parts + n))
        echo "$fam: $size bytes, split into $n pieces"
    else
        parts=$((parts + 1))
        echo "$fam: $size bytes"
    fi
done
meta=()
for f in README.md userloops.log; do
    [ -f "$src/$f" ] && meta+=("$f")
done
if [ ${#meta[@]} -gt 0 ]; then
    pack "$dest/userloops_meta.tar.xz" "${meta[@]}"
    parts=$((parts + 1))
    echo "meta: $(stat -c %s "$dest/userloops_meta.tar.xz") bytes"
fi
echo "$parts parts in $dest"
if [ "$parts" -gt 8 ]; then
    echo "$0: $parts parts, more than 8" >&2
    exit 1
fi
