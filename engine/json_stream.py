"""JSON output with numpy arrays in it, written fast and in pieces.

``json.dump`` walks every number in Python (its C encoder only serves
``json.dumps`` in one shot) and needs the whole document as lists first: a
10^7-element tensor took two minutes. Here dicts and lists are walked in Python
(they are small), while each array is written in chunks of rows, every chunk
through numpy's ``tolist`` and the C encoder. NaN and infinities are spelled as
the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``, as in graph files.
"""

from __future__ import annotations

import json
import re
from typing import Any, TextIO

import numpy as np

#: Elements encoded per call of the C encoder: big enough to be fast, small enough
#: that no huge string is built.
CHUNK = 1 << 16

_NONFINITE_TOKEN = re.compile(r"-?Infinity|NaN")
_encode = json.JSONEncoder(allow_nan=True, separators=(", ", ": ")).encode
_encode_strict = json.JSONEncoder(allow_nan=False, ensure_ascii=True).encode


def write_json(value: Any, out: TextIO) -> None:
    """Write ``value`` (dicts, lists, plain JSON values and numpy arrays) to ``out``."""
    if isinstance(value, dict):
        out.write("{")
        for k, (key, item) in enumerate(value.items()):
            out.write(", " if k else "")
            out.write(_encode_strict(str(key)) + ": ")
            write_json(item, out)
        out.write("}")
    elif isinstance(value, list | tuple):
        out.write("[")
        for k, item in enumerate(value):
            out.write(", " if k else "")
            write_json(item, out)
        out.write("]")
    elif isinstance(value, np.ndarray | np.generic):
        _write_array(np.asarray(value, dtype=np.float64), out)
    elif isinstance(value, float):
        _write_array(np.asarray(value), out)
    else:
        out.write(_encode_strict(value))


def _write_array(a: np.ndarray, out: TextIO) -> None:
    if a.size <= CHUNK or a.ndim == 0:
        out.write(_numbers(a))
        return
    out.write("[")
    step = max(1, CHUNK // max(1, a[0].size)) if a.ndim > 1 else CHUNK
    for start in range(0, len(a), step):
        part = a[start : start + step]
        if part.ndim > 1 and part[0].size > CHUNK:  # one row is itself too big
            for k, row in enumerate(part):
                out.write(", " if start or k else "")
                _write_array(row, out)
            continue
        out.write(", " if start else "")
        out.write(_numbers(part)[1:-1])
    out.write("]")


def _numbers(a: np.ndarray) -> str:
    text = _encode(a.tolist())
    if not np.isfinite(a).all():
        text = _NONFINITE_TOKEN.sub(lambda m: f'"{m.group()}"', text)
    return text


__all__ = ["CHUNK", "write_json"]
