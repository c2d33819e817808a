"""Tensors in a graph file: nested lists of numbers (``"NaN"``, ``"Infinity"`` and
``"-Infinity"`` for the non-finite ones) read into float64 arrays, checked for raggedness,
depth and size, and written back.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .file_checks import FileFormatError

#: No tensor, given in the file or computed by a node, may hold more elements.
MAX_ELEMENTS = 10**7
#: Nested lists deeper than this are not a tensor anyone means (numpy allows 64).
MAX_NDIM = 32


def parse_tensor(value: Any, where: str) -> np.ndarray:
    """A float64 array from a number or rectangular nested list (schema-checked already).

    ``where`` names the value in messages, e.g. ``"node 'x': value"``.
    """
    shape: list[int] = []
    probe = value
    while isinstance(probe, list):
        shape.append(len(probe))
        if len(shape) > MAX_NDIM:
            raise FileFormatError(
                f"{where} is nested more than {MAX_NDIM} lists deep; tensors have at most "
                f"{MAX_NDIM} dims"
            )
        if not probe:
            break
        probe = probe[0]
    count = math.prod(shape)
    if count > MAX_ELEMENTS:
        raise FileFormatError(
            f"{where} has {count:,} elements; a tensor may have at most {MAX_ELEMENTS:,}"
        )
    _check_rectangular(value, shape, 0, where, "")
    try:
        return np.array(value, dtype=np.float64)  # also reads "NaN", "Infinity", "-Infinity"
    except OverflowError:
        raise FileFormatError(f"{where} holds a number too large for a float") from None
    except ValueError as exc:  # not expected after the checks above; keep it one line
        raise FileFormatError(f"{where} is not a tensor: {exc}") from None


def shaped(value: np.ndarray, shape: Any, where: str) -> np.ndarray:
    """An empty tensor given its explicit shape (the nested list ``[]`` cannot say (0, 3))."""
    if shape is None:
        return value
    sizes = shape if isinstance(shape, list) else [None]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in sizes):
        raise FileFormatError(f"{where}: shape must be a list of non-negative integers")
    if value.size or math.prod(shape) or len(shape) > MAX_NDIM:
        raise FileFormatError(
            f"{where}: an explicit shape is only for empty tensors (a shape with a 0 and the "
            f"value []), got shape {shape} for {value.size} element(s)"
        )
    return np.zeros(tuple(shape))


def empty_shape(value: np.ndarray | None) -> list[int] | None:
    """The explicit shape to write beside an empty tensor its nested list would lose."""
    if value is None or value.size or np.array(value.tolist()).shape == value.shape:
        return None
    return list(value.shape)


def _check_rectangular(v: Any, shape: list[int], depth: int, where: str, at: str) -> None:
    if depth == len(shape):
        if isinstance(v, list):
            raise FileFormatError(
                f"{where} is a ragged nested list: {_at(where, at)} is a list where a number "
                f"was expected"
            )
        return
    if not isinstance(v, list):
        raise FileFormatError(
            f"{where} is a ragged nested list: {_at(where, at)} is a number where a list of "
            f"{shape[depth]} was expected"
        )
    if len(v) != shape[depth]:
        raise FileFormatError(
            f"{where} is a ragged nested list: {_at(where, at)} has "
            f"{_plural(len(v), 'element')} but {_at(where, at, first=True)} has {shape[depth]}"
        )
    if depth + 1 == len(shape):
        if list not in set(map(type, v)):  # C speed for the common case
            return
        for i, x in enumerate(v):
            if isinstance(x, list):
                raise FileFormatError(
                    f"{where} is a ragged nested list: {_at(where, f'{at}[{i}]')} is a list "
                    f"where a number was expected"
                )
        return
    for i, x in enumerate(v):
        _check_rectangular(x, shape, depth + 1, where, f"{at}[{i}]")


def _at(where: str, at: str, first: bool = False) -> str:
    name = where.rsplit(": ", 1)[-1]
    if first and at:
        at = "[0]" * at.count("[")
    return f"{name}{at}" if at else name


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def tensor_to_json(a: np.ndarray | float | None) -> Any:
    """A number or nested list for JSON; NaN/inf become "NaN"/"Infinity"/"-Infinity"."""
    if a is None:
        return None
    arr = np.asarray(a, dtype=np.float64)
    if np.isfinite(arr).all():
        return arr.tolist()  # the common case, without a Python-level walk
    return plain(arr.tolist())


def plain(obj: Any) -> Any:
    """Plain JSON data: numpy -> lists/numbers, tuples -> lists, non-finite -> strings."""
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        return "NaN" if math.isnan(obj) else ("Infinity" if obj > 0 else "-Infinity")
    if isinstance(obj, np.ndarray):
        return plain(obj.tolist())
    if isinstance(obj, np.generic):
        return plain(obj.item())
    if isinstance(obj, list | tuple):
        return [plain(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    return obj
