"""The node-editor canvas: :class:`CanvasView` over a :class:`CanvasScene`.

The scene mirrors a :class:`~gui.document.GraphDocument` (one item per node and
edge, repainted from the document's signals); the view turns mouse and keys into
commands and shows the player's frames.
"""

from __future__ import annotations

from .scene import CanvasScene
from .view import CanvasView

__all__ = ["CanvasScene", "CanvasView"]
