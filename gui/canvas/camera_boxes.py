"""What the camera needs of every box, kept up to date by the boxes that changed.

Follow step asks :func:`gui.model.camera.camera_target` where to look at every step
(and every exported frame), with every box's rectangle and the zooms at which its
compact form stays legible. Gathering them from thousands of items was 86 % of a
followed step at 10,000 nodes, though a step changes two or three boxes: the scene
marks the boxes that moved, resized or changed content, and only those are asked
again (each box also keeps its zooms by content: see
:meth:`~gui.canvas.node_item.NodeItem.compact_min_zooms`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from math import inf

from ..model.camera import union
from .node_item import NodeItem

EdgeKey = tuple[str, str, int]
Rect = tuple[float, float, float, float]


class CameraBoxes:
    """Each box's scene rectangle and compact-form zooms, and the edges as (operand,
    consumer) pairs, as the camera reads them."""

    def __init__(self, nodes: Mapping[str, NodeItem], edges: Mapping[EdgeKey, object]) -> None:
        self._nodes = nodes
        self._edges = edges
        self.pairs: list[tuple[str, str]] = []
        self.rects: dict[str, Rect] = {}
        self.names: dict[str, float] = {}
        self.numbers: dict[str, float] = {}
        self.whole: dict[str, float] = {}
        self._stale: set[str] | None = None  # None: every box
        self._bounds: Rect | None = None  # the union of the rects (None: not known)
        # Per node, the indices into ``pairs`` of the edges at it (built when first asked).
        self._touching: dict[str, list[int]] = {}
        # Per zoom table (by id), its greatest zoom, while known (see :meth:`most`).
        self._most: dict[int, float] = {}

    def mark(self, ids: Iterable[str]) -> None:
        """These boxes moved, resized or changed what they show."""
        if self._stale is not None:
            self._stale.update(ids)

    def mark_all(self) -> None:
        """Boxes or edges came or went, or every box may measure differently (theme,
        text size)."""
        self._stale = None

    @property
    def bounds(self) -> Rect | None:
        """The union of every box's rectangle (None: no boxes); after :meth:`refresh`."""
        if self._bounds is None:
            self._bounds = union(self.rects.values())
        return self._bounds

    def refresh(self) -> CameraBoxes:
        """Ask the marked boxes again; returns self, current."""
        nodes = self._nodes
        if self._stale is None:
            for table in (self.rects, self.names, self.numbers, self.whole):
                table.clear()
            self.pairs = [(a, b) for a, b, _i in self._edges]
            self._touching = {}
            ids: Iterable[str] = nodes
            self._bounds = None
            self._most.clear()
        else:
            ids = self._stale
        for nid in ids:
            item = nodes.get(nid)
            if item is None:
                self.rects.pop(nid, None)
                self._zooms(nid, None)
                self._bounds = None
                continue
            r = item.scene_rect()
            rect = (r.x(), r.y(), r.width(), r.height())
            if self.rects.get(nid) != rect:
                self.rects[nid] = rect
                self._bounds = None
            if item.content is None:
                self._zooms(nid, None)
                continue
            zooms = item.compact_min_zooms()
            self._zooms(nid, (zooms.names, zooms.numbers, zooms.whole))
        self._stale = set()
        return self

    def _zooms(self, nid: str, zooms: tuple[float, float, float] | None) -> None:
        """Put a box's names, numbers and whole zooms (None: it has none), keeping each
        table's greatest while that stays known without a walk over every box."""
        for table, zoom in zip((self.names, self.numbers, self.whole), zooms or (None,) * 3,
                               strict=True):
            old = table.pop(nid, None) if zoom is None else table.get(nid)
            if zoom is not None:
                table[nid] = zoom
            most = self._most.get(id(table))
            if most is None or zoom == old:
                continue
            if zoom is not None and zoom >= most:
                self._most[id(table)] = zoom
            elif old is not None and old >= most:  # the greatest went down or away
                del self._most[id(table)]

    def most(self, table: Mapping[str, float]) -> float:
        """The greatest zoom in ``table`` (:attr:`names`, :attr:`numbers` or
        :attr:`whole`) over every box, inf when a box has none (its content not shown
        yet), as :func:`gui.model.camera.least_legible` reads a table of every box; after
        :meth:`refresh`. Kept as boxes change: at 5,000 boxes the two walks over every
        box's zooms were most of a followed step's camera."""
        if len(table) < len(self.rects):
            return inf
        most = self._most.get(id(table))
        if most is None:
            most = self._most[id(table)] = max(table.values(), default=-inf)
        return most

    def pairs_at(self, *ids: str) -> list[tuple[str, str]]:
        """The pairs with an end at one of ``ids``, in the order of :attr:`pairs` (what
        the camera's neighbourhood reads of them); after :meth:`refresh`. A step asks
        for two nodes' edges: a walk over every edge was most of a step's camera at
        10,000 nodes."""
        if not self._touching and self.pairs:
            touching: dict[str, list[int]] = {}
            for i, (a, b) in enumerate(self.pairs):
                touching.setdefault(a, []).append(i)
                if b != a:
                    touching.setdefault(b, []).append(i)
            self._touching = touching
        found = sorted({i for n in ids for i in self._touching.get(n, ())})
        return [self.pairs[i] for i in found]
