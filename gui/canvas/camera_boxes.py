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

import heapq
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
        # Per zoom table (by id), a heap of (-zoom, id) with every zoom it holds among
        # older ones (an entry the table no longer holds is dropped when it comes up):
        # its greatest in a look, where walking every box for it was most of a followed
        # step's camera at 5,000 boxes (the active boxes' zooms are the greatest, and
        # went down at every other step). Made when first asked.
        self._heaps: dict[int, list[tuple[float, str]]] = {}
        self._ids: tuple[str, ...] | None = None  # every key of rects, in order (ids)

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
            self._heaps.clear()
            self._ids = None
        else:
            ids = self._stale
        for nid in ids:
            item = nodes.get(nid)
            if item is None:
                if self.rects.pop(nid, None) is not None:
                    self._ids = None
                self._zooms(nid, None)
                self._bounds = None
                continue
            r = item.scene_rect()
            rect = (r.x(), r.y(), r.width(), r.height())
            if self.rects.get(nid) != rect:
                if nid not in self.rects:
                    self._ids = None
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
        """Put a box's names, numbers and whole zooms (None: it has none), each new zoom
        onto its table's heap while that is kept."""
        for table, zoom in zip((self.names, self.numbers, self.whole), zooms or (None,) * 3,
                               strict=True):
            if zoom is None:
                table.pop(nid, None)
                continue
            if table.get(nid) == zoom:
                continue
            table[nid] = zoom
            heap = self._heaps.get(id(table))
            if heap is not None:
                heapq.heappush(heap, (-zoom, nid))
                if len(heap) > 2 * len(table) + 64:  # mostly stale: made again when asked
                    del self._heaps[id(table)]

    def most(self, table: Mapping[str, float]) -> float:
        """The greatest zoom in ``table`` (:attr:`names`, :attr:`numbers` or
        :attr:`whole`) over every box, inf when a box has none (its content not shown
        yet), as :func:`gui.model.camera.least_legible` reads a table of every box; after
        :meth:`refresh`. Kept as boxes change: at 5,000 boxes the two walks over every
        box's zooms were most of a followed step's camera."""
        if len(table) < len(self.rects):
            return inf
        heap = self._heaps.get(id(table))
        if heap is None:
            heap = self._heaps[id(table)] = [(-z, n) for n, z in table.items()]
            heapq.heapify(heap)
        while heap and table.get(heap[0][1]) != -heap[0][0]:
            heapq.heappop(heap)  # a zoom the box no longer has
        return -heap[0][0] if heap else -inf

    @property
    def ids(self) -> tuple[str, ...]:
        """Every box's id, in the order of :attr:`rects` (kept until a box comes or
        goes); after :meth:`refresh`."""
        if self._ids is None:
            self._ids = tuple(self.rects)
        return self._ids

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
