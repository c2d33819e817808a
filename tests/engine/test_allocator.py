"""The app keeps freed memory for reuse (glibc's trim threshold raised)."""

from __future__ import annotations

import ctypes.util
import sys

import pytest

from engine.allocator import RETAIN_BYTES, retain_freed_memory


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or "libc" not in (ctypes.util.find_library("c") or ""),
    reason="glibc only",
)
def test_glibc_accepts_the_threshold() -> None:
    assert retain_freed_memory(RETAIN_BYTES) is True
