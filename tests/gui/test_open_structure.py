"""Opening a file does each piece of work once, and an idle app keeps no module sources.

Counts, never times: the player builds one timeline per opened file, every box is
laid out once and every edge routed once, and PySide6's import hook leaves no
module source behind in ``linecache``.
"""

from __future__ import annotations

import linecache
import sys
from collections.abc import Callable
from pathlib import Path

from engine.fileformat import GraphFile, save
from engine.graph import Graph


def test_a_module_imported_after_the_app_leaves_no_source_in_memory(
    tmp_path: Path, monkeypatch
) -> None:  # noqa: ANN001
    import gui.application  # noqa: F401 - importing it wraps PySide6's import hook

    module = tmp_path / "imported_late_for_the_test.py"
    module.write_text("from PySide6.QtCore import QObject\n\nVALUE = 42\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = __import__("imported_late_for_the_test")  # the import statement's way: PySide6 hooks it
    try:
        assert mod.VALUE == 42
        assert str(module) not in linecache.cache
    finally:
        sys.modules.pop("imported_late_for_the_test", None)



def test_the_import_hook_still_tells_modules_that_use_pyside6_from_those_that_do_not(
    tmp_path: Path, monkeypatch
) -> None:  # noqa: ANN001
    """The cheap check gives PySide6's own answer: 0 (features selectable) for a module
    whose source names PySide6, -1 (left alone) for one that does not."""
    import gui.application  # noqa: F401 - importing it wraps PySide6's import hook

    feature = sys.modules["shibokensupport.feature"]
    (tmp_path / "late_qt_user.py").write_text("from PySide6.QtCore import QObject\n")
    (tmp_path / "late_plain.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        __import__("late_qt_user")
        __import__("late_plain")
        assert feature.pyside_feature_dict["late_qt_user"] == 0
        assert feature.pyside_feature_dict["late_plain"] == -1
    finally:
        for name in ("late_qt_user", "late_plain"):
            sys.modules.pop(name, None)
            feature.pyside_feature_dict.pop(name, None)

def _chain_file(tmp_path: Path, n: int = 40, output: bool = True) -> Path:
    """A chain of ``n`` nodes with a few long edges, saved without positions (the app
    lays it out on open); without an output, no backward pass to show."""
    g = Graph()
    g.add_node("x0", "input", value=1.0)
    for i in range(1, n):
        inputs = [f"x{i - 1}", f"x{i - 7}"] if i >= 7 and i % 5 == 0 else [f"x{i - 1}"]
        g.add_node(f"x{i}", "add" if len(inputs) == 2 else "tanh", inputs)
    path = tmp_path / "chain.bpgraph"
    save(path, GraphFile(graph=g, output=f"x{n - 1}" if output else None))
    return path


def test_opening_a_file_builds_one_timeline(make_window, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    from gui.player import Player

    window = make_window()
    path = _chain_file(tmp_path)
    built = []
    make = Player._make_timeline
    monkeypatch.setattr(Player, "_make_timeline", lambda self: built.append(1) or make(self))
    assert window.files.load_path(path)
    assert len(built) == 1  # resultsChanged built it; groupsChanged that follows does not
    # an opened file starts the lesson at step 0, the forward values shown (fix 9)
    assert window.player.position == window.player.timeline.forward_length
    assert window.player.frame.k == 0 and window.player.frame.shown_values


def test_only_a_change_to_what_plays_as_one_step_rebuilds_the_timeline(make_window) -> None:  # noqa: ANN001
    from engine.groups import Group

    window = make_window()
    doc, player = window.doc, window.player
    pair = next(
        [src, nid]
        for nid, node in doc.graph.nodes.items()
        for src in node.inputs
        if src is not None and not node.is_leaf and not doc.graph.nodes[src].is_leaf
    )
    before = player.timeline
    doc.set_groups([Group("g", pair, "two ops", collapsed=False)])
    assert player.timeline is before  # an expanded group plays step by step: same timeline
    doc.set_groups([Group("g", pair, "two ops", collapsed=True)])
    assert player.timeline is not before
    assert len(player.timeline.steps) < len(before.steps)


def test_opening_routes_each_edge_once_and_repaints_the_background_in_bulk(
    make_window, tmp_path: Path, monkeypatch
) -> None:  # noqa: ANN001
    from PySide6.QtWidgets import QGraphicsScene

    from gui.canvas.scene import CanvasScene

    window = make_window()
    routed: list[tuple] = []
    update = CanvasScene._update_edge
    monkeypatch.setattr(
        CanvasScene, "_update_edge", lambda self, key: routed.append(key) or update(self, key)
    )
    repaints: list[object] = []
    invalidate = QGraphicsScene.invalidate

    def counted(self, *args) -> None:  # noqa: ANN001
        repaints.append(args)
        invalidate(self, *args)

    monkeypatch.setattr(CanvasScene, "invalidate", counted)
    # No backward pass: every edge is plain, drawn into the view's cached background.
    assert window.files.load_path(_chain_file(tmp_path, output=False))
    edges = window.canvas.canvas.edges
    assert len(edges) > 40 and all(e.in_background for e in edges.values())
    assert sorted(routed) == sorted(edges)  # each edge once, around its boxes' real sizes
    # Every edge is placed as the file opens: the cached background is told once per
    # batch of changes, not once per edge.
    assert 1 <= len(repaints) <= 3


def test_a_big_file_opens_with_plain_curves_and_routes_them_as_one_pass_would(
    make_window, tmp_path: Path, monkeypatch
) -> None:  # noqa: ANN001
    """Routing around boxes waits for idle time after the first paint; routed (by the
    idle slices, or at once by whatever needs a route), every edge takes the path, and
    lane, that routing every edge as the file opened gave."""
    from PySide6.QtWidgets import QApplication

    from gui.canvas import scene as scene_module

    path = _chain_file(tmp_path, n=3 * scene_module.REROUTE_ALL)
    window = make_window()
    assert window.files.load_path(path)
    scene = window.canvas.canvas
    plain = {k: e.path() for k, e in scene.edges.items()}
    while scene._unrouted:  # the idle slices, as the event loop runs them
        QApplication.processEvents()
    routed = {k: e.path() for k, e in scene.edges.items()}
    monkeypatch.setattr(scene_module, "REROUTE_ALL", 10**9)  # route all as the file opens
    assert window.files.load_path(path)
    at_once = {k: e.path() for k, e in window.canvas.canvas.edges.items()}
    assert routed == at_once
    assert any(plain[k] != routed[k] for k in routed)  # some edge detours: a real test


def test_whatever_reads_a_route_routes_every_deferred_edge_first(
    make_window, tmp_path: Path
) -> None:  # noqa: ANN001
    from gui.canvas import scene as scene_module

    window = make_window()
    assert window.files.load_path(_chain_file(tmp_path, n=3 * scene_module.REROUTE_ALL))
    scene = window.canvas.canvas
    assert scene._unrouted  # not yet: no idle time has passed
    scene.set_far(False)  # zoomed in to where a detour is legible
    assert not scene._unrouted
    assert window.files.load_path(_chain_file(tmp_path, n=3 * scene_module.REROUTE_ALL))
    scene, player = window.canvas.canvas, window.player
    deferred = set(scene._unrouted)
    for k in range(len(player.timeline.steps)):
        player.seek(player.timeline.position_of_step(k))
        if player.frame.active_edge in deferred:
            break  # the pulse and the label run along a deferred edge
        assert scene._unrouted  # another edge's step routes none of them
    assert player.frame.active_edge in deferred and not scene._unrouted


def test_a_big_file_holds_its_plain_curves_back_until_more_than_the_background_needs_them(
    make_window, tmp_path: Path
) -> None:  # noqa: ANN001
    """A new graph's plain curves are drawn into the cached background from their ends;
    Qt gets a curve when input near it may hit-test it (or the view zooms in), and the
    background, the curves and their extents are those of curves given at once."""
    from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
    from PySide6.QtGui import QMouseEvent, QPainterPath
    from PySide6.QtWidgets import QApplication

    from gui.canvas import scene as scene_module
    from gui.canvas.edge_item import EdgeItem

    window = make_window()
    assert window.files.load_path(_chain_file(tmp_path, n=3 * scene_module.REROUTE_ALL))
    scene, view = window.canvas.canvas, window.canvas
    edges = scene.edges
    assert scene.far and all(e._held for e in edges.values())  # none given to Qt yet
    background = QPainterPath(scene._background_edges())
    bounds = {k: QRectF(e.bounds) for k, e in edges.items()}
    key = ("x20", "x21", 0)
    x1, y1, x2, y2 = edges[key]._plain_ends
    at = QPointF(view.mapFromScene(QPointF((x1 + x2) / 2, (y1 + y2) / 2)))
    move = QMouseEvent(QEvent.Type.MouseMove, at, view.viewport().mapToGlobal(at),
                       Qt.MouseButton.NoButton, Qt.MouseButton.NoButton,
                       Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(view.viewport(), move)  # input there: Qt may hit-test them now
    assert not edges[key]._held and edges[("x150", "x151", 0)]._held
    assert edges[key] in view.items(at.toPoint())
    scene.realize_edges()
    assert not any(e._held for e in edges.values())
    assert {k: e.bounds for k, e in edges.items()} == bounds
    scene._edge_paths = None
    assert scene._background_edges() == background  # the same curves, element for element
    for k, edge in edges.items():
        if edge._plain_ends is not None:  # (not routed around a box since)
            fresh = EdgeItem(k)  # given its curve at once
            fresh.set_plain(*edge._plain_ends)
            assert edge.path() == fresh.path() and edge.bounds == fresh.bounds
            assert edge.boundingRect() == fresh.boundingRect()


def test_opening_strokes_no_click_bands_until_a_click_needs_one(
    make_window, tmp_path: Path
) -> None:  # noqa: ANN001
    # Qt measures a path item through its shape(): each edge's 12-px click band was
    # stroked as the file opened. The extent is handed over instead; the band is built
    # on the first hit test, and the measured rectangle still holds band and curve.
    from PySide6.QtWidgets import QApplication

    window = make_window()
    assert window.files.load_path(_chain_file(tmp_path))
    window.player.to_end()  # the whole pass: every edge done
    QApplication.processEvents()  # Qt measures changed items here, then paints
    window.repaint()
    edges = list(window.canvas.canvas.edges.values())
    done = [e for e in edges if e.state == "done"]  # restyled: a new pen, measured again
    assert len(edges) > 40 and len(done) > 20 and all(e._hit is None for e in edges)
    player = window.player
    player.seek(player.timeline.position_of_step(len(player.timeline.steps) // 2))
    QApplication.processEvents()
    window.repaint()
    assert any(e.state == "active" for e in edges) and all(e._hit is None for e in edges)
    for edge in edges:
        band = edge.shape().boundingRect()
        path = edge.path()
        assert edge.boundingRect().contains(band)
        assert band.contains(path.pointAtPercent(0.0)) and band.contains(path.pointAtPercent(1.0))
    view = window.canvas
    edge = max(edges, key=lambda e: e.path().length())
    mid = edge.path().pointAtPercent(0.5)
    assert view.edge_at(view.mapFromScene(mid)) is edge  # clicks still find the curve


def test_a_load_that_fails_midway_leaves_the_player_out_of_its_opening_state(
    make_window, tmp_path: Path, monkeypatch
) -> None:  # noqa: ANN001
    # The player shows new results at forward done while a file opens; a load that
    # raised after the file was read left it so, and every later edit jumped there.
    import pytest

    from gui.document import GraphDocument

    window = make_window()
    path = _chain_file(tmp_path)

    def broken(self, gf, p) -> None:  # noqa: ANN001
        assert window.player.open_at_start  # it is in its opening state here
        raise RuntimeError("disk gone")

    monkeypatch.setattr(GraphDocument, "load", broken)
    with pytest.raises(RuntimeError):
        window.files.load_path(path)
    assert not window.player.open_at_start
    monkeypatch.undo()
    assert window.files.load_path(path)  # and a good file still opens at step 0
    assert not window.player.open_at_start
    assert window.player.position == window.player.timeline.forward_length


def test_boxes_place_their_texts_on_their_first_full_paint_only(
    make_window, tmp_path: Path
) -> None:  # noqa: ANN001
    # A big file opens zoomed out, where no box paints its own text: sizing a box
    # measures its content; the runs and pills are placed when it is first drawn whole.
    from PySide6.QtWidgets import QApplication

    window = make_window()
    assert window.files.load_path(_chain_file(tmp_path, n=400))
    QApplication.processEvents()
    window.repaint()
    scene = window.canvas.canvas
    assert scene.far  # 400 boxes at fit: drawn by the far-away painter
    assert not any(item._placed for item in scene.nodes.values())
    box, view = scene.nodes["x0"], window.canvas
    view.resetTransform()  # at 100 %, on the first box
    view.centerOn(box.scene_rect().center())
    QApplication.processEvents()
    window.repaint()
    assert box._placed and box.content is not None
    texts = [run.text for run in box._runs]
    assert box.content.title in texts and box.content.value in texts
    width = box.size[0]
    assert all(run.pos.x() < width for run in box._runs)  # laid out for its own size


def test_an_opened_files_objects_are_collected_once_into_the_oldest_generation(
    make_window, tmp_path: Path
) -> None:  # noqa: ANN001
    """Leaving the pause, the file's objects (all kept) are collected once, the young
    generations together, and go straight to the oldest: left to itself the collector
    scanned them as the youngest generation, and again soon after as the middle one."""
    import gc

    window = make_window()
    passes: list[int] = []

    def watch(phase: str, info: dict) -> None:
        if phase == "start":
            passes.append(info["generation"])

    gc.callbacks.append(watch)
    try:
        assert window.files.load_path(_chain_file(tmp_path, n=300))
    finally:
        gc.callbacks.remove(watch)
    box = next(iter(window.canvas.canvas.nodes.values()))
    assert any(o is box for o in gc.get_objects(generation=2))
    assert 1 in passes


def test_a_big_file_opens_to_its_first_paint_with_no_collection_but_its_own(
    make_window, tmp_path: Path
) -> None:  # noqa: ANN001
    """The file's objects arrive while the collector waits and are collected once as
    they are in; the rest of the open (fitting the view, the first paint) makes too few
    objects to run the collector before the file shows. One run there, with the file's
    objects just counted into the oldest generation, became a scan of everything (a
    full collection, ~70 ms at 5,000 nodes) in the middle of opening."""
    import gc

    from PySide6.QtWidgets import QApplication

    window = make_window()
    # (big enough to make more tuples than Python keeps for reuse: new ones count)
    path = _chain_file(tmp_path, n=3500)
    passes: list[int] = []

    def watch(phase: str, info: dict) -> None:
        if phase == "start":
            passes.append(info["generation"])

    gc.collect()  # (the counts start from nothing: any pass below is the open's)
    gc.callbacks.append(watch)
    try:
        assert window.files.load_path(path)
        QApplication.processEvents()
        window.repaint()
    finally:
        gc.callbacks.remove(watch)
    assert window.canvas.canvas.far  # (opened zoomed out: the far-away painter drew it)
    assert 1 in passes  # collected once as they arrived ...
    assert 0 not in passes and 2 not in passes  # ... and never by the collector itself


def test_an_opened_file_keeps_few_objects_per_box_for_the_collector(
    make_window, tmp_path: Path
) -> None:  # noqa: ANN001
    """Every object a file keeps that the collector tracks is one more to scan in each
    full collection, and an open that moves enough of them into the oldest generation
    starts one soon after: a box, its content, its edges, the graph's node and its
    operand list, the backward steps and their contexts (about 8 per box on this
    chain). Instance dicts, a set of edges per box, a tuple per compiled node, a list of
    operands per step context and the far painter's rectangles made it 15."""
    import gc

    from PySide6.QtWidgets import QApplication

    window = make_window()
    path = _chain_file(tmp_path, n=1000)

    def show(open_file: Callable[[], object]) -> None:
        open_file()
        QApplication.processEvents()
        window.repaint()

    show(lambda: window.files.load_path(path))  # (once before: caches are warm)
    show(window.open_default_example)
    gc.collect()
    before = len(gc.get_objects())
    show(lambda: window.files.load_path(path))
    gc.collect()
    kept = len(gc.get_objects()) - before
    assert window.canvas.canvas.far  # (drawn by the far-away painter, as a big file is)
    assert kept / len(window.doc.graph) < 10


def test_a_replaced_file_leaves_its_boxes_to_no_cyclic_collection(
    make_window, tmp_path: Path
) -> None:  # noqa: ANN001
    """A box and its ports held each other, so every box of the file a new one replaced
    waited for the cyclic collector (a long pass during the next file's opening); now
    each goes when the scene lets it go, and a port kept by someone else says so."""
    import gc
    import weakref

    window = make_window()
    assert window.files.load_path(_chain_file(tmp_path))
    item = next(iter(window.canvas.canvas.nodes.values()))
    port, box = item.out_port, weakref.ref(item)
    del item
    gc.collect()
    gc.disable()
    try:
        window.open_default_example()
        assert box() is None  # freed by reference counting, no collection needed
    finally:
        gc.enable()
    assert port.node is None
