"""Which pages managed arrays get (interpose/managed_pages.cpp, map_pages;
docs/architecture.md, "Managed memory"): as NumPy's own, huge pages for an
array allocated unfilled (np.empty, a ufunc's output) and 4 KiB pages for a
zero-filled one (np.zeros: NumPy's calloc), which npvk moves onto huge pages
once three flushes used it (a grid a program steps in time). Read from the
process's /proc/self/smaps; needs transparent huge pages in "madvise" mode,
in which only the advice decides."""

import os

import pytest

from npvk_testlib import run_python, subprocess_env

THP = "/sys/kernel/mm/transparent_hugepage/enabled"


def _thp_mode():
    try:
        text = open(THP).read()
    except OSError:
        return None
    return text[text.index("[") + 1:text.index("]")]


pytestmark = pytest.mark.skipif(_thp_mode() != "madvise",
                                reason="the advice decides only in THP's madvise mode")

CHILD = r"""
import re, numpy as np, npvk
npvk.enable()

def huge_kib(a):
    # AnonHugePages of the mapping holding a's data.
    address, inside = a.__array_interface__["data"][0], False
    for line in open("/proc/self/smaps"):
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) ", line)
        if m:
            inside = int(m.group(1), 16) <= address < int(m.group(2), 16)
        elif inside and line.startswith("AnonHugePages:"):
            return int(line.split()[1])
    return -1

n = 2050  # 33.6 MB of float64
empty = np.empty((n, n))
empty.fill(1.0)   # NumPy's own fill: the host writes every page
zeros = np.zeros((n, n))
zeros.fill(1.0)
print(huge_kib(empty) > 0, huge_kib(zeros) == 0, end=" ")
# A Jacobi step per flush: the grid is an operand of each.
for step in range(3):
    print(huge_kib(zeros) > 0, end=" ")
    zeros[1:-1, 1:-1] = 0.25 * (zeros[:-2, 1:-1] + zeros[2:, 1:-1] + zeros[1:-1, :-2] + zeros[1:-1, 2:])
    float(zeros[1, 1])  # the host reads: a flush
print(huge_kib(zeros) > 0, float(zeros[1, 1]) == 1.0)
"""


def test_zeroed_arrays_get_small_pages_until_three_flushes_used_them():
    proc = run_python(["-c", CHILD], env=subprocess_env(NPVK_PAGE_ALIAS="0"))
    assert proc.returncode == 0, proc.stderr
    words = proc.stdout.split()
    # np.empty's array huge, np.zeros' small, still small during the three
    # steps, and huge after the third step's flush.
    assert words == ["True", "True", "False", "False", "False", "True", "True"], words
