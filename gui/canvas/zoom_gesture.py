"""A zoom gesture (a run of wheel steps) reuses each box's picture, scaled, and the
boxes are drawn afresh once, when the gesture ends.

A box caches its picture in device pixels (``DeviceCoordinateCache``): repainting an
unchanged box is a blit. Qt throws that picture away at every change of scale, so
each wheel step re-rendered every box in view (42 % of a zoom step at 100 % went to
``drawRoundedRect``). For the length of a gesture the boxes switch to a picture in
item coordinates, rendered at the scale the gesture started at, which Qt scales
while the steps go by; :data:`REST_MS` after the last step they switch back and
each box in view renders once, sharp, at the scale the gesture ended at (its
semantic-zoom form too: :mod:`gui.model.semantic_zoom`).

While the wheel turns the background is not cached: every step draws all of it
anew (the scale has thrown the cached picture away), and drawing it straight onto the
canvas spares filling a new picture and copying it over (about 0.3 ms a step). The
pictures stay filtered (``SmoothPixmapTransform``): unfiltered they cost a seventh,
but the boxes' text read unevenly while the class watched. A camera glide keeps the
cache. Either way the view is as it was once the gesture ends.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from PySide6.QtCore import QObject, QSize, QTimer
from PySide6.QtWidgets import QGraphicsItem, QGraphicsView

from .node_item import BOX_CACHE, NodeItem

#: A gesture ends this long after its last wheel step (ms).
REST_MS = 180
#: The largest side (pixels) of a box's picture during a gesture.
MAX_SIDE = 4096

_UNCACHED = QGraphicsView.CacheModeFlag.CacheNone


class ZoomGesture(QObject):
    """Switches the boxes' cache for a gesture in ``view``; :meth:`step` at each zoom
    step."""

    def __init__(self, boxes: Callable[[], Iterable[NodeItem]], zoom: Callable[[], float],
                 view: QGraphicsView) -> None:
        super().__init__(view)
        self._boxes = boxes
        self._zoom = zoom
        self._view = view
        self._timer = QTimer(self, singleShot=True, interval=REST_MS)
        self._timer.timeout.connect(self.end)
        self._held: list[NodeItem] = []
        #: While the wheel turns: the view's own cache mode, to restore.
        self._wheel: QGraphicsView.CacheModeFlag | None = None

    def step(self, wheel: bool = False) -> None:
        """A zoom step is about to happen (``wheel``: the mouse wheel's): start the
        gesture, or keep it going."""
        view = self._view
        if wheel and self._wheel is None:
            self._wheel = view.cacheMode()
            view.setCacheMode(_UNCACHED)
        if not self._held:
            zoom = self._zoom()
            mode = QGraphicsItem.CacheMode.ItemCoordinateCache
            for item in self._boxes():
                r = item.boundingRect()
                side = QSize(min(MAX_SIDE, math.ceil(r.width() * zoom)),
                             min(MAX_SIDE, math.ceil(r.height() * zoom)))
                item.setCacheMode(mode, side)
                self._held.append(item)
        self._timer.start()

    def end(self) -> None:
        """The gesture is over: every box back to its device-pixel picture, the view
        caching its background again."""
        self._timer.stop()
        if self._wheel is not None:
            cache, self._wheel = self._wheel, None
            self._view.setCacheMode(cache)
        held, self._held = self._held, []
        for item in held:
            item.setCacheMode(BOX_CACHE)
