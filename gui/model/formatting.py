"""Numbers and tensors as short text for node boxes, edge labels and panels.

One place decides how a tensor reads on screen, so the canvas, the panels and an
exported frame all say the same thing about the same array.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

#: Tensors with more elements than this are summarised (shape, min, max).
MAX_SHOWN = 16


def fmt_num(x: float | np.ndarray) -> str:
    """A number the way a teacher writes it: 1.1, 0.25, 34, -3e-05, nan."""
    x = float(x)
    if x == 0:
        return "0"
    text = f"{x:.4g}"
    return text.replace("e-0", "e-").replace("e+0", "e")


def count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless one: ``1 edge``, ``4 edges``, ``0 steps``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def bracketed(items: Iterable[str]) -> str:
    """Items written as a list: ``[1.1, 0.25, 34]``."""
    return "[" + ", ".join(items) + "]"


def fmt_shape(shape: tuple[int, ...]) -> str:
    return "scalar" if not shape else "×".join(str(n) for n in shape)


def format_tensor(a: np.ndarray | None, max_shown: int = MAX_SHOWN) -> str:
    """Scalars as numbers, small tensors as a compact (multi-line for 2-D) list,
    large ones as shape with min/max."""
    if a is None:
        return "—"
    a = np.asarray(a)
    if a.ndim == 0:
        return fmt_num(a)
    if a.size > max_shown or a.ndim > 2:
        if a.size == 0:
            return f"{fmt_shape(a.shape)} (empty)"
        return f"{fmt_shape(a.shape)}  min {fmt_num(a.min())}  max {fmt_num(a.max())}"
    if a.ndim == 1:
        return bracketed(map(fmt_num, a))
    rows = [[fmt_num(v) for v in row] for row in a]
    width = max((len(c) for r in rows for c in r), default=1)
    lines = [bracketed(c.rjust(width) for c in r) for r in rows]
    return "[" + ",\n ".join(lines) + "]"
