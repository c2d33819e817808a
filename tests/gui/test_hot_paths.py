"""The shortcuts on the paths a user waits on give what the long way gives.

Follow step's camera reads boxes from a table kept by the boxes that changed; a zoom
gesture reuses the boxes' pictures until it ends; removing boxes far away tells the
far painter once; a repaint asks only the items in view. Each test drives the real
canvas and compares against the long way (a fresh reading, the cache mode boxes
normally have).
"""

from __future__ import annotations

import dataclasses
from math import inf

import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsView,
    QStyleOptionGraphicsItem,
    QWidget,
)

from engine.fileformat import GraphFile
from gui.canvas import CanvasView
from gui.canvas import view as view_module
from gui.canvas.camera_boxes import CameraBoxes
from gui.canvas.zoom_gesture import REST_MS
from gui.commands import MoveNodes, push
from gui.document import GraphDocument
from gui.model.timeline import Timeline
from support import script, wheel


@pytest.fixture
def followed(shown_canvas) -> CanvasView:  # noqa: ANN001
    graph, output = script("bench_gui").layered_graph(30, seed=30)
    doc = GraphDocument()
    doc.load(GraphFile(graph=graph, output=output), None)
    view = shown_canvas(doc, (900, 600))
    view.follow_step = True
    return view


def fresh(view: CanvasView) -> CameraBoxes:
    scene = view.canvas
    return CameraBoxes(scene.nodes, scene.edges).refresh()


def assert_current(view: CanvasView) -> None:
    kept, long_way = view.canvas.camera_boxes.refresh(), fresh(view)
    assert kept.rects == long_way.rects
    assert kept.bounds == long_way.bounds
    assert kept.pairs == long_way.pairs
    assert (kept.names, kept.numbers, kept.whole) == (
        long_way.names, long_way.numbers, long_way.whole)
    for table in (kept.names, kept.numbers, kept.whole):  # the greatest, kept as boxes change
        assert kept.most(table) == max(table.get(n, inf) for n in kept.rects)


