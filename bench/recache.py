"""Evict files from the page cache and read them back in.

    /usr/bin/python3 bench/recache.py PATH...   (files, or directories walked)
    /usr/bin/python3 bench/recache.py --evict PATH...   (evict only: the files
                                                  are then read cold)

How a file's pages sit in the page cache changes what mapping it costs: on
Linux, pages read back through readahead come in large folios, pages left
by small writes in 4 KiB ones: mapping 2 GiB of the latter took 0.09-0.11 s of
system time here, of the former 0.01 s. The benchmarks recache their inputs first so that every
file is in the same state (the one a second read of any file leaves).
"""
import os
import sys


def files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                for n in sorted(names):
                    yield os.path.join(root, n)
        else:
            yield p


def main():
    buf = bytearray(1 << 20)
    args = sys.argv[1:]
    evict_only = args[:1] == ["--evict"]
    for p in files(args[1:] if evict_only else args):
        fd = os.open(p, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            while not evict_only and os.readv(fd, [buf]) > 0:
                pass
        finally:
            os.close(fd)


if __name__ == "__main__":
    main()
