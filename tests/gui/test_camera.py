"""The camera that follows the step: every example, every step, readable and in view.

A class at the back of the room reads the boxes of the edge being explained; these
tests hold the camera to that at 1280x720 in presentation mode, and check the pure
camera function and the Follow step toggle on their own.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest
from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtWidgets import QApplication

from engine.examples import list_examples
from engine.fileformat import GraphFile, load
from gui.app import create_window
from gui.document import GraphDocument
from gui.export.frame_sheet import frame_sheet
from gui.export.options import View
from gui.main_window import MainWindow
from gui.model.camera import (
    COMFORT,
    MARGIN_PX,
    SMALL_GRAPH_NODES,
    CameraTarget,
    camera_target,
    interpolate,
    neighbourhood,
)
from gui.model.semantic_zoom import MIN_EXTRA_SHARE
from gui.theme import CHAIN_RULE_PT, PRESENTATION_SCALE, THEME
from support import script

EXAMPLES = [path for path, _title in list_examples()]


def box(x: float, y: float, w: float = 100.0, h: float = 50.0) -> tuple[float, ...]:
    return (x, y, w, h)


# ----------------------------------------------------------------------------- pure function


def test_neighbourhood_is_the_edge_and_its_direct_neighbours() -> None:
    edges = [("a", "b"), ("b", "c"), ("c", "d"), ("e", "c"), ("d", "f")]
    near = neighbourhood(edges, "b", "c")
    assert near[:2] == ["c", "b"] and set(near) == {"a", "b", "c", "d", "e"}


def test_small_graph_is_framed_whole_and_never_blown_up() -> None:
    boxes = {"a": box(0, 0), "b": box(200, 0)}
    t = camera_target(boxes, [("a", "b")], ("a", "b"), (1280, 720), readable=1.2)
    assert t is not None and set(t.nodes) == {"a", "b"}
    assert t.zoom == pytest.approx(1.8)  # 1.5 x readable: fits, capped
    assert t.center == (150.0, 25.0)


def test_big_graph_frames_the_neighbourhood_at_readable_zoom() -> None:
    # a chain of 30 boxes: the whole is far too wide at readable zoom
    boxes = {f"n{i}": box(i * 200.0, 0) for i in range(30)}
    edges = [(f"n{i}", f"n{i + 1}") for i in range(29)]
    t = camera_target(boxes, edges, ("n10", "n11"), (1280, 720), readable=1.2)
    assert t is not None and set(t.nodes) == {"n9", "n10", "n11", "n12"}
    assert t.zoom >= 1.2
    x, y, w, h = t.visible_rect((1280, 720))
    for n in t.nodes:
        bx, by, bw, bh = boxes[n]
        assert x <= bx and bx + bw <= x + w and y <= by and by + bh <= y + h


def test_far_apart_pair_is_still_shown_whole() -> None:
    boxes = {"a": box(0, 0), "b": box(5000, 0), "c": box(2500, 400)}
    t = camera_target(boxes, [("a", "b"), ("c", "b")], ("a", "b"), (1280, 720), readable=1.2)
    assert t is not None and t.nodes == ("b", "a") and t.zoom < 1.2
    x, _y, w, _h = t.visible_rect((1280, 720))
    assert x <= 0 and 5100 <= x + w


def test_no_active_edge_frames_everything_and_empty_graph_has_no_target() -> None:
    boxes = {f"n{i}": box(i * 200.0, 0) for i in range(30)}
    t = camera_target(boxes, [], None, (1280, 720), readable=1.2)
    assert t is not None and len(t.nodes) == 30 and t.zoom < 1.2
    assert camera_target({}, [], None, (1280, 720), readable=1.2) is None


def _chain(n: int) -> tuple[dict[str, tuple[float, ...]], list[tuple[str, str]]]:
    """``n`` boxes in a row, 200 apart, each feeding the next."""
    boxes = {f"n{i}": box(i * 200.0, 0) for i in range(n)}
    return boxes, [(f"n{i}", f"n{i + 1}") for i in range(n - 1)]


def test_whole_graph_stays_for_every_step_while_every_box_is_legible_in_it() -> None:
    boxes, edges = _chain(12)  # 2300 wide: the whole shows at 1248 / 2300 = 0.54
    compact = {n: 0.5 for n in boxes}
    for a, b in edges:
        t = camera_target(boxes, edges, (a, b), (1280, 720), readable=1.2, compact_zoom=compact)
        assert t is not None and len(t.nodes) == 12 and t.zoom == pytest.approx(1248 / 2300)


def test_a_graph_too_big_to_read_whole_is_followed_at_every_step_at_one_zoom() -> None:
    # one box needs 0.6 to show its name and number: the whole (0.54) is not legible,
    # so every step is followed, also those far from that box, all at the same zoom
    boxes, edges = _chain(12)
    compact = {n: 0.5 for n in boxes} | {"n11": 0.6}
    zooms = set()
    for a, b in edges:
        t = camera_target(boxes, edges, (a, b), (1280, 720), readable=1.2, compact_zoom=compact)
        assert t is not None and len(t.nodes) < 12 and a in t.nodes and b in t.nodes
        zooms.add(round(t.zoom, 9))
        x, y, w, h = t.visible_rect((1280, 720))
        for n in t.nodes:
            bx, by, bw, bh = boxes[n]
            assert x <= bx and bx + bw <= x + w and y <= by and by + bh <= y + h
    assert zooms == {round(COMFORT * 0.6, 9)}  # comfortably above the floor, only panning


def test_a_small_graph_is_whole_where_its_names_are_legible_though_numbers_are_not() -> None:
    boxes, edges = _chain(12)  # the whole shows at 0.54: names need 0.5, numbers 0.6
    names = {n: 0.5 for n in boxes}
    numbers = {n: 0.6 for n in boxes}
    view = (1280, 720)
    for a, b in edges:
        t = camera_target(boxes, edges, (a, b), view, 1.2, compact_zoom=names, number_zoom=numbers)
        assert t is not None and len(t.nodes) == 12
    # a step whose active box needs more (its gradient too) is followed
    active = names | {"n4": 0.6}
    t = camera_target(
        boxes, edges, ("n3", "n4"), view, 1.2, compact_zoom=active, number_zoom=numbers
    )
    assert t is not None and len(t.nodes) < 12 and {"n3", "n4"} <= set(t.nodes)
    # unless that gradient, shortened to the box, is legible in the whole view
    shortened = names | {"n4": 0.52}
    t = camera_target(boxes, edges, ("n3", "n4"), view, 1.2, compact_zoom=active,
                      number_zoom=numbers, whole_zoom=shortened)
    assert t is not None and len(t.nodes) == 12
    # ... and the step's label has room in that view (else the step is followed)
    asked = []

    def no_room(rect: tuple[float, ...], zoom: float) -> bool:
        asked.append((rect, zoom))
        return False

    t = camera_target(boxes, edges, ("n3", "n4"), view, 1.2, compact_zoom=active,
                      number_zoom=numbers, whole_zoom=shortened, label_fits=no_room)
    assert t is not None and len(t.nodes) < 12 and len(asked) == 1
    # the same two rows of boxes past SMALL_GRAPH_NODES: followed at every step
    big = boxes | {f"m{i}": box(i * 200.0, 300) for i in range(12)}
    assert len(big) > SMALL_GRAPH_NODES
    names = {n: 0.5 for n in big}
    numbers = {n: 0.6 for n in big}
    for a, b in edges:
        t = camera_target(big, edges, (a, b), view, 1.2, compact_zoom=names,
                          number_zoom=numbers, whole_zoom=names)
        assert t is not None and len(t.nodes) < len(big)


def test_following_keeps_to_the_graph_at_its_ends_and_centres_the_step_between() -> None:
    boxes, edges = _chain(12)
    compact = {n: 0.6 for n in boxes}
    view = (1280, 720)
    first = camera_target(boxes, edges, ("n0", "n1"), view, readable=1.2, compact_zoom=compact)
    last = camera_target(boxes, edges, ("n10", "n11"), view, readable=1.2, compact_zoom=compact)
    middle = camera_target(boxes, edges, ("n5", "n6"), view, readable=1.2, compact_zoom=compact)
    assert first is not None and last is not None and middle is not None
    margin = MARGIN_PX / first.zoom
    x, _y, _w, _h = first.visible_rect(view)
    assert x == pytest.approx(-margin)  # no paper left of the first box
    x, _y, w, _h = last.visible_rect(view)
    assert x + w == pytest.approx(2300 + margin)  # nor right of the last
    assert middle.center[0] == pytest.approx((1000 + 1300) / 2)  # n4..n7's middle
    # the graph is lower than the view: it stays in the middle, every step
    for t in (first, middle, last):
        assert t.center[1] == pytest.approx(25.0)


def test_following_zooms_out_for_a_wide_neighbourhood_but_not_below_legible() -> None:
    boxes, edges = _chain(12)
    boxes["far"] = box(2200, 300)  # n1 also feeds a box at the other end
    edges.append(("n1", "far"))
    compact = {n: 0.5 for n in boxes} | {"n11": 0.6}
    t = camera_target(boxes, edges, ("n0", "n1"), (1280, 720), readable=1.2, compact_zoom=compact)
    assert t is not None and "far" in t.nodes
    assert t.zoom < COMFORT * 0.6 and t.zoom >= 0.5  # fits n0..far, names still legible
    x, _y, w, _h = t.visible_rect((1280, 720))
    assert x <= 0 and 2300 <= x + w


def test_interpolation_starts_and_ends_on_the_targets() -> None:
    a, b = CameraTarget((0.0, 0.0), 1.0, ()), CameraTarget((100.0, 50.0), 4.0, ())
    assert interpolate(a, b, 0.0) == ((0.0, 0.0), 1.0)
    assert interpolate(a, b, 1.0) == ((100.0, 50.0), 4.0)
    assert interpolate(a, b, 0.5)[1] == pytest.approx(2.0)  # geometric zoom


# ----------------------------------------------------------------------------- the window


@pytest.fixture
def presenting(qtbot, settings_sandbox, no_dialogs):  # noqa: ANN001, ANN201
    """A window in presentation mode with a 1280x720 screen's worth of room."""
    win: MainWindow = create_window()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    win.enter_presentation()
    win.showNormal()  # the offscreen screen is not 1280x720: size the window instead
    win.resize(1280, 720)
    qtbot.wait(20)
    QApplication.processEvents()
    win.canvas.animations_enabled = False
    yield win
    win.leave_presentation()
    win.doc.undo_stack.clear()
    win.close()
    THEME.scale, THEME.high_contrast = 1.0, False