def test_the_cameras_greatest_zooms_kept_step_by_step_frame_as_a_walk_over_every_box(
    followed: CanvasView, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each step changes two or three boxes' zooms (a box in the step may need more
    room): the greatest of each table, kept as they change, is what a walk over every
    box gives, and so is where the camera looks."""
    view, timeline = followed, Timeline(followed.doc.results)
    model = view_module.camera_target
    walked: list[object] = []  # each target as the camera finds it without ``most``
    monkeypatch.setattr(view_module, "camera_target",
                        lambda *a: walked.append(model(*a[:-1])) or model(*a))
    for k in [*range(len(timeline.steps)), *range(len(timeline.steps) - 1, -1, -5)]:
        view.show_frame(timeline.frame(timeline.position_of_step(k)))
        assert_current(view)
        assert view.camera_target() == walked[-1]


def test_the_cameras_table_of_boxes_matches_a_fresh_reading_through_an_edit_session(
    followed: CanvasView,
) -> None:
    view, doc = followed, followed.doc
    timeline = Timeline(doc.results)
    for k in range(0, len(timeline.steps), 7):  # boxes' content changes step to step
        view.show_frame(timeline.frame(timeline.position_of_step(k)))
        assert_current(view)
    nid = next(iter(doc.graph.nodes))
    x, y = doc.positions[nid]
    assert push(doc, MoveNodes(doc, {nid: (x, y)}, {nid: (x + 400.0, y + 90.0)})) is None
    assert_current(view)
    view.follow_step = False  # the text floor drops: every box's zooms differ
    assert_current(view)
    view.add_node_at("input", QPointF(x, y - 300.0))  # a box and no edge more
    assert_current(view)
    doc.undo_stack.undo()
    assert_current(view)


def test_a_box_re_measures_its_zooms_only_when_its_content_changed(
    followed: CanvasView, monkeypatch: pytest.MonkeyPatch,
) -> None:
    item = next(iter(followed.canvas.nodes.values()))
    first = item.compact_min_zooms()
    measured = []
    real = item._measure_min_zooms  # noqa: SLF001 - counting the real measurement
    monkeypatch.setattr(item, "_measure_min_zooms", lambda: measured.append(1) or real())
    assert item.compact_min_zooms() == first and measured == []
    assert item.content is not None
    item.set_content(dataclasses.replace(item.content, grad="9.87654321"))
    item.compact_min_zooms()
    assert measured == [1]


def test_boxes_showing_the_same_texts_are_measured_once(
    followed: CanvasView, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Measuring the boxes' texts was a sixth of opening a big file: a file opened again,
    # or boxes deleted and brought back, show the texts measured before.
    from gui.canvas import node_item

    item = next(iter(followed.canvas.nodes.values()))
    assert item.content is not None
    asked: list[str] = []
    real = node_item.advance
    monkeypatch.setattr(node_item, "advance", lambda fm, text: asked.append(text) or real(fm, text))
    twin = node_item.NodeItem("twin", item.content)
    assert twin.size == item.size and item.content.title not in asked
    other = node_item.NodeItem("other", dataclasses.replace(item.content, title="other = a + b"))
    assert "other = a + b" in asked and other.size[1] == item.size[1]


def test_a_zoom_gesture_keeps_pictures_and_boxes_come_back_sharp_when_it_ends(
    followed: CanvasView, qtbot,  # noqa: ANN001
) -> None:
    view = followed
    view.look_at((view.canvas.nodes_rect().center().x(), view.canvas.nodes_rect().center().y()),
                 1.0)
    device = QGraphicsItem.CacheMode.DeviceCoordinateCache
    boxes = list(view.canvas.nodes.values())
    assert all(item.cacheMode() == device for item in boxes)
    zoom = view.zoom()
    wheel(view, 1)
    wheel(view, 1)
    assert view.zoom() == pytest.approx(zoom * 1.15**2)
    held = [item for item in boxes if item.cacheMode() != device]
    assert held and all(
        item.cacheMode() == QGraphicsItem.CacheMode.ItemCoordinateCache for item in held)
    qtbot.wait(REST_MS + 150)
    assert all(item.cacheMode() == device for item in boxes)


def test_a_wheel_step_paints_the_background_anew_and_keeps_it_cached(
    followed: CanvasView, qtbot,  # noqa: ANN001
) -> None:
    """A wheel step does not scroll the cached background the scale threw away: the
    canvas paints what it paints with its background drawn from nothing, and caches
    the background again for the pans that follow the gesture."""
    view = followed
    centre = view.canvas.nodes_rect().center()
    view.look_at((centre.x(), centre.y()), 1.0)
    view.viewport().grab()
    for notches in (1, 1, -1, -1, -1):
        wheel(view, notches)
        stepped = view.viewport().grab().toImage()
        view.resetCachedContent()
        assert view.viewport().grab().toImage() == stepped
    qtbot.wait(REST_MS + 150)
    assert view.cacheMode() == QGraphicsView.CacheModeFlag.CacheBackground
    rested = view.viewport().grab().toImage()
    view.resetCachedContent()
    assert view.viewport().grab().toImage() == rested


def test_deleting_every_box_while_far_looks_for_selection_changes_once(
    far_view: CanvasView, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each removed box deselects itself; asking every box each time grew as N^1.67.
    scene = far_view.canvas
    calls = []
    real = scene.far_boxes.selection_changed
    monkeypatch.setattr(scene.far_boxes, "selection_changed", lambda: calls.append(real()))
    far_view.select_all()
    calls.clear()
    far_view.delete_selected()
    assert not scene.nodes
    assert len(calls) <= 2  # the removal's batch, and the view's own deselect


class Probe(QGraphicsItem):
    """An item that counts how often a repaint asks for its extent."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt API
        self.asked += 1
        return QRectF(0, 0, 20, 20)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        pass


def test_a_repaint_asks_nothing_of_the_items_out_of_view(followed: CanvasView) -> None:
    # Without a scene index every repaint visited every item: half a pan step at
    # 5,000 nodes. An item far off screen (past the index's cells, which are coarse
    # for a small graph) is not asked; one in view is.
    view = followed
    view.look_at((view.canvas.nodes_rect().center().x(), view.canvas.nodes_rect().center().y()),
                 1.0)
    shown = view.visible_scene_rect()
    away, near = Probe(), Probe()
    away.setPos(shown.right() + 30_000.0, shown.bottom() + 30_000.0)
    near.setPos(shown.center())
    for probe in (away, near):
        view.canvas.addItem(probe)
    for trip in range(2):  # as opened, then after a trip far out (no index there) and back
        if trip:
            view.canvas.set_far(True)
            view.canvas.set_far(False)
        view.viewport().repaint()  # the index files the items
        away.asked = near.asked = 0
        for _ in range(3):
            view.viewport().repaint()
        assert away.asked == 0
        assert near.asked > 0
