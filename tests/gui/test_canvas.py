"""The node-editor canvas with real widgets (offscreen): building, connecting,
deleting, moving, errors, palette drops, quick search and the player's frames."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt
from PySide6.QtGui import QDropEvent, QWheelEvent
from PySide6.QtTest import QTest

from engine.fileformat import GraphFile
from engine.graph import Graph
from gui.canvas import CanvasView
from gui.commands import AddNode, Connect, Disconnect, RemoveNodes, push
from gui.document import GraphDocument
from gui.model.names import MIME_OP
from gui.model.timeline import Timeline
from support import seed2_graph


def graph_file(graph: Graph, output: str | None = None, gradient=None) -> GraphFile:  # noqa: ANN001
    """What GraphDocument.load reads (a GraphFile without positions)."""
    return GraphFile(graph=graph, output=output, gradient=gradient)


@pytest.fixture
def view(shown_canvas) -> CanvasView:  # noqa: ANN001
    return shown_canvas(GraphDocument())


@pytest.fixture
def seeded(view: CanvasView) -> CanvasView:
    view.doc.load(graph_file(seed2_graph(), "y", np.array([0.1, 0.2, 0.3])), None)
    return view


def vpos(view: CanvasView, scene_point: QPointF) -> QPoint:
    return view.mapFromScene(scene_point)


def add(view: CanvasView, op: str, x: float, y: float, **kw) -> str:  # noqa: ANN003
    cmd = AddNode(view.doc, op, (x, y), **kw)
    assert push(view.doc, cmd) is None
    return cmd.node


def messages(view: CanvasView) -> list[str]:
    out: list[str] = []
    view.statusMessage.connect(out.append)
    return out


# ---------------------------------------------------------------------------- building


def test_add_node_at_returns_id_and_is_undoable(view: CanvasView) -> None:
    nid = view.add_node_at("mul", QPointF(300, 200))
    assert nid == "mul" and nid in view.doc.graph
    item = view.node_item(nid)
    assert item is not None and item.isSelected()
    assert (item.x(), item.y()) == view.doc.positions[nid]
    assert item.x() < 300 < item.x() + item.size[0]
    assert view.add_node_at("input", QPointF(0, 0)) == "x1"  # numbered from 1
    view.doc.undo_stack.undo()
    view.doc.undo_stack.undo()
    assert len(view.doc.graph) == 0 and not view.canvas.nodes
    said = messages(view)
    assert view.add_node_at("nope", QPointF(0, 0)) is None
    assert said and "nope" in said[0]


def test_a_box_past_the_default_scene_rect_can_be_scrolled_to(view: CanvasView) -> None:
    """A captured 200-layer model lays out about 200,000 units wide: the scene rectangle
    grows to hold every box, so the view (and the follow camera) can reach its end."""
    from gui.canvas.scene import SCENE_HALF

    far = 3 * SCENE_HALF
    nid = add(view, "input", far, 40.0)
    box = view.node_item(nid)
    assert box is not None and view.canvas.sceneRect().contains(box.sceneBoundingRect())
    view.centerOn(box)
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    assert shown.contains(box.sceneBoundingRect().center())


def test_node_box_shows_title_value_and_leaf_kind(seeded: CanvasView) -> None:
    y1 = seeded.node_item("y1").content
    assert y1.title == "y1 = a * x3" and y1.value == "6" and y1.style == "op"
    x1 = seeded.node_item("x1").content
    assert x1.title == "x1" and x1.marker == "input" and x1.style == "input"
    y = seeded.node_item("y").content
    assert y.value == "[6, 6, 7]" and y.is_output and y.shape == "shape 3"
    # live: final gradients (x1 receives from a, b and y3)
    assert x1.grad == "1.1"
    add(seeded, "const", 0, 900, value=[[1.0, 2.0], [3.0, 4.0]])
    c = seeded.node_item("c1").content
    assert c.style == "const" and c.marker == "const" and c.value == "[[1, 2],\n [3, 4]]"
    seeded.doc.set_requires_grad("x1", False)
    assert seeded.node_item("x1").content.marker == "no grad"


def test_variadic_stack_has_one_free_port(view: CanvasView) -> None:
    x = add(view, "input", 0, 0)
    s = add(view, "stack", 300, 0)
    item = view.node_item(s)
    assert len(item.in_ports) == 1
    assert view.try_connect(view.node_item(x).out_port, item.in_ports[0])
    assert len(item.in_ports) == 2 and item.in_ports[0].connected
    assert not item.in_ports[1].connected


# ---------------------------------------------------------------------------- connecting


def test_try_connect_either_direction(view: CanvasView) -> None:
    x = add(view, "input", 0, 0)
    n = add(view, "sub", 300, 0)
    nx_, nn = view.node_item(x), view.node_item(n)
    assert view.try_connect(nx_.out_port, nn.in_ports[0])
    assert view.try_connect(nn.in_ports[1], nx_.out_port)  # dragged from the operand port
    assert view.doc.graph.nodes[n].inputs == [x, x]
    assert (x, n, 0) in view.canvas.edges and (x, n, 1) in view.canvas.edges
    edge = view.edge_item((x, n, 1))
    assert edge.path().pointAtPercent(0) == nx_.port_pos(True)
    assert edge.path().pointAtPercent(1) == nn.port_pos(False, 1)


def test_connect_by_real_mouse_drag(view: CanvasView, qtbot) -> None:  # noqa: ANN001
    x = add(view, "input", 0, 0)
    n = add(view, "neg", 320, 60)
    view.fit_all()
    src = vpos(view, view.node_item(x).out_port.scenePos())
    dst = vpos(view, view.node_item(n).in_ports[0].scenePos())
    vp = view.viewport()
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, src)
    mid = (src + dst) / 2
    QTest.mouseMove(vp, mid)
    assert view._temp_edge is not None  # the dashed curve follows the mouse
    QTest.mouseMove(vp, dst)
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, dst)
    assert view.doc.graph.nodes[n].inputs == [x]
    assert view._temp_edge is None
    assert view.doc.undo_stack.undoText().startswith("Connect")


def test_drop_connection_onto_a_box_uses_its_free_port(view: CanvasView) -> None:
    x = add(view, "input", 0, 0)
    n = add(view, "add", 320, 60)
    view.fit_all()
    src = vpos(view, view.node_item(x).out_port.scenePos())
    body = vpos(view, view.node_item(n).scene_rect().center())
    vp = view.viewport()
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, src)
    QTest.mouseMove(vp, body)
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, body)
    assert view.doc.graph.nodes[n].inputs == [x, None]


def test_refused_connections_say_why(view: CanvasView) -> None:
    x = add(view, "input", 0, 0)
    p = add(view, "add", 300, 0)
    q = add(view, "neg", 600, 0)
    px, pp, pq = view.node_item(x), view.node_item(p), view.node_item(q)
    assert view.try_connect(px.out_port, pp.in_ports[0])
    assert view.try_connect(pp.out_port, pq.in_ports[0])
    said = messages(view)
    steps = view.doc.undo_stack.count()
    assert not view.try_connect(pq.out_port, pp.in_ports[1])  # q -> p would close a cycle
    assert "cycle" in said[-1] and view.refused_edge_visible
    assert not view.try_connect(px.out_port, pp.in_ports[0])  # taken
    assert "already taken" in said[-1]
    assert not view.try_connect(px.out_port, pq.out_port)
    assert "output" in said[-1]
    assert not view.try_connect(pp.in_ports[1], pq.in_ports[0])
    assert "operand port" in said[-1]
    assert view.doc.undo_stack.count() == steps
    assert view.doc.graph.nodes[p].inputs == [x, None]


def test_refused_drag_shows_red_while_hovering(view: CanvasView) -> None:
    x = add(view, "input", 0, 0)
    n = add(view, "neg", 320, 0, )
    assert view.try_connect(view.node_item(x).out_port, view.node_item(n).in_ports[0])
    view.fit_all()
    vp = view.viewport()
    start = vpos(view, view.node_item(n).out_port.scenePos())
    target = vpos(view, view.node_item(n).in_ports[0].scenePos())
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    QTest.mouseMove(vp, target)
    assert view._temp_edge.pen().color() == view._temp_edge.pen().color().fromString("#d93025")
    said = messages(view)
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, target)
    assert said and "Cannot connect" in said[-1]


# ---------------------------------------------------------------------------- deleting


def test_edits_off_the_output_path_keep_the_edges_the_graph_has(seeded: CanvasView) -> None:
    """An edit that names the nodes it changed (off the output's path) looks at those
    nodes' edges only: the edge items stay exactly the graph's edges, each listed at
    both its ends, through adds, connects, disconnects, a delete and their undo."""
    view, doc = seeded, seeded.doc
    scene = view.canvas

    def edges_match() -> None:
        assert set(scene.edges) == set(doc.graph.edges())
        for key in scene.edges:
            assert key in scene._touching[key[0]] and key in scene._touching[key[1]]
        assert all(set(keys) <= set(scene.edges) for keys in scene._touching.values())

    p = add(view, "input", 0, 400, value=2.0)
    q = add(view, "input", 0, 500, value=3.0)
    named = [doc.results.changed is not None]
    for cmd in (AddNode(doc, "mul", (200, 450), id="m"), Connect(doc, p, "m", 0),
                Connect(doc, q, "m", 1), Disconnect(doc, "m", 0), Connect(doc, "x1", "m", 0),
                Disconnect(doc, "m", 1), AddNode(doc, "neg", (400, 450), id="n"),
                Connect(doc, "m", "n", 0), RemoveNodes(doc, ["m"])):
        assert push(doc, cmd) is None
        named.append(doc.results.changed is not None)
        edges_match()
    assert all(named)  # (each named what it changed: the path under test)
    for _ in range(7):
        doc.undo_stack.undo()
        edges_match()
    while doc.undo_stack.canRedo():
        doc.undo_stack.redo()
        edges_match()


def test_delete_node_and_undo(seeded: CanvasView, qtbot) -> None:  # noqa: ANN001
    doc = seeded.doc
    seeded.select_ids(["a"])
    seeded.setFocus()
    QTest.keyClick(seeded, Qt.Key.Key_Delete)
    assert "a" not in doc.graph and "a" not in seeded.canvas.nodes
    assert ("a", "y1", 0) not in seeded.canvas.edges
    doc.undo_stack.undo()
    assert "a" in seeded.canvas.nodes and ("a", "y1", 0) in seeded.canvas.edges
    assert doc.graph.nodes["y1"].inputs == ["a", "x3"]


def test_mixed_selection_deleted_in_one_undo_step(seeded: CanvasView) -> None:
    doc = seeded.doc
    seeded.select_ids(["c"])
    vp = seeded.viewport()
    for key in [("x1", "b", 0), ("x2", "a", 1)]:  # ctrl+click adds edges to the selection
        path = seeded.edge_item(key).path()
        at = vpos(seeded, path.pointAtPercent(path.percentAtLength(path.length() * 0.5)))
        QTest.mouseClick(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier, at)
    seeded.select_edges([("x2", "c", 0)], add=True)  # goes with c anyway
    assert seeded.selected_ids() == ["c"]
    assert seeded.selected_edges() == [("x1", "b", 0), ("x2", "a", 1), ("x2", "c", 0)]
    before = doc.undo_stack.count()
    QTest.keyClick(seeded, Qt.Key.Key_Backspace)
    assert doc.undo_stack.count() == before + 1
    assert "c" not in doc.graph and doc.graph.nodes["b"].inputs == [None, "x2"]
    assert doc.graph.nodes["a"].inputs == ["x1", None]
    doc.undo_stack.undo()
    assert "c" in doc.graph and doc.graph.nodes["b"].inputs == ["x1", "x2"]
    assert doc.graph.nodes["a"].inputs == ["x1", "x2"]
    assert len(seeded.canvas.edges) == len(doc.graph.edges())


# ---------------------------------------------------------------------------- moving


def drag(view: CanvasView, start: QPoint, end: QPoint, steps: int = 6) -> None:
    vp = view.viewport()
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    for k in range(1, steps + 1):
        QTest.mouseMove(vp, start + (end - start) * k / steps)
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)


def title_point(view: CanvasView, nid: str) -> QPoint:
    r = view.node_item(nid).scene_rect()
    return vpos(view, QPointF(r.left() + 30, r.top() + 10))


def test_one_drag_is_one_undo_step(seeded: CanvasView) -> None:
    doc = seeded.doc
    before_pos = doc.positions["a"]
    count = doc.undo_stack.count()
    start = title_point(seeded, "a")
    drag(seeded, start, start + QPoint(60, 40))
    assert doc.undo_stack.count() == count + 1
    after = doc.positions["a"]
    assert after != before_pos
    item = seeded.node_item("a")
    assert (item.x(), item.y()) == after
    edge = seeded.edge_item(("a", "y1", 0))
    assert edge.path().pointAtPercent(0) == item.port_pos(True)
    doc.undo_stack.undo()
    assert doc.positions["a"] == before_pos and (item.x(), item.y()) == before_pos


def test_dragging_a_selection_moves_all_in_one_step(seeded: CanvasView) -> None:
    doc = seeded.doc
    seeded.select_ids(["a", "b"])
    old = {n: doc.positions[n] for n in ("a", "b", "c")}
    count = doc.undo_stack.count()
    start = title_point(seeded, "a")
    drag(seeded, start, start + QPoint(-30, 50))
    assert doc.undo_stack.count() == count + 1
    assert doc.undo_stack.undoText() == "Move 2 nodes"
    da = np.subtract(doc.positions["a"], old["a"])
    db = np.subtract(doc.positions["b"], old["b"])
    assert np.allclose(da, db) and np.abs(da).sum() > 0
    assert doc.positions["c"] == old["c"]
    doc.undo_stack.undo()
    assert all(doc.positions[n] == old[n] for n in old)


def test_click_without_moving_records_nothing(seeded: CanvasView) -> None:
    count = seeded.doc.undo_stack.count()
    p = title_point(seeded, "b")
    drag(seeded, p, p, steps=1)
    assert seeded.doc.undo_stack.count() == count
    assert seeded.selected_ids() == ["b"]


# ---------------------------------------------------------------------------- errors


def test_shape_error_shows_badge_and_rest_keeps_working(view: CanvasView) -> None:
    x = add(view, "input", 0, 0, value=[1.0, 2.0, 3.0])
    w = add(view, "input", 0, 200, value=[1.0, 2.0])
    z = add(view, "add", 300, 100)
    n = add(view, "neg", 300, 300)
    for src, dst, i in ((x, z, 0), (w, z, 1), (x, n, 0)):
        assert view.try_connect(view.node_item(src).out_port, view.node_item(dst).in_ports[i])
    assert z in view.doc.results.forward.errors
    badge = view.node_item(z).badge
    assert badge is not None and badge.isVisible()
    assert "broadcast" in badge.toolTip() and "(3,)" in badge.toolTip()
    assert view.node_item(z).content.value == "—"
    assert view.node_item(n).content.value == "[-1, -2, -3]"
    assert view.node_item(n).badge is None
    view.doc.set_value(w, [1.0, 2.0, 3.0])
    assert view.node_item(z).badge is None and view.node_item(z).content.value == "[2, 4, 6]"


# ---------------------------------------------------------------------------- frames


def test_show_frame_highlights_active_edge(seeded: CanvasView) -> None:
    tl = Timeline(seeded.doc.results)
    frame = tl.frame(tl.position_of_step(5))  # y3 -> c
    seeded.show_frame(frame)
    key = frame.active_edge
    assert key == ("c", "y3", 1)
    edge = seeded.edge_item(key)
    assert edge.state == "active" and edge.pen().widthF() > 3
    for done in frame.done_edges - {key}:
        assert seeded.edge_item(done).state == "done"
    assert seeded.edge_item(("x2", "a", 1)).state == "normal"
    label = seeded.canvas.label
    assert label.isVisible() and label.text == "vjp = 0.3"
    c = seeded.node_item("c").content
    assert c.grad_active and c.grad == "0 → 0.3"
    assert seeded.node_item("y3").highlight_consumer
    # the label covers no node box
    lr = label.mapRectToScene(label.boundingRect())
    for item in seeded.canvas.nodes.values():
        assert not item.scene_rect().intersects(lr.adjusted(4, 4, -4, -4))
    # the pulse runs from the consumer's port to the operand's
    seeded.set_pulse_progress(0.0)
    assert (seeded.canvas.pulse.pos() - edge.path().pointAtPercent(1.0)).manhattanLength() < 1
    seeded.set_pulse_progress(1.0)
    assert (seeded.canvas.pulse.pos() - edge.path().pointAtPercent(0.0)).manhattanLength() < 1
    # back to live: final gradients, no highlight
    seeded.show_frame(None)
    assert edge.state == "normal" and not label.isVisible()
    assert seeded.node_item("c").content.grad == "0.3"
    assert not seeded.node_item("c").content.grad_active


def test_frame_shows_fan_in_and_accumulation(seeded: CanvasView) -> None:
    seeded.edge_label_provider = lambda step, short=False: f"J for {step.consumer}->{step.operand}"
    tl = Timeline(seeded.doc.results)
    last = tl.frame(tl.end)
    seeded.show_frame(last)
    op = last.active.operand
    content = seeded.node_item(op).content
    assert content.fan_in == 3 and content.grad_active
    assert " → " in content.grad
    assert seeded.canvas.label.text == f"J for {last.active.consumer}->{op}"
    # box sizes do not change from frame to frame
    sizes = {n: i.size for n, i in seeded.canvas.nodes.items()}
    for p in range(tl.length):
        seeded.show_frame(tl.frame(p))
        assert {n: i.size for n, i in seeded.canvas.nodes.items()} == sizes


def test_forward_frames_hide_values_not_computed_yet(seeded: CanvasView) -> None:
    tl = Timeline(seeded.doc.results)
    seeded.show_frame(tl.frame(3))  # x1, x2, x3 computed
    assert seeded.node_item("x1").content.value == "1"
    assert seeded.node_item("a").content.value_state == "hidden"
    assert seeded.node_item("a").content.grad is None
    assert not seeded.canvas.pulse.isVisible()


def test_pulse_animates_when_enabled(seeded: CanvasView, qtbot) -> None:  # noqa: ANN001
    seeded.animations_enabled = True
    tl = Timeline(seeded.doc.results)
    seeded.show_frame(tl.frame(tl.position_of_step(1)))
    assert seeded._pulse_anim.state() == seeded._pulse_anim.State.Running
    qtbot.waitUntil(lambda: seeded.canvas.pulse.progress == 1.0, timeout=3000)


# ---------------------------------------------------------------------------- palette, search


def test_drop_from_palette_adds_node(view: CanvasView) -> None:
    mime = QMimeData()
    mime.setData(MIME_OP, b"tanh")
    at = QPointF(400, 300)
    event = QDropEvent(at, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    view.dropEvent(event)
    assert view.doc.graph.nodes["tanh"].op == "tanh"
    item = view.node_item("tanh")
    assert item.scene_rect().contains(view.mapToScene(at.toPoint()))


def test_tab_quick_search_adds_op_at_cursor(view: CanvasView, qtbot) -> None:  # noqa: ANN001
    view.setFocus()
    QTest.keyClick(view, Qt.Key.Key_Tab)
    popup = view._quick
    assert popup is not None and popup.isVisible()
    QTest.keyClicks(popup.edit, "sigm")
    assert popup.current_op() == "sigmoid"
    QTest.keyClick(popup.edit, Qt.Key.Key_Return)
    assert not popup.isVisible()
    assert [n.op for n in view.doc.graph.nodes.values()] == ["sigmoid"]
    popup = view.open_quick_search(QPoint(100, 100))
    QTest.keyClicks(popup.edit, "reduc")  # matches the category
    assert popup.current_op() in ("sum", "mean")
    QTest.keyClick(popup.edit, Qt.Key.Key_Down)
    QTest.keyClick(popup.edit, Qt.Key.Key_Enter)
    assert view.doc.graph.nodes["mean"].op == "mean"
    assert view.node_item("mean").scene_rect().contains(view.mapToScene(QPoint(100, 100)))


# ---------------------------------------------------------------------------- layout, view


def test_loaded_file_without_positions_is_laid_out(seeded: CanvasView) -> None:
    doc = seeded.doc
    assert set(doc.positions) == set(doc.graph.nodes)
    assert doc.undo_stack.count() == 0 and not doc.modified
    for src, dst, _ in doc.graph.edges():
        assert doc.positions[src][0] < doc.positions[dst][0]
    rects = [i.scene_rect() for i in seeded.canvas.nodes.values()]
    for i, r in enumerate(rects):
        assert not any(r.intersects(o) for o in rects[i + 1:])
    visible = seeded.mapToScene(seeded.viewport().rect()).boundingRect()
    assert visible.contains(seeded.canvas.nodes_rect())


def test_missing_positions_placed_below_existing(view: CanvasView) -> None:
    g = seed2_graph()
    gf = graph_file(g)
    placed = {"x1": (1000.0, 50.0), "x2": (1000.0, 200.0), "a": (1300.0, 120.0)}
    gf.node_extra = {n: {"position": list(xy)} for n, xy in placed.items()}
    view.doc.load(gf, None)
    pos = view.doc.positions
    assert all(pos[n] == xy for n, xy in placed.items())
    assert all(pos[n][1] > 300.0 for n in g.nodes if n not in placed)
    for key, edge in view.canvas.edges.items():  # every edge drawn between its ports
        src, dst = view.node_item(key[0]), view.node_item(key[1])
        assert edge.path().pointAtPercent(0) == src.port_pos(True)
        assert edge.path().pointAtPercent(1) == dst.port_pos(False, key[2])


def test_auto_layout_is_one_undo_step(seeded: CanvasView) -> None:
    doc = seeded.doc
    laid = dict(doc.positions)
    seeded.select_all()
    start = title_point(seeded, "y")
    drag(seeded, start, start + QPoint(-400, 200))
    moved = dict(doc.positions)
    seeded.auto_layout()
    assert doc.undo_stack.undoText() == "Auto-layout"
    for src, dst, _ in doc.graph.edges():
        assert doc.positions[src][0] < doc.positions[dst][0]
    rel = {n: np.subtract(doc.positions[n], doc.positions["x1"]) for n in laid}
    rel0 = {n: np.subtract(laid[n], laid["x1"]) for n in laid}
    assert all(np.allclose(rel[n], rel0[n], atol=1) for n in laid)
    doc.undo_stack.undo()
    assert doc.positions == moved


def test_selection_api_and_signal(seeded: CanvasView, qtbot) -> None:  # noqa: ANN001
    with qtbot.waitSignal(seeded.selectionChangedIds) as blocker:
        seeded.select_ids(["b", "a"])
    assert blocker.args == [["a", "b"]]
    assert seeded.selected_ids() == ["a", "b"]
    seeded.select_all()
    assert seeded.selected_ids() == list(seeded.doc.graph.nodes)
    seeded.canvas.clearSelection()
    # a rubber band over a and b selects them
    ra, rb = seeded.node_item("a").scene_rect(), seeded.node_item("b").scene_rect()
    top_left = vpos(seeded, ra.topLeft() + QPointF(-20, -20))
    bottom_right = vpos(seeded, rb.bottomRight() + QPointF(5, 5))
    drag(seeded, top_left, bottom_right)
    assert set(seeded.selected_ids()) >= {"a", "b"} and "y" not in seeded.selected_ids()


def test_zoom_pan_and_fit(seeded: CanvasView) -> None:
    vp = seeded.viewport()
    z0 = seeded.zoom()
    at = QPointF(200, 150)
    anchor = seeded.mapToScene(at.toPoint())
    wheel = QWheelEvent(at, vp.mapToGlobal(at), QPoint(), QPoint(0, 240),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    seeded.wheelEvent(wheel)
    assert seeded.zoom() > z0
    assert (seeded.mapToScene(at.toPoint()) - anchor).manhattanLength() < 4 / seeded.zoom()
    before = seeded.mapToScene(vp.rect().center())
    QTest.mousePress(vp, Qt.MouseButton.MiddleButton, Qt.KeyboardModifier.NoModifier,
                     QPoint(300, 300))
    QTest.mouseMove(vp, QPoint(200, 250))
    QTest.mouseRelease(vp, Qt.MouseButton.MiddleButton, Qt.KeyboardModifier.NoModifier,
                       QPoint(200, 250))
    after = seeded.mapToScene(vp.rect().center())
    assert after.x() > before.x() and after.y() > before.y()
    seeded.setFocus()
    QTest.keyClick(seeded, Qt.Key.Key_F)
    visible = seeded.mapToScene(vp.rect()).boundingRect()
    assert visible.contains(seeded.canvas.nodes_rect())


def test_long_edges_go_around_boxes(seeded: CanvasView) -> None:
    for key, edge in seeded.canvas.edges.items():
        path = edge.path()
        for k in range(1, 40):
            p = path.pointAtPercent(k / 40)
            for nid, item in seeded.canvas.nodes.items():
                if nid not in key[:2]:
                    assert not item.scene_rect().adjusted(2, 2, -2, -2).contains(p), (key, nid)


def test_detour_straightens_when_the_box_in_the_way_goes(seeded: CanvasView) -> None:
    detoured = [k for k, e in seeded.canvas.edges.items() if e.lane is not None]
    assert ("x3", "y1", 1) in detoured  # routed around a, b or c
    for nid in ("a", "b", "c"):
        seeded.select_ids([nid])
        seeded.delete_selected()
    assert seeded.edge_item(("x3", "y1", 1)).lane is None


def test_grab_renders(seeded: CanvasView) -> None:
    image = seeded.grab().toImage()
    assert image.width() >= 1000
    colours = {image.pixelColor(x, y).name() for x in range(0, image.width(), 23)
               for y in range(0, image.height(), 23)}
    assert len(colours) > 5  # boxes, bands and text, not just the grid


def test_presentation_mode_magnifies_without_overlap(seeded: CanvasView) -> None:
    from gui.theme import THEME

    sizes = {n: i.size for n, i in seeded.canvas.nodes.items()}
    zoom, width = seeded.zoom(), seeded.edge_item(("a", "y1", 0)).pen().widthF()
    try:
        THEME.scale, THEME.high_contrast = 1.6, True
        seeded.refresh_theme()
        assert seeded.zoom() == pytest.approx(zoom * 1.6)
        assert {n: i.size for n, i in seeded.canvas.nodes.items()} == sizes  # places kept
        assert seeded.edge_item(("a", "y1", 0)).pen().widthF() > width
    finally:
        THEME.scale, THEME.high_contrast = 1.0, False
        seeded.refresh_theme()
    assert seeded.zoom() == pytest.approx(zoom)


def test_space_drag_pans_instead_of_selecting(seeded: CanvasView) -> None:
    vp = seeded.viewport()
    seeded.setFocus()
    before = seeded.mapToScene(vp.rect().center())
    QTest.keyPress(seeded, Qt.Key.Key_Space)
    drag(seeded, QPoint(600, 600), QPoint(500, 650))
    QTest.keyRelease(seeded, Qt.Key.Key_Space)
    after = seeded.mapToScene(vp.rect().center())
    assert after.x() > before.x() and after.y() < before.y()
    assert seeded.selected_ids() == [] and seeded.doc.undo_stack.count() == 0


def test_double_click_on_empty_canvas_opens_quick_search(view: CanvasView) -> None:
    vp, at = view.viewport(), QPoint(300, 300)
    QTest.mouseDClick(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
    assert view._quick is None  # opens on the release that ends the double-click
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
    assert view._quick is not None and view._quick.isVisible()
    QTest.keyClick(view._quick.edit, Qt.Key.Key_Escape)
    assert not view._quick.isVisible() and len(view.doc.graph) == 0


def test_hovering_a_port_enlarges_it(view: CanvasView) -> None:
    x = add(view, "input", 0, 0)
    view.fit_all()
    item = view.node_item(x)
    QTest.mouseMove(view.viewport(), vpos(view, item.out_port.scenePos()) + QPoint(3, 2))
    assert item.hover_port is item.out_port
    assert view.viewport().cursor().shape() == Qt.CursorShape.CrossCursor
    QTest.mouseMove(view.viewport(), QPoint(5, 5))
    assert item.hover_port is None


def test_background_edges_follow_moves_and_deletes(seeded: CanvasView, qtbot) -> None:  # noqa: ANN001
    """Plain edges live in the view's cached background: no stale curve may remain."""
    from gui.commands import MoveNodes

    def inked(path, skip) -> tuple[int, int]:  # noqa: ANN001
        """(inked, sampled) points of ``path`` clear of every other box and edge."""
        image = seeded.grab().toImage()
        ratio = image.width() / seeded.width()
        hits = sampled = 0
        for k in range(4, 37):
            pt = path.pointAtPercent(k / 40)
            if any(i.scene_rect().adjusted(-6, -6, 6, 6).contains(pt)
                   for i in seeded.canvas.nodes.values()):
                continue
            around = [pt + QPointF(dx, dy) for dx, dy in ((0, 0), (0, 5), (0, -5), (5, 0), (-5, 0))]
            if any(e is not skip and e.shape().contains(q)
                   for e in seeded.canvas.edges.values() for q in around):
                continue
            v = vpos(seeded, pt)
            x, y = int(v.x() * ratio), int(v.y() * ratio)
            if image.valid(x, y):
                sampled += 1
                darkest = min(image.pixelColor(x + dx, y + dy).lightness()
                              for dx in (-1, 0, 1) for dy in (-1, 0, 1))
                hits += darkest < 190  # grid lines and paper are light
        return hits, sampled

    edge = seeded.edge_item(("b", "y2", 0))
    old_path = edge.path()
    hits, sampled = inked(old_path, edge)
    assert edge.in_background and sampled >= 10 and hits == sampled
    old = {"b": seeded.doc.positions["b"]}
    new = {"b": (old["b"][0] - 60, old["b"][1] + 150)}
    push(seeded.doc, MoveNodes(seeded.doc, old, new))
    qtbot.waitUntil(lambda: inked(old_path, edge)[0] == 0)
    hits, sampled = inked(old_path, edge)
    assert sampled >= 5 and hits == 0  # gone from where it was
    hits, sampled = inked(edge.path(), edge)
    assert sampled >= 10 and hits == sampled  # drawn where it is
    new_path = edge.path()
    seeded.select_ids(["b"])
    seeded.delete_selected()
    qtbot.waitUntil(lambda: inked(new_path, None)[0] == 0)
    hits, sampled = inked(new_path, None)
    assert sampled >= 5 and hits == 0


def test_dragging_a_connected_operand_port_moves_or_removes_its_edge(seeded: CanvasView) -> None:
    doc, stack = seeded.doc, seeded.doc.undo_stack
    seeded.fit_all()
    y1_port = seeded.node_item("y1").in_ports[1]  # y1 = a * x3: lift the x3 edge
    y3_port = seeded.node_item("y3").in_ports[1]  # taken by c: the move is refused
    drag(seeded, vpos(seeded, y1_port.scenePos()), vpos(seeded, y3_port.scenePos()))
    assert doc.graph.nodes["y1"].inputs == ["a", "x3"] and stack.count() == 0
    assert seeded.refused_edge_visible

    assert push(doc, Disconnect(doc, "y3", 1)) is None  # free y3's second port
    y1_port = seeded.node_item("y1").in_ports[1]
    y3_port = seeded.node_item("y3").in_ports[1]
    drag(seeded, vpos(seeded, y1_port.scenePos()), vpos(seeded, y3_port.scenePos()))
    assert doc.graph.nodes["y1"].inputs == ["a", None]
    assert doc.graph.nodes["y3"].inputs == ["x1", "x3"]
    stack.undo()  # the move is one step
    assert doc.graph.nodes["y1"].inputs == ["a", "x3"]
    assert doc.graph.nodes["y3"].inputs == ["x1", None]

    y1_port = seeded.node_item("y1").in_ports[1]
    start = vpos(seeded, y1_port.scenePos())
    drag(seeded, start, start + QPoint(0, 400))  # dropped on empty canvas: removed
    assert doc.graph.nodes["y1"].inputs == ["a", None]
    stack.undo()
    assert doc.graph.nodes["y1"].inputs == ["a", "x3"]


def test_box_text_widths_by_pitch_agree_with_qt(qtbot) -> None:  # noqa: ANN001
    # A new value or gradient text is measured by its length when every character has
    # the fixed-pitch font's one advance; Qt must measure each text the same.
    import random

    from gui.canvas.node_item import advance, compact_fonts, fonts

    rng = random.Random(7)
    alphabet = [chr(c) for c in range(32, 127)] + list("→…×−·∂≤αé\u0301\u200b")
    for fm in (fonts().fm_mono, compact_fonts().fm_mono, fonts().fm_title):
        for _ in range(400):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
            assert advance(fm, text) == fm.horizontalAdvance(text), repr(text)


def test_a_box_sized_after_a_gradient_change_is_sized_as_a_new_box(qtbot) -> None:  # noqa: ANN001
    # Only the gradient changed: the rest of the width is kept from the last content.
    from dataclasses import replace

    from gui.canvas.node_item import NodeItem
    from gui.model.node_box import NodeContent

    base = NodeContent(title="h = tanh(z)", value="[0.1, 0.2]", shape="shape 2",
                       reserve_grad=("[1, 2]",), reserve_fan_in=2)
    item = NodeItem("h", base)
    for grad in ("[1, 2]", "[123456.7, 2, 3, 4, 5, 6, 7]", "0 → [1,\n 2]", None):
        shown = replace(base, grad=grad, grad_active=grad is not None, fan_in=2)
        item.set_content(shown)
        assert item.size == NodeItem("h", shown).size, grad
    item.set_content(replace(base, value="[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]"))
    wider = NodeItem("h", item.content)
    assert item.size == wider.size and wider.size[0] > NodeItem("h", base).size[0]
