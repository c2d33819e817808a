"""Backprop Studio's public package: ``import backprop_studio as bps``.

The minimal face the wheel must carry: the version, capturing a real PyTorch backward
pass (``capture``, ``recording``, ``tracking``; PyTorch is imported only when one runs)
and ``load`` for the app's two file kinds. The maths lives in ``engine``.
"""

from __future__ import annotations

import os
from pathlib import Path

from engine import app_version
from engine.capture import capture, recording, tracking
from engine.captured import CapturedTrace
from engine.fileformat import GraphFile
from engine.tracefile import SUFFIX as TRACE_SUFFIX

__version__ = app_version()


def load(path: str | os.PathLike[str]) -> GraphFile | CapturedTrace:
    """A ``.bptrace`` file as its captured trace, any other file as a graph file; a bad
    file raises ``engine.fileformat.FileFormatError`` with a one-line message."""
    if Path(path).suffix.lower() == TRACE_SUFFIX:
        from engine.tracefile import load as load_trace

        return load_trace(path)
    from engine.fileformat import load as load_graph

    return load_graph(path)


__all__ = ["__version__", "capture", "load", "recording", "tracking"]