def _visible(win: MainWindow) -> QRectF:
    view = win.canvas
    return view.mapToScene(view.viewport().rect()).boundingRect()


def test_presentation_camera_frames_every_step_of_every_example_readably(presenting) -> None:  # noqa: ANN001
    win = presenting
    assert win.canvas.follow_step and win.named_actions["follow"].isChecked()
    assert THEME.scale == PRESENTATION_SCALE
    panel_pt = CHAIN_RULE_PT * THEME.scale
    checked = 0
    for path in EXAMPLES:
        assert win.files.load_path(path, example=True)
        QApplication.processEvents()
        tl = win.player.timeline
        for k in range(1, len(tl.steps) + 1):
            win.player.seek(tl.position_of_step(k))
            step = win.player.frame.active
            visible = _visible(win)
            for nid in (step.consumer, step.operand):
                rect = win.canvas.node_item(nid).scene_rect()
                assert visible.contains(rect), f"{path.name} step {k}: {nid} outside the view"
            for nid in (step.consumer, step.operand):
                on_screen_pt = win.canvas.box_text_pt(nid)
                assert on_screen_pt >= panel_pt - 1e-6, (
                    f"{path.name} step {k}: {nid} text {on_screen_pt:.1f} pt < {panel_pt} pt"
                )
                # a compact box of the step keeps its gradient line, large enough
                item = win.canvas.node_item(nid)
                form = item.compact_form(win.canvas.zoom())
                if form is not None and item.content.grad is not None:
                    grad_pt = {ln.kind: pt for ln, pt in form}.get("grad", 0.0)
                    assert grad_pt * win.canvas.zoom() >= MIN_EXTRA_SHARE * panel_pt - 1e-6, (
                        f"{path.name} step {k}: {nid} gradient line missing or small"
                    )
            checked += 1
    assert checked > 50


