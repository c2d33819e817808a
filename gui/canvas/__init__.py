"""The node-editor canvas: :class:`CanvasView` over a :class:`CanvasScene`.

The scene mirrors a :class:`~gui.document.GraphDocument` (one item per node and
edge, repainted from the document's signals); the view turns mouse and keys into
commands and shows the player's frames.
"""

from __future__ import annotations

import sys


def guard_none_refcount() -> bool:
    """Work around a PySide6 binding bug; returns True when it was needed.

    The installed shiboken returns ``None`` from void C++ methods without a new
    reference, which is harmless on Python >= 3.12 (``None`` is immortal) but on
    3.11 every ``setPos``/``setPen``/... takes one reference away from ``None``
    until the interpreter aborts with "none_dealloc: deallocating None" (a canvas
    makes thousands of such calls a second). When the leak is detected, ``None``
    gets the huge reference count that 3.12 gives it, so it can never reach zero.
    """
    if sys.version_info >= (3, 12):
        return False
    import ctypes

    from PySide6.QtCore import QPointF

    probe = QPointF()
    before = sys.getrefcount(None)
    for _ in range(8):
        probe.setX(1.0)
    if sys.getrefcount(None) >= before:
        return False
    refcnt = ctypes.c_ssize_t.from_address(id(None))  # ob_refcnt, first field
    if refcnt.value < 1 << 40:
        refcnt.value += 1 << 40
    return True


guard_none_refcount()

from .scene import CanvasScene, default_edge_label  # noqa: E402
from .view import MIME_OP, CanvasView  # noqa: E402

__all__ = ["MIME_OP", "CanvasScene", "CanvasView", "default_edge_label", "guard_none_refcount"]
