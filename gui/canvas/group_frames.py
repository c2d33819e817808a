"""Groups on the canvas: a labelled frame around each group's member boxes.

Expanded, a group is an outline behind its members with its title, inputs and
outputs. Collapsed, a box covers the members (their edges still show where its
inputs enter and its outputs leave), and only them (a user's boxes in its way are
pushed aside: :func:`make_room`), and shows the group's local Jacobian, the one its
single step in a grouped playback (engine.groups.playback_steps) multiplies by; a
captured module's box, its path · class, edge count, inputs and outputs. Frames never
take clicks: the boxes under them do.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, QSizeF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import (
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QStyleOptionGraphicsItem,
    QWidget,
)

from engine.errors import visible
from engine.graph import CAPTURED_OP
from engine.group_layout import clear_of_collapsed, holders
from engine.groups import Group, GroupStep, inputs_of, local_jacobian, outputs_of
from engine.layout import NODE_GAP

from ..document import GraphDocument, Point
from ..group_commands import Place
from ..model.formatting import count, format_tensor
from ..model.group_view import group_vectors
from ..model.labels import matrix_text
from ..model.semantic_zoom import MIN_SCREEN_PT, NAME_GROW, is_compact
from ..model.timeline import Frame
from ..qt_override import reported
from ..theme import THEME, name_font
from .port_item import UNIT, cfont, cline

MARGIN = 14.0 * UNIT
#: Room above a frame's content for its caption (expanded) or its title line.
CAPTION = 18.0 * UNIT
#: A collapsed box grows to fit its caption up to this wide (longer lines are cut short).
ROOM_MAX_WIDTH = 520.0 * UNIT
#: A collapsed box's title and the lines under it (points at zoom 1): as large as a
#: node box's title and main text, so that an exported frame or the projector reads
#: them as it reads the boxes (at 12-point mono they were about 13 px high at 1280x720).
TITLE_PT, BODY_PT = 13.0, 11.0


def caption_fonts() -> tuple[QFont, QFont]:
    """A collapsed box's title font and body font: the title in the node names' face,
    the body in the canvas's sans (its 1 and l differ: in mono, tesseract read
    ``View1`` as ``Viewl``)."""
    return name_font(TITLE_PT * UNIT), cfont(BODY_PT)


def caption_room(text: str) -> tuple[float, float]:
    """The room a collapsed box's caption (its title line, then its body) takes: its
    content's least width and height; engine.group_layout reserves it for a captured
    module, the frame grows to it."""
    title, body = (QFontMetricsF(f) for f in caption_fonts())
    head, *lines = text.split("\n")
    w = max([title.horizontalAdvance(head)] + [body.horizontalAdvance(ln) for ln in lines])
    h = title.lineSpacing() + body.lineSpacing() * len(lines)
    return min(w + 12 * UNIT, ROOM_MAX_WIDTH), h + 8 * UNIT


def make_room(doc: GraphDocument, sizes: dict[str, tuple[float, float]]) -> Place:
    """How a user's group collapsing makes room (``place`` of gui.group_commands): the
    boxes its frame would cover move out of its way (engine.group_layout, with this
    module's frame geometry). A captured trace lays its modules out itself."""

    def place(groups: list[Group], collapsed: str) -> dict[str, Point]:
        if doc.read_only:
            return {}
        return clear_of_collapsed(doc.positions, sizes, groups, margin=MARGIN, caption=CAPTION,
                                  gap=NODE_GAP * UNIT, first=collapsed)

    return place


def group_caption(
    doc: GraphDocument, group: Group, step: GroupStep | None = None, interactive: bool = True
) -> str:
    """The frame's text: name, inputs → outputs; collapsed, the name on a line of its
    own (the box's title), then a captured module's edge count or a user group's local
    Jacobian. Short lines: the box is only as wide as its longest.

    While a captured module's own ``step`` plays, its box says the gradient arriving at
    its outputs and the one it sends to its inputs, where it named them (as many lines:
    the box keeps the size laid out for it; the names are in the step's heading).
    ``interactive``: the window's caption, which says a module expands on a double-click
    (an exported picture cannot: it says nothing of it)."""
    members = [m for m in group.members if m in doc.graph.nodes]
    ins, outs = inputs_of(doc.graph, members), outputs_of(doc.graph, members)
    name = visible(group.title or group.id)  # a title is free text: nothing reorders it
    flow = f"{', '.join(ins) or '—'} → {', '.join(outs) or '—'}"
    if not group.collapsed:
        return f"{name}: {flow}"
    try:
        jac = local_jacobian(doc.graph, doc.results.forward, group, limit=64)
    except Exception:  # a member without a value: say so instead of a matrix
        jac = None
    if jac is None and any(doc.graph.nodes[m].op == CAPTURED_OP for m in members):
        edges = sum(1 for m in members for x in doc.graph.nodes[m].inputs if x is not None)
        flows = f"in: {_first(ins)}\nout: {_first(outs)}"
        if step is not None:
            row, vjps = group_vectors(step)
            flows = f"grad out: {_summary(row)}\ngrad in: {_summary(vjps)}"
        hint = "\n(double-click: expand)" if interactive else ""
        return f"{name}\n{count(edges, 'edge')} as one step\n{flows}{hint}"
    jtext = matrix_text(jac) if jac is not None else "(no value or too large)"
    text = f"{name}\n{flow}\nlocal Jacobian (composed from the members' steps):\nJ = {jtext}"
    carrying = doc.results.forward.requires_grad if jac is not None else set(ins)
    frozen = [x for x in ins if x not in carrying]
    return text + (f"\n(no gradient flows into {', '.join(frozen)})" if frozen else "")


#: A module's caption names this many of its inputs (or outputs), then says how many more.
NAMED = 3


def _summary(v: np.ndarray) -> str:
    """A module's gradient on one short line: a few numbers, or the count and range."""
    return format_tensor(v, max_shown=NAMED).replace("  ", " ")


def _first(names: list[str]) -> str:
    """``a, b, c + 6 more``: a module's parameters can be dozens (an attention block's
    line had run past the box's edge, cut off mid-name)."""
    more = len(names) - NAMED
    return ", ".join(names[:NAMED]) + (f" + {more} more" if more > 0 else "") or "—"


class _Full(QGraphicsSimpleTextItem):
    """A collapsed box's caption text, drawn only at zooms where it can be read (below,
    the frame draws its compact title instead)."""

    @reported
    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        frame = self.parentItem()
        if not (isinstance(frame, GroupFrame) and frame.compact_at(painter, option)):
            # (its stub wants a widget; rendered into an image, Qt passes None)
            super().paint(painter, option, widget)  # type: ignore[arg-type]


class _FullPlate(QGraphicsRectItem):
    """The opaque plate under :class:`_Full` text, drawn when the text is."""

    @reported
    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        frame = self.parentItem()
        if not (isinstance(frame, GroupFrame) and frame.compact_at(painter, option)):
            super().paint(painter, option, widget)


class GroupFrame(QGraphicsRectItem):
    """One group's frame and caption. Collapsed and zoomed out until the caption's lines
    would show smaller than the canvas's least text size, the box shows its title alone,
    as large as the box and that size allow (gui.model.semantic_zoom's rule for node
    boxes: the whole view of a small captured model chose a zoom at which the boxes'
    compact names were legible and the module captions 5 px high)."""

    def __init__(self, group_id: str) -> None:
        super().__init__()
        self.group_id = group_id
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        # collapsed, the caption sits on an opaque plate: the faded members under the
        # box would otherwise show through between its letters
        self.plate = _FullPlate(self)
        self.plate.setPen(QPen(Qt.PenStyle.NoPen))
        self.plate.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.title = _Full(self)  # collapsed: the name, over the caption
        self.caption = _Full(self)
        for item in (self.title, self.caption):
            item.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self._title = ""  # collapsed: the title the compact form shows
        self._shown: tuple | None = None  # what show_group drew last, and in which look

    def least_pt(self) -> float:
        """The canvas's least text size on screen (points; the scene's, as node boxes')."""
        return getattr(self.scene(), "min_text_pt", MIN_SCREEN_PT)

    def compact_at(self, painter: QPainter, option: QStyleOptionGraphicsItem) -> bool:
        """Collapsed, and drawn so small that its caption's lines are not legible."""
        zoom = option.levelOfDetailFromTransform(painter.worldTransform())
        return bool(self._title) and is_compact(zoom, BODY_PT, self.least_pt())

    def compact_title_pt(self, zoom: float) -> float:
        """The title's size (points at zoom 1) in the compact form at ``zoom``: the names'
        size on screen, grown as node names grow, as far as the box has room."""
        inner = self._inner()
        metrics = QFontMetricsF(caption_fonts()[0])
        wide, high = metrics.horizontalAdvance(self._title), metrics.height()
        return min(self.least_pt() * NAME_GROW / zoom,
                   TITLE_PT * inner.width() / max(wide, 1e-9),
                   TITLE_PT * inner.height() / max(high, 1e-9))

    def _inner(self) -> QRectF:
        return self.rect().adjusted(6 * UNIT, 6 * UNIT, -6 * UNIT, -6 * UNIT)

    @reported
    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        super().paint(painter, option, widget)
        if not self.compact_at(painter, option):
            return
        font = caption_fonts()[0]
        zoom = option.levelOfDetailFromTransform(painter.worldTransform())
        font.setPointSizeF(max(self.compact_title_pt(zoom), 1e-3))
        painter.setFont(font)
        painter.setPen(QColor(THEME.text))
        painter.drawText(self._inner(), Qt.AlignmentFlag.AlignCenter, self._title)

    def show_group(
        self,
        rect: QRectF,
        text: str,
        collapsed: bool,
        depth: int,
        active: bool = False,
        room: tuple[float, float] = (0.0, 0.0),
    ) -> None:
        """Frame ``rect`` (the content: member boxes and inner frames; at least ``room``
        from its top-left corner) as engine.group_layout lays it out: MARGIN around it,
        CAPTION more on top."""
        # Opening a captured model refreshes its thousand frames on each of the load's
        # signals (structure, positions, results, groups): a frame as it was is left be.
        shown = (rect.getRect(), room, text, collapsed, depth, active,
                 THEME.name, THEME.scale, THEME.high_contrast)
        if shown == self._shown:
            return
        self._shown = shown
        rect = QRectF(rect.topLeft(), rect.size().expandedTo(QSizeF(*room)))
        outer = rect.adjusted(-MARGIN, -MARGIN - CAPTION, MARGIN, MARGIN)
        self.setRect(outer)
        color = QColor(THEME.edge_active if active else THEME.group_border)
        self.setPen(
            QPen(color, cline(1.6), Qt.PenStyle.SolidLine if collapsed else Qt.PenStyle.DashLine)
        )
        fill = QColor(THEME.group_fill)
        # collapsed over its members: opaque when they are stacked under it (a laid-out
        # module, ``room`` given), else they show through faintly where they are
        fill.setAlpha((255 if any(room) else 235) if collapsed else 40)
        self.setBrush(QBrush(fill))
        self.setZValue(6 if collapsed else 0.1 - 0.01 * depth)  # collapsed: over the members
        for item in (self.title, self.caption):
            item.setBrush(QBrush(THEME.text))
        self.title.setVisible(collapsed)
        self.plate.setVisible(collapsed)
        self._title = text.partition("\n")[0] if collapsed else ""
        # the box is as wide as the layout made it: long lines are cut short
        width = outer.width() - 12 * UNIT
        if not collapsed:
            # as large as a box's lines (at 9.5 points a projector showed it 10 px high),
            # in the strip above the members that MARGIN and CAPTION leave
            font = cfont(BODY_PT, bold=True)
            self.caption.setFont(font)
            self.caption.setText(
                QFontMetricsF(font).elidedText(text, Qt.TextElideMode.ElideRight, width))
            self.caption.setPos(outer.left() + 6 * UNIT, outer.top() + 3 * UNIT)
            return
        head, _, body = text.partition("\n")
        for item, font, line in zip((self.title, self.caption), caption_fonts(), (head, body),
                                    strict=True):
            item.setFont(font)
            metrics = QFontMetricsF(font)
            item.setText("\n".join(metrics.elidedText(ln, Qt.TextElideMode.ElideRight, width)
                                   for ln in line.split("\n")))
        # title over body, as one block in the middle of the box, where the members were
        top, low = self.title.boundingRect(), self.caption.boundingRect()
        w, h = max(top.width(), low.width()), top.height() + low.height()
        x, y = outer.center().x() - w / 2, outer.center().y() - h / 2
        self.title.setPos(x, y)
        self.caption.setPos(x, y + top.height())
        pad = 4 * UNIT
        self.plate.setBrush(QBrush(THEME.group_fill))
        self.plate.setRect(QRectF(x, y, w, h).adjusted(-pad, -pad, pad, pad) & outer)


class GroupFrames:
    """Keeps one :class:`GroupFrame` per group of ``doc`` in ``scene``, placed around the
    member boxes ``boxes(id)`` (scene rectangles) whenever groups, boxes or results change."""

    def __init__(
        self, scene: QGraphicsScene, doc: GraphDocument, boxes: dict, interactive: bool = True
    ) -> None:
        self.scene, self.doc, self.boxes = scene, doc, boxes
        self.interactive = interactive  # the captions' hints (an export's have none)
        self.frames: dict[str, GroupFrame] = {}
        self.active: str | None = None  # the group whose step the player shows
        self.active_step: GroupStep | None = None  # ... and that step
        # The groups' nesting, worked out on each full refresh (the document's signals)
        # and read by the player's per-step ones: (groups, holders, inner groups, order).
        self._nesting: tuple[list[Group], dict[str, list[Group]], dict[str, list[str]],
                             list[Group]] | None = None
        # What the last full refresh placed the frames for (see refresh).
        self._moves = 0  # positionsChanged heard
        self._placed_for: tuple[object, ...] = ()  # graph, results, groups, size, moves
        doc.groupsChanged.connect(self.refresh)
        doc.resultsChanged.connect(self.refresh)
        doc.positionsChanged.connect(self._moved)
        doc.structureChanged.connect(self.refresh)

    def apply_theme(self) -> None:
        """The theme changed (a colour theme, presentation mode's contrast and scale):
        every frame is drawn again in it, though nothing it frames changed."""
        self._placed_for = ()
        self.refresh()

    def _moved(self, _ids: object) -> None:
        self._moves += 1
        self.refresh()

    def show_frame(self, frame: Frame) -> None:
        """Follow the player: outline the group whose one step is shown (only the frames
        whose outline changes are redrawn: a captured model has a thousand groups)."""
        step = frame.active_group
        gid = step.group.id if step is not None else None
        # (A module's step is one per pass, and a captured pass never changes: a new
        # step object for the same group says nothing new.)
        self.active_step = step
        if gid != self.active:
            changed = {self.active, gid}
            self.active = gid
            self.refresh(only=changed)

    def refresh(self, *_args: object, only: set[str | None] | None = None) -> None:
        """Place every group's frame (or those in ``only``) around its member boxes and
        its inner groups' frames; a group inside a collapsed one has no frame.

        Not while some boxes have no place yet: a file opened without positions (every
        captured trace) announces its structure and results before the layout places
        its boxes, and the placing announces itself (a thousand modules' frames were
        placed three times over on the way)."""
        doc = self.doc
        if only is None and doc.graph.nodes.keys() - doc.positions.keys():
            return
        if only is None:
            # A file opening announces its positions, results and groups one after
            # another: the frames are placed once, on the first of them (each full
            # refresh of a captured model's thousand frames cost ~0.1 s).
            placed_for = (doc.graph, doc.results, doc.groups, len(doc.graph), self._moves)
            kept = self._placed_for
            same = all(a is b for a, b in zip(placed_for[:3], kept[:3], strict=False))
            if kept and same and kept[3:] == placed_for[3:]:
                return
            self._placed_for = placed_for
        around, kids, order = self._nested(fresh=only is None)
        seen = set()
        # (Refreshing a few, an inner group's frame is one the last full refresh kept.)
        for group in order if only is None else [g for g in order if g.id in only]:
            if any(h.collapsed for h in around[group.id]):  # (inner frames first)
                continue
            seen.add(group.id)
            rects = [self.boxes[m].scene_rect() for m in group.members if m in self.boxes]
            inner = [k for k in kids.get(group.id, ())
                     if k in self.frames and (only is not None or k in seen)]
            rects += [self.frames[k].rect() for k in inner]
            if not rects:
                seen.discard(group.id)
                continue
            rect = rects[0]
            for r in rects[1:]:
                rect = rect.united(r)
            frame = self.frames.get(group.id)
            if frame is None:
                frame = self.frames[group.id] = GroupFrame(group.id)
                self.scene.addItem(frame)
            text = group_caption(self.doc, group)
            # a captured module's box was laid out with room for its (window's) caption
            room = caption_room(text) if group.collapsed and self.doc.read_only else (0.0, 0.0)
            playing = group.id == self.active and group.collapsed
            if playing or not self.interactive:
                text = group_caption(
                    self.doc, group, self.active_step if playing else None, self.interactive
                )
            frame.show_group(
                rect, text, group.collapsed, len(around[group.id]), group.id == self.active, room
            )
        if only is None:
            for gid in list(self.frames):
                if gid not in seen:
                    self.scene.removeItem(self.frames.pop(gid))

    def _nested(
        self, fresh: bool
    ) -> tuple[dict[str, list[Group]], dict[str, list[str]], list[Group]]:
        """Each group's holders, its direct inner groups, and the groups smallest first:
        worked out again when ``fresh`` (groups, structure or results changed), else as
        the last full refresh found them, while the document holds the same groups (a
        captured model has a thousand: working it out per step was a third of a step)."""
        groups, kept = self.doc.groups, self._nesting
        if fresh or kept is None or kept[0] is not groups or len(kept[3]) != len(groups):
            around = holders(groups)
            kids: dict[str, list[str]] = {}
            for g in groups:
                if around[g.id]:
                    kids.setdefault(around[g.id][0].id, []).append(g.id)
            kept = self._nesting = (groups, around, kids,
                                    sorted(groups, key=lambda g: len(g.members)))
        return kept[1], kept[2], kept[3]
