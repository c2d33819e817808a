"""Zoomed far out, one item draws every box in a few batched calls.

Below FAR_LOD a box is a few pixels (a rectangle and its band); Qt calling each
box's own paint cost more than the drawing. These tests check that the batched
drawing looks like the boxes' own, follows selection and moves, and that boxes
still take the mouse and paint themselves again when the view comes closer; and
that many plain edges stroked as one path look like one stroke per edge.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QRectF
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QGraphicsItem

from engine.fileformat import GraphFile
from gui.canvas import CanvasView
from gui.canvas import scene as scene_module
from gui.commands import MoveNodes, push
from gui.document import GraphDocument
from support import shuffled_graph

NO_CONTENTS = QGraphicsItem.GraphicsItemFlag.ItemHasNoContents


@pytest.fixture
def view(far_view) -> CanvasView:  # noqa: ANN001
    return far_view


def pixels(view: CanvasView) -> np.ndarray:
    view.viewport().repaint()
    image = view.viewport().grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), -1, 4).copy()


def differing(a: np.ndarray, b: np.ndarray) -> int:
    return int((np.abs(a.astype(int) - b.astype(int)).max(axis=2) > 40).sum())


def test_far_boxes_look_like_each_box_painting_itself(view: CanvasView) -> None:
    scene = view.canvas
    assert scene.far and scene.far_boxes.isVisible()
    assert all(item.flags() & NO_CONTENTS for item in scene.nodes.values())
    batched = pixels(view)
    scene.set_far(False)  # same zoom, each box paints itself (its own far branch)
    own = pixels(view)
    assert differing(batched, own) == 0
    assert differing(own, np.full_like(own, own[0, 0])) > 50  # the boxes are there


def test_coming_closer_gives_the_boxes_back_their_own_paint(view: CanvasView) -> None:
    view.zoom_by(2.0)
    scene = view.canvas
    assert not scene.far and not scene.far_boxes.isVisible()
    assert not any(item.flags() & NO_CONTENTS for item in scene.nodes.values())


def test_selection_and_moves_repaint_while_far(view: CanvasView) -> None:
    scene = view.canvas
    before = pixels(view)
    view.select_ids(["y"])
    selected = pixels(view)
    assert differing(before, selected) > 0
    item = scene.nodes["y"]
    old = (item.x(), item.y())
    new = (old[0], old[1] + 400.0)
    assert push(view.doc, MoveNodes(view.doc, {"y": old}, {"y": new})) is None
    assert (item.x(), item.y()) == new
    assert differing(selected, pixels(view)) > 0


def test_boxes_still_take_the_mouse_while_far(view: CanvasView) -> None:
    item = view.canvas.nodes["a"]
    at = view.mapFromScene(item.sceneBoundingRect().center())
    assert view.itemAt(at) is item
    assert view.itemAt(QPoint(2, 2)) is None  # empty canvas stays empty (rubber band, menu)


def test_a_closer_render_of_a_far_scene_paints_full_boxes(view: CanvasView) -> None:
    """An export renders the scene at its own scale: far or not, the same picture."""
    scene = view.canvas
    source = scene.nodes_rect().adjusted(-20, -20, 20, 20)

    def render() -> np.ndarray:
        image = QImage(int(source.width()), int(source.height()), QImage.Format.Format_RGB32)
        image.fill(0)  # a new image's memory is not cleared; render keeps the aspect ratio
        painter = QPainter(image)  # so it may leave the rounded-off last row unpainted
        scene.render(painter, QRectF(image.rect()), source)
        painter.end()
        return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), -1, 4).copy()

    assert scene.far
    far = render()
    scene.set_far(False)
    assert differing(far, render()) == 0


def test_many_plain_edges_stroked_as_one_path_look_the_same(
    shown_canvas, monkeypatch  # noqa: ANN001
) -> None:
    """A background showing most of many edges strokes them as one path, kept until
    an edge changes: the same picture as one stroke per edge, also after a move."""

    graph = shuffled_graph(random.Random(4), 70, complete=True)
    doc = GraphDocument()
    doc.load(GraphFile(graph=graph, output=list(graph.nodes)[-1], gradient=None), None)
    v = shown_canvas(doc, (600, 400))
    v.fit_all()
    scene = v.canvas
    assert len(scene.edges) > scene_module.BATCH_EDGES

    def background(batch: int) -> np.ndarray:
        monkeypatch.setattr(scene_module, "BATCH_EDGES", batch)
        rect = v.visible_scene_rect()
        image = QImage(600, 400, QImage.Format.Format_RGB32)
        image.fill(0)  # the window is the rect rounded: its edges may stay unpainted
        painter = QPainter(image)
        painter.setWindow(rect.toRect())
        scene.drawBackground(painter, rect)
        painter.end()
        return np.frombuffer(image.constBits(), np.uint8).reshape(400, -1, 4).copy()

    assert differing(background(64), background(10**9)) == 0
    nid = list(graph.nodes)[5]
    x, y = doc.positions[nid]
    assert push(doc, MoveNodes(doc, {nid: (x, y)}, {nid: (x + 300.0, y + 200.0)})) is None
    after = background(64)
    assert differing(after, background(10**9)) == 0
    assert differing(after, np.zeros_like(after)) > 100  # edges and paper were drawn


def test_deleting_selected_boxes_while_far_raises_nothing(view: CanvasView, qtbot) -> None:  # noqa: ANN001
    # Deleting deselects the boxes as they leave the scene; the batched item must
    # forget them instead of asking a box that is gone (a KeyError in a slot).
    view.select_all()
    with qtbot.captureExceptions() as raised:
        view.delete_selected()
        pixels(view)
    assert raised == []
    assert not view.canvas.nodes
    view.doc.undo_stack.undo()
    assert pixels(view).std() > 0


def test_selecting_many_boxes_while_far_looks_for_changes_once(view, monkeypatch) -> None:  # noqa: ANN001
    # Each box's setSelected emits selectionChanged; the batched item asking every
    # box about its selection each time made selecting a duplicate's copies quadratic.
    scene = view.canvas
    calls = []
    real = scene.far_boxes.selection_changed
    monkeypatch.setattr(scene.far_boxes, "selection_changed", lambda: calls.append(real()))
    before = pixels(view)
    view.select_all()
    assert len(calls) == 1
    assert all(item.isSelected() for item in scene.nodes.values())
    selected = pixels(view)
    assert differing(before, selected) > 0  # the batched boxes show the selection
    view.select_ids([])
    assert len(calls) == 2
    assert differing(before, pixels(view)) == 0


def test_a_selection_while_far_repaints_the_boxes_it_changed_without_asking_each(
    view, monkeypatch,  # noqa: ANN001
) -> None:
    # The batched item asked every box whether it was selected (two looks per add on
    # a 200-node graph); the scene's selected items say which are, and only the boxes
    # whose selection changed are repainted.
    from gui.canvas.node_item import NodeItem

    scene = view.canvas
    pixels(view)
    asked: list[str] = []
    real_is_selected = NodeItem.isSelected
    monkeypatch.setattr(NodeItem, "isSelected",
                        lambda self: asked.append(self.node_id) or real_is_selected(self))
    passed: list[list[str]] = []
    real_changed = scene.far_boxes.changed
    monkeypatch.setattr(scene.far_boxes, "changed",
                        lambda ids=None: (passed.append(sorted(ids or [])), real_changed(ids)))
    assert scene.far_boxes._looks is not None
    a, b = sorted(scene.far_boxes._looks)[:2]
    view.select_ids([a])
    view.select_ids([b])
    assert passed[-2:] == [[a], [a, b]]
    assert len(asked) == 3  # each box repainted reads its own selection: no scan
    assert scene.nodes[b].isSelected() and not scene.nodes[a].isSelected()


def test_a_table_updated_row_by_row_paints_as_one_made_afresh(view: CanvasView) -> None:
    # A select, a move and an add update the rows of the boxes they change (making the
    # whole table again was most of an edit's far paint): the pixels must be those of a
    # table made from every box.
    scene = view.canvas
    pixels(view)  # the table is made
    view.select_ids(["y"])
    item = scene.nodes["y"]
    old = (item.x(), item.y())
    assert push(view.doc, MoveNodes(view.doc, {"y": old}, {"y": (old[0], old[1] + 400.0)})) is None
    added = view.add_node_at("input", scene.nodes_rect().center())
    assert added is not None and scene.nodes[added].isSelected()
    updated = scene.far_boxes._table
    assert updated is not None and added in updated.rows  # rows updated, not made again
    kept = pixels(view)
    scene.far_boxes.changed()  # forget everything: a table made afresh
    assert differing(kept, pixels(view)) == 0


def test_a_tables_first_paint_keeps_no_rectangles_and_paints_as_the_kept_ones(
    view: CanvasView,
) -> None:
    # A file opens to one paint: the rectangles made for it are not kept (they were an
    # object per box and band for the collector); a later paint makes them to keep.
    scene = view.canvas
    far = scene.far_boxes
    far.changed()  # a table made afresh, as a file opens
    table = far._table
    assert table is not None and len(table.rows) == len(scene.nodes)
    first = pixels(view)
    assert table._boxes is None and table._painted  # painted, nothing kept
    far.update()  # the next paint draws every box again
    again = pixels(view)
    assert table._boxes is not None and len(table._boxes) == len(table._bands) == len(scene.nodes)
    assert np.array_equal(first, again)
    assert differing(first, np.full_like(first, first[0, 0])) > 50  # the boxes are there
