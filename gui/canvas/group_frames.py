"""Groups on the canvas: a labelled frame around each group's member boxes.

Expanded, a group is an outline behind its members with its title, inputs and
outputs. Collapsed, a box covers the members (their edges still show where its
inputs enter and its outputs leave) and shows the group's local Jacobian, the one
its single step in a grouped playback (engine.groups.playback_steps) multiplies
by. Frames never take clicks: the boxes under them do.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSizeF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsScene, QGraphicsSimpleTextItem

from engine.graph import CAPTURED_OP
from engine.group_layout import holders
from engine.groups import Group, inputs_of, local_jacobian, outputs_of

from ..document import GraphDocument
from ..model.labels import matrix_text
from ..model.timeline import Frame
from ..theme import THEME
from .port_item import UNIT, cfont, cline

MARGIN = 14.0 * UNIT
#: Room above a frame's content for its caption (expanded) or its title line.
CAPTION = 18.0 * UNIT
#: A collapsed box grows to fit its caption up to this wide (longer lines are cut short).
ROOM_MAX_WIDTH = 520.0 * UNIT


def caption_room(text: str) -> tuple[float, float]:
    """The room a collapsed box's caption takes (its content's least width and height):
    engine.group_layout reserves it for a captured module, the frame grows to it."""
    metrics = QFontMetricsF(cfont(12, mono=True))
    lines = text.split("\n")
    w = max(metrics.horizontalAdvance(line) for line in lines) + 12 * UNIT
    return min(w, ROOM_MAX_WIDTH), metrics.lineSpacing() * len(lines) + 8 * UNIT


def group_caption(doc: GraphDocument, group: Group) -> str:
    """The frame's text: name, inputs → outputs; collapsed, also the local Jacobian."""
    members = [m for m in group.members if m in doc.graph.nodes]
    ins, outs = inputs_of(doc.graph, members), outputs_of(doc.graph, members)
    name = group.title or group.id
    head = f"{name}: {', '.join(ins) or '—'} → {', '.join(outs) or '—'}"
    if not group.collapsed:
        return head
    try:
        jac = local_jacobian(doc.graph, doc.results.forward, group, limit=64)
    except Exception:  # a member without a value: say so instead of a matrix
        jac = None
    if jac is None and any(doc.graph.nodes[m].op == CAPTURED_OP for m in members):
        return f"{head}\n{len(members)} PyTorch nodes as one step (double-click: expand)"
    jtext = matrix_text(jac) if jac is not None else "(no value or too large)"
    text = f"{head}\nlocal Jacobian (composed from the members' steps):\nJ = {jtext}"
    carrying = doc.results.forward.requires_grad if jac is not None else set(ins)
    frozen = [x for x in ins if x not in carrying]
    return text + (f"\n(no gradient flows into {', '.join(frozen)})" if frozen else "")


class GroupFrame(QGraphicsRectItem):
    """One group's frame and caption."""

    def __init__(self, group_id: str) -> None:
        super().__init__()
        self.group_id = group_id
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setAcceptHoverEvents(False)
        # collapsed, the caption sits on an opaque plate: the faded members under the
        # box would otherwise show through between its letters
        self.plate = QGraphicsRectItem(self)
        self.plate.setPen(QPen(Qt.PenStyle.NoPen))
        self.plate.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.caption = QGraphicsSimpleTextItem(self)
        self.caption.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self._shown: tuple | None = None  # what show_group drew last, and in which look

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
        self.caption.setFont(cfont(12, mono=True) if collapsed else cfont(9.5, bold=True))
        self.caption.setBrush(QBrush(THEME.text))
        if collapsed:  # the box is as wide as the layout made it: long lines are cut short
            metrics, width = QFontMetricsF(self.caption.font()), outer.width() - 12 * UNIT
            text = "\n".join(
                metrics.elidedText(line, Qt.TextElideMode.ElideRight, width)
                for line in text.split("\n")
            )
        self.caption.setText(text)
        box = self.caption.boundingRect()
        if collapsed:  # the Jacobian in the middle of the box, where the members were
            self.caption.setPos(
                outer.center().x() - box.width() / 2, outer.center().y() - box.height() / 2
            )
            self.plate.setBrush(QBrush(THEME.group_fill))
            pad = 4 * UNIT
            self.plate.setRect(
                box.translated(self.caption.pos()).adjusted(-pad, -pad, pad, pad) & outer
            )
        else:
            self.caption.setPos(outer.left() + 6 * UNIT, outer.top() + 3 * UNIT)
        self.plate.setVisible(collapsed)


class GroupFrames:
    """Keeps one :class:`GroupFrame` per group of ``doc`` in ``scene``, placed around the
    member boxes ``boxes(id)`` (scene rectangles) whenever groups, boxes or results change."""

    def __init__(self, scene: QGraphicsScene, doc: GraphDocument, boxes: dict) -> None:
        self.scene, self.doc, self.boxes = scene, doc, boxes
        self.frames: dict[str, GroupFrame] = {}
        self.active: str | None = None  # the group whose step the player shows
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

    def _moved(self, _ids: object) -> None:
        self._moves += 1
        self.refresh()

    def show_frame(self, frame: Frame) -> None:
        """Follow the player: outline the group whose one step is shown (only the frames
        whose outline changes are redrawn: a captured model has a thousand groups)."""
        gid = frame.active_group.group.id if frame.active_group is not None else None
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
            # a captured module's box was laid out with room for its caption
            room = caption_room(text) if group.collapsed and self.doc.read_only else (0.0, 0.0)
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