class Framed(NamedTuple):
    """One step of an exported lesson: the camera's target, the scene rectangle shown,
    and the rectangle around every box and the step's label."""

    target: CameraTarget
    shown: QRectF
    world: QRectF


def _exported_views(doc: GraphDocument) -> list[Framed]:
    """Every step of ``doc`` as a 1280x720 canvas-only export frames it."""
    out = []
    with frame_sheet(doc, (1280, 720), View.CANVAS) as sheet:
        tl = sheet.player.timeline
        for k in range(1, len(tl.steps) + 1):
            sheet.show_position(tl.position_of_step(k))
            target = sheet.canvas.camera_target()
            assert target is not None
            scene = sheet.canvas.canvas
            rects = [item.scene_rect() for item in scene.nodes.values()]
            world = rects[0]
            for rect in [*rects[1:], scene.label_home()] if scene.label.isVisible() else rects:
                world = world.united(rect)
            out.append(Framed(target, _visible(sheet), world))
    return out


def test_exported_examples_show_the_whole_graph_at_every_step(qapp) -> None:  # noqa: ANN001
    for path in EXAMPLES:
        doc = GraphDocument()
        doc.load(load(path, partial=True), path)
        for k, framed in enumerate(_exported_views(doc), 1):
            assert set(framed.target.nodes) == set(doc.graph.nodes), f"{path.name} {k}"


