"""The allocator setting that lets a burst's big buffers go back (actors/memory/allocator.py)."""

import subprocess
import sys

import pytest

PROBE = """
import os, sys
from zcode_acp.actors.memory import allocator as memory
if not memory.fix_mmap_threshold():
    print("unsupported"); sys.exit()
def rss():
    return next(int(r.split()[1]) for r in open("/proc/self/status") if r.startswith("VmRSS")) / 1024
first = os.urandom(1 << 20); del first  # glibc raises its threshold when the first big block is freed
start = rss()
bigs, smalls = [], []
for i in range(40):
    bigs.append(os.urandom((1 << 20) + i))  # a megabyte read from a pipe…
    smalls.append(bytearray(200 * 1024))  # …and something small kept after it, above it on the heap
del bigs
print(rss() - start)
"""


def test_forty_freed_megabytes_go_back_to_the_system():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout.strip()
    if out == "unsupported":
        pytest.skip("this C library has no mallopt (not glibc)")
    kept = float(out)
    assert kept < 20, f"{kept:.1f} MiB of the 40 freed stayed (8 are the small buffers still alive)"