def test_a_mid_size_graph_is_followed_at_every_step_within_the_graph(qapp) -> None:  # noqa: ANN001
    # 25 nodes (bench_legibility's): whole, its names and numbers would be too small
    # to read, so no step shows it whole (before, the first and last steps did, at
    # the floor size, and the steps between were close-ups: the view jumped)
    graph, output = script("bench_gui").layered_graph(30, seed=30)
    doc = GraphDocument()
    doc.load(GraphFile(graph=graph, output=output), None)
    views = _exported_views(doc)
    for k, (target, shown, world) in enumerate(views, 1):
        assert len(target.nodes) < len(doc.graph.nodes), f"step {k}: the whole graph"
        # no paper beyond the graph where it is larger than the view; all of it where not
        margin = MARGIN_PX / target.zoom + 1
        for lo, size in ((QRectF.left, QRectF.width), (QRectF.top, QRectF.height)):
            a, b = lo(shown), lo(shown) + size(shown)
            w0, w1 = lo(world), lo(world) + size(world)
            if size(shown) < size(world):
                assert w0 - margin <= a and b <= w1 + margin, f"step {k}: beyond the graph"
            else:
                assert a <= w0 and w1 <= b, f"step {k}: part of the graph's height cut"
    zooms = sorted(framed.target.zoom for framed in views)
    assert zooms[len(zooms) // 4] == pytest.approx(zooms[3 * len(zooms) // 4], rel=0.1)


def test_user_zoom_pauses_following_until_next_play(presenting, qtbot) -> None:  # noqa: ANN001
    win = presenting
    tl = win.player.timeline
    win.player.seek(tl.position_of_step(1))
    followed = win.canvas.zoom()
    win.canvas.zoom_by(0.5)  # programmatic zoom is not the user's
    qtbot.keyClick(win.canvas, Qt.Key.Key_F)  # Fit All: the user's own choice
    assert not win.canvas.following and win.canvas.follow_step
    fitted = win.canvas.zoom()
    win.player.seek(tl.position_of_step(2))
    assert win.canvas.zoom() == pytest.approx(fitted)  # paused: the camera stays put
    win.player.play()
    win.player.pause()
    assert win.canvas.following
    assert win.canvas.zoom() != pytest.approx(fitted) or followed == pytest.approx(fitted)


def test_follow_step_toggle_and_window_default(qtbot, settings_sandbox, no_dialogs) -> None:  # noqa: ANN001
    win: MainWindow = create_window()
    qtbot.addWidget(win)
    win.resize(1280, 720)
    win.show()
    qtbot.waitExposed(win)
    try:
        assert not win.canvas.follow_step  # the window's free view by default
        win.named_actions["follow"].trigger()
        assert win.canvas.follow_step and win.named_actions["follow"].isChecked()
        win.canvas.animations_enabled = False
        tl = win.player.timeline
        win.player.seek(tl.position_of_step(2))
        target = win.canvas.camera_target()
        centre = win.canvas.mapToScene(win.canvas.viewport().rect().center())
        assert abs(centre.x() - target.center[0]) < 2 and abs(centre.y() - target.center[1]) < 2
        # a wheel turn is the user's: following pauses
        pos = win.canvas.viewport().rect().center()
        qtbot.mouseMove(win.canvas.viewport(), pos)
        win.canvas.wheelEvent(_wheel(win.canvas, pos))
        assert not win.canvas.following
        win.named_actions["follow"].trigger()
        assert not win.canvas.follow_step and not win.named_actions["follow"].isChecked()
    finally:
        win.close()


def _wheel(view, pos: QPoint):  # noqa: ANN001, ANN202
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QWheelEvent

    p = QPointF(pos)
    return QWheelEvent(
        p,
        QPointF(view.viewport().mapToGlobal(pos)),
        QPoint(0, 0),
        QPoint(0, 120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )


def test_a_small_graph_with_long_gradients_is_whole_at_every_step(qapp) -> None:  # noqa: ANN001
    # 20 nodes of 3-vectors (the legibility benchmark's generator): whole, every name
    # is legible, but an active box's whole gradient line did not fit its box, and
    # the camera closed in on the step, leaving most names out. Shortened to its box
    # (``grad → [2.098, 1.1…``) the line stays legible in the whole view.
    graph, output = script("bench_gui").layered_graph(21, seed=21)
    assert len(graph.nodes) == SMALL_GRAPH_NODES
    doc = GraphDocument()
    doc.load(GraphFile(graph=graph, output=output), None)
    with frame_sheet(doc, (1280, 720), View.CANVAS) as sheet:
        tl = sheet.player.timeline
        shortened = 0
        for k in range(1, len(tl.steps) + 1):
            sheet.show_position(tl.position_of_step(k))
            target = sheet.canvas.camera_target()
            assert target is not None and set(target.nodes) == set(graph.nodes), f"step {k}"
            zoom = sheet.canvas.zoom()
            step = sheet.player.frame.active
            for nid in (step.consumer, step.operand):
                item = sheet.canvas.node_item(nid)
                form = item.compact_form(zoom)
                assert form is not None, f"step {k}: {nid} not compact in the whole view"
                grad = next((ln, pt) for ln, pt in form if ln.kind == "grad")
                least = MIN_EXTRA_SHARE * item.min_screen_pt()
                assert grad[1] * zoom >= least - 1e-6, f"step {k}: {nid} gradient too small"
                shortened += grad[0].text.endswith("…")
    assert shortened > 0  # some lines were cut to fit, legibly
