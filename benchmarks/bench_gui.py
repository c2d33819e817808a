"""GUI figures that time what users wait for; prints one ``name: value`` line per figure.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_gui.py [name ...]

Every figure runs the real :class:`~gui.main_window.MainWindow` on a file written
to a temporary folder: a random layered graph of the stated size (fixed seed, long
edges included), saved with the positions the app's own auto-layout gives it, as a
user's saved file has. Beside a figure its floor, measured in the same run
(``*_floor_ms``/``*_floor_s``): a bare ``QGraphicsView`` holding the same boxes (a
rounded rectangle and its title) and edge paths, shown the same way, or a bare
``QMainWindow``; ``add_node_200_ms`` also beside NodeGraphQt (when it is installed:
``pip install NodeGraphQt``; not a dependency of the app). Targets (issues 10, 28):

============================  =============  ======================================
figure                        target         what is timed
============================  =============  ======================================
``startup_s``                 <= 1.5x floor  process start to the first painted frame
                                             at the preferred size, bytecode compiled
                                             (beside the bare window's floor, the same
                                             after numpy, the ``Qt`` enums and a text)
``open_1000_s``               < 0.5          open 1,000 nodes to the first paint
``open_5000_s``               <= 2x floor    the same, 5,000 nodes
``open_unplaced_5000_s``      < 3            the same, a file without positions
``player_step_{100,1000,      <= 2x floor    one backward step, Follow step and the
5000}_ms``                                   pulse on, every view repainted
``player_step_{n}_painted_ms``               the same step to the end of its events,
                                             where the views it changed have painted
``pulse_fps_1000``            >= 50          frames a second while the pulse travels
``zoom_repaint_1000_ms``      <= 2x floor    a wheel step at 100 % and the repaint
``zoom_fit_repaint_1000_ms``  < 16           the same at fit
``pan_repaint_5000_ms``       <= 2x floor    a drag step exposing boxes not painted
``add_node_200_ms``           <= NodeGraphQt one node added, command to repaint
``add_node_200_painted_ms``   <= NodeGraphQt the same, to the end of the events it
                                             posted, the canvas painted by then
``duplicate_200_ms``          < 200          select all + duplicate, to the repaint
``delete_200_ms``             < 200          select all + delete, to the repaint
``undo_delete_200_ms``        < 200          undo that delete, to the repaint
``auto_layout_5000_s``        < 1            auto-layout 5,000 nodes, to the repaint
``idle_rss_mb``               < 100          resident memory, seed example 2, idle
``*_growth_1k_10k``           <= 1.1         exponent of step, zoom and pan times
                                             from 1,000 to 10,000 nodes
============================  =============  ======================================

Timed loops report the median of their repeats. One BLAS thread, as in the engine
benchmark. On the offscreen platform a child app gets a screen just big enough for
its preferred size.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_SANDBOX = tempfile.mkdtemp(prefix="bench-gui-")
atexit.register(shutil.rmtree, _SANDBOX, ignore_errors=True)  # its graph files are MBs
for _var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):  # never a user's settings
    os.environ[_var] = os.path.join(_SANDBOX, _var.lower())
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from PySide6.QtCore import (  # noqa: E402
    QAbstractAnimation,
    QEvent,
    QObject,
    QPoint,
    QPointF,
    QRectF,
    Qt,
    QVariantAnimation,
)
from PySide6.QtGui import QPainterPath, QPen, QWheelEvent  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QApplication,
    QGraphicsPathItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QWidget,
)

from engine.fileformat import GraphFile, load, save  # noqa: E402
from engine.graph import Graph  # noqa: E402
from gui.application import ensure_app  # noqa: E402
from gui.canvas.view import PULSE_MS  # noqa: E402
from gui.main_window import PREFERRED_SIZE, MainWindow  # noqa: E402
from gui.theme import THEME  # noqa: E402

# --------------------------------------------------------------------------- graphs and files


def layered_graph(n_nodes: int, seed: int) -> tuple[Graph, str]:
    """About ``n_nodes`` nodes in layers of ``√n``: leaves (scalars and 3-vectors), then
    binary and unary ops on nearby nodes of the layer before, some reaching many layers
    back (long edges), reduced to one scalar output by a tree of adds."""
    rng = np.random.default_rng(seed)
    width = max(4, int(round(n_nodes**0.5)))
    g = Graph()
    layers: list[list[str]] = [[]]
    for i in range(width):
        nid = f"x{i}"
        value = rng.normal(size=3) if i % 3 == 0 else float(rng.normal())
        g.add_node(nid, "input" if i % 5 else "const", value=value)
        layers[0].append(nid)
    d = 0
    while len(g) + width + width < n_nodes:
        d += 1
        prev, layer = layers[-1], []
        for i in range(width):
            nid = f"n{d}_{i}"
            a = prev[(i + int(rng.integers(-1, 2))) % width]
            if rng.random() < 0.6:
                if rng.random() < 0.05 and len(layers) > 3:  # a long edge, many layers back
                    pool = layers[int(rng.integers(0, len(layers) - 2))]
                else:
                    pool = prev
                b = pool[(i + int(rng.integers(-2, 3))) % width]
                b = b if b != a else prev[(i + 1) % width]
                g.add_node(nid, ("add", "mul", "sub")[int(rng.integers(0, 3))], [a, b])
            else:
                g.add_node(nid, ("tanh", "sigmoid", "sin", "relu")[int(rng.integers(0, 4))], [a])
            layer.append(nid)
        layers.append(layer)
    level, k = list(layers[-1]), 0
    while len(level) > 1:
        nxt = []
        for a, b in zip(level[::2], level[1::2], strict=False):
            g.add_node(f"acc{k}", "add", [a, b])
            nxt.append(f"acc{k}")
            k += 1
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    g.add_node("loss", "sum", [level[0]])
    return g, "loss"


_FILES: dict[int, Path] = {}


def unplaced_path(n_nodes: int) -> Path:
    """A file of about ``n_nodes`` nodes without positions (as imported code or generated
    JSON is): the app lays it out on open."""
    path = Path(_SANDBOX) / f"unplaced_{n_nodes}.bpgraph"
    if not path.exists():
        graph, output = layered_graph(n_nodes, seed=n_nodes)
        save(path, GraphFile(graph=graph, output=output))
    return path


def graph_path(n_nodes: int) -> Path:
    """A saved file of about ``n_nodes`` nodes, with the app's auto-layout positions."""
    if n_nodes not in _FILES:
        path = Path(_SANDBOX) / f"layered_{n_nodes}.bpgraph"
        window = open_window(unplaced_path(n_nodes))
        save(path, window.doc.to_file())
        close(window)
        _FILES[n_nodes] = path
    return _FILES[n_nodes]


# --------------------------------------------------------------------------- the app


def app() -> QApplication:
    return ensure_app()


def open_window(path: Path | None = None) -> MainWindow:
    """A shown, painted main window holding ``path`` (or seed example 2)."""
    qapp = app()
    window = MainWindow()
    window.resize(1600, 1000)
    window.canvas.animations_enabled = False  # the loops below drive every frame
    if path is None:
        window.open_default_example()
    else:
        assert window.files.load_path(path)
    window.show()
    qapp.processEvents()
    window.repaint()
    return window


def close(window: MainWindow) -> None:
    """Close and free ``window``, as closing it in the app does: its deletion is carried
    out now (``processEvents`` outside an event loop leaves it pending, and every figure
    after it ran with the windows before it still on the heap, a 5,000-node one too)."""
    window.doc.undo_stack.setClean()  # nothing to ask about
    window.close()
    window.deleteLater()
    app().processEvents()
    app().sendPostedEvents(None, QEvent.Type.DeferredDelete)


def paint(window: MainWindow) -> None:
    """Deliver pending events, then paint the whole window now (all views)."""
    app().processEvents()
    window.repaint()


def timed_ms(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000.0


def median_ms(fn: Callable[[], object], repeats: int) -> float:
    return statistics.median(timed_ms(fn) for _ in range(repeats))


def _running(window: MainWindow, pulse_only: bool = False) -> bool:
    """The canvas's pulse (or any of its animations: the camera's glide too) runs."""
    anims = window.canvas.findChildren(QVariantAnimation)
    return any(a.state() == QAbstractAnimation.State.Running for a in anims
               if not pulse_only or a.duration() == PULSE_MS)


def settle(window: MainWindow) -> None:
    """Let the camera glide and the pulse travel to their ends (untimed), as a user
    waits between two steps, then paint."""
    deadline = time.perf_counter() + 5.0
    while _running(window) and time.perf_counter() < deadline:
        app().processEvents()
        time.sleep(0.002)
    paint(window)


# --------------------------------------------------------------------------- the floor


class Snapshot:
    """What a window's canvas shows: each box's scene rectangle and title, each edge's
    path in scene coordinates and pen, and the view (size, transform, centre)."""

    def __init__(self, window: MainWindow) -> None:
        view = window.canvas
        scene = view.canvas
        self.boxes = [(item.scene_rect(), item.content.title if item.content else nid)
                      for nid, item in scene.nodes.items()]
        self.edges = [(edge.mapToScene(edge.path()), edge.pen()) for edge in scene.edges.values()]
        self.scene_rect = view.sceneRect()
        self.hints = view.renderHints()
        self.size = view.viewport().size()


class Floor:
    """A bare ``QGraphicsView`` holding the same boxes (a rounded rectangle and its
    title) and edge paths as the window's canvas, at its size, shown in the same view:
    what Qt itself costs for these items, measured in the same run as each figure."""

    def __init__(self, shot: Snapshot) -> None:
        self.scene = QGraphicsScene()
        self.scene.setSceneRect(shot.scene_rect)
        for rect, title in shot.boxes:
            self.add_box(rect, title)
        for path, pen in shot.edges:
            self.scene.addPath(path, pen)
        self.view = QGraphicsView(self.scene)
        self.view.setRenderHints(shot.hints)
        self.view.setFrameShape(QGraphicsView.Shape.NoFrame)
        self.view.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        off = Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        self.view.setHorizontalScrollBarPolicy(off)
        self.view.setVerticalScrollBarPolicy(off)
        self.view.resize(shot.size)
        self.view.show()
        app().processEvents()

    def add_box(self, rect: QRectF, title: str) -> QGraphicsPathItem:
        path = QPainterPath()
        path.addRoundedRect(QRectF(0, 0, rect.width(), rect.height()), 8.0, 8.0)
        box = self.scene.addPath(path, QPen(THEME.node_border, 1.2), THEME.node_fill)
        box.setPos(rect.topLeft())
        QGraphicsSimpleTextItem(title, box).setPos(8.0, 4.0)
        return box

    def match(self, window: MainWindow) -> None:
        """Show what the window's canvas shows now (its zoom and centre)."""
        canvas = window.canvas
        self.view.setTransform(canvas.transform())
        self.view.centerOn(canvas.mapToScene(canvas.viewport().rect().center()))
        app().processEvents()

    def repaint_ms(self) -> float:
        return timed_ms(self.view.viewport().repaint)

    def close(self) -> None:
        self.view.close()
        self.view.deleteLater()
        app().processEvents()
        app().sendPostedEvents(None, QEvent.Type.DeferredDelete)  # freed now (see close)


# --------------------------------------------------------------------------- figures

Figures = dict[str, float | str]


def _open_s(n_nodes: int, repeats: int = 3) -> Figures:
    """Open a saved file to its first paint; the floor reads the same file and builds
    and paints the bare view of the same items."""
    path = graph_path(n_nodes)
    window = open_window()  # the app is running with the example, as after startup
    times, floors = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        assert window.files.load_path(path)
        paint(window)
        times.append(time.perf_counter() - t0)
        assert len(window.canvas.canvas.nodes) == len(window.doc.graph)
        shot = Snapshot(window)
        window.open_default_example()
        paint(window)
        t0 = time.perf_counter()
        load(path)
        floor = Floor(shot)
        floor.view.viewport().repaint()
        floors.append(time.perf_counter() - t0)
        floor.close()
    close(window)
    return {f"open_{n_nodes}_s": statistics.median(times),
            f"open_{n_nodes}_floor_s": statistics.median(floors)}


def open_1000_s() -> Figures:
    return _open_s(1000)


def open_5000_s() -> Figures:
    return _open_s(5000)


def open_unplaced_5000_s() -> Figures:
    """Open a 5,000-node file without positions (the app lays it out) to its first paint."""
    path = unplaced_path(5000)
    window = open_window()
    t0 = time.perf_counter()
    assert window.files.load_path(path)
    paint(window)
    seconds = time.perf_counter() - t0
    assert len(window.canvas.canvas.nodes) == len(window.doc.graph)
    close(window)
    return {"open_unplaced_5000_s": seconds}


def _presenting(n_nodes: int) -> MainWindow:
    """A window as presentation mode and exports run it: Follow step on, the pulse and
    the camera animated, a third of the way into the backward pass."""
    window = open_window(graph_path(n_nodes))
    window.canvas.animations_enabled = True
    window.canvas.follow_step = True
    player = window.player
    assert window.doc.results.trace is not None
    player.seek(player.timeline.position_of_step(len(player.timeline.steps) // 3))
    settle(window)
    return window


class _Painted(QObject):
    """Which of ``views`` (by name) received a paint event since ``painted`` was cleared."""

    def __init__(self, views: dict[str, QWidget]) -> None:
        super().__init__()
        self.views = views
        self.painted: set[str] = set()
        self._names = {id(view): name for name, view in views.items()}
        for view in views.values():
            view.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint:
            self.painted.add(self._names.get(id(obj), ""))
        return False

    def require_all(self, painted: set[str]) -> None:
        missing = sorted(set(self.views) - painted)
        if missing:
            raise RuntimeError(f"{', '.join(missing)} did not paint by the end of "
                               "processEvents: the painted figure would time too little")

    def close(self) -> None:
        for view in self.views.values():
            view.removeEventFilter(self)


def _player_step_ms(n_nodes: int, repeats: int = 9) -> Figures:
    """One backward step (Follow step and the pulse on) to the repaint of every view; the
    floor repaints the bare view at the same camera after each step. Beside it
    (``_painted_ms``) the same step timed to the end of its ``processEvents``, where every
    view the step changed has painted (checked: the canvas, the chain-rule text and the
    scrubber each received a paint event), before the whole window's repaint."""
    window = _presenting(n_nodes)
    floor = Floor(Snapshot(window))
    views = _Painted({"canvas": window.canvas.viewport(),
                     "chain-rule text": window.chain_rule.browser.viewport(),
                     "scrubber": window.player_bar.scrubber})

    def step() -> tuple[float, float]:
        views.painted.clear()
        t0 = time.perf_counter()
        window.player.step_forward()
        app().processEvents()
        t1 = time.perf_counter()
        painted = set(views.painted)
        window.repaint()
        t2 = time.perf_counter()
        views.require_all(painted)  # (by the end of processEvents, not by the repaint)
        return (t2 - t0) * 1000.0, (t1 - t0) * 1000.0

    times, painted, floors = [], [], []
    for _ in range(repeats):
        whole, done = step()
        times.append(whole)
        painted.append(done)
        settle(window)
        floor.match(window)
        floors.append(floor.repaint_ms())
    views.close()
    floor.close()
    close(window)
    return {f"player_step_{n_nodes}_ms": statistics.median(times),
            f"player_step_{n_nodes}_painted_ms": statistics.median(painted),
            f"player_step_{n_nodes}_floor_ms": statistics.median(floors)}


def player_step_100_ms() -> Figures:
    return _player_step_ms(100)


def player_step_1000_ms() -> Figures:
    return _player_step_ms(1000)


def player_step_5000_ms() -> Figures:
    return _player_step_ms(5000)


class _PaintCounter(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.frames = 0

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint:
            self.frames += 1
        return False


def pulse_fps_1000(steps: int = 5) -> Figures:
    """Frames the canvas paints per second while the pulse travels along the active edge
    (and the camera glides), 1,000 nodes, Follow step on; the median over ``steps``."""
    window = _presenting(1000)
    view = window.canvas
    counter = _PaintCounter()
    view.viewport().installEventFilter(counter)
    rates = []
    for _ in range(steps):
        window.player.step_forward()
        counter.frames = 0
        t0 = time.perf_counter()
        while _running(window, pulse_only=True):
            app().processEvents()
        rates.append(counter.frames / (time.perf_counter() - t0))
        settle(window)
    view.viewport().removeEventFilter(counter)
    close(window)
    return {"pulse_fps_1000": statistics.median(rates)}


def _at_100(window: MainWindow) -> None:
    view = window.canvas
    view.zoom_by(1.0 / view.zoom())  # 100 %: boxes readable, a part of the graph shown
    view.centerOn(view.canvas.nodes_rect().center())
    paint(window)


def wheel(view: QGraphicsView, notches: int) -> None:
    """One wheel step of ``notches`` over the middle of ``view``, as a mouse sends it."""
    centre = QPointF(view.viewport().rect().center())
    event = QWheelEvent(centre, QPointF(view.viewport().mapToGlobal(centre.toPoint())),
                        QPoint(), QPoint(0, 120 * notches), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(view.viewport(), event)


def _zoom_ms(name: str, at_fit: bool, repeats: int = 24, n_nodes: int = 1000) -> Figures:
    """Wheel steps in and out (x1.15) around 100 % or the fit, each to the canvas
    repaint, in three gestures of eight steps; beside it the repaint once a gesture has
    ended (the boxes drawn sharp at the new scale: ``*_rest_ms``), and the floor
    zooming the bare view the same way."""
    window = open_window(graph_path(n_nodes))
    view = window.canvas
    if at_fit:
        view.fit_all()
        paint(window)
    else:
        _at_100(window)
    factors = [1.15, 1 / 1.15] * repeats
    notches = iter([1, -1] * repeats)

    def zoom() -> None:
        wheel(view, next(notches))
        view.viewport().repaint()

    def rest() -> float:
        deadline = time.perf_counter() + 1.0
        while time.perf_counter() < deadline:  # the gesture ends (its timer), untimed
            app().processEvents()
            time.sleep(0.01)
        return timed_ms(view.viewport().repaint)

    times, rests = [], []
    for _ in range(3):
        times += [timed_ms(zoom) for _ in range(repeats // 3)]
        rests.append(rest())
    ms = statistics.median(times)
    floor = Floor(Snapshot(window))
    floor.match(window)

    def floor_zoom(factor: float) -> float:
        floor.view.scale(factor, factor)
        return floor.repaint_ms()

    floor_ms = statistics.median(floor_zoom(f) for f in factors[:repeats])
    floor.close()
    close(window)
    return {name: ms, name.replace("_ms", "_rest_ms"): statistics.median(rests),
            name.replace("_ms", "_floor_ms"): floor_ms}


def zoom_repaint_1000_ms() -> Figures:
    return _zoom_ms("zoom_repaint_1000_ms", at_fit=False)


def zoom_fit_repaint_1000_ms() -> Figures:
    return _zoom_ms("zoom_fit_repaint_1000_ms", at_fit=True)


def pan_repaint_5000_ms() -> Figures:
    return _pan_ms(5000)


def _pan_ms(n_nodes: int, repeats: int = 16, step_px: int = 120) -> Figures:
    """A drag across the graph at 100 %, one way, each step exposing boxes not painted
    before, to the repaint; the floor pans the bare view the same way."""
    window = open_window(graph_path(n_nodes))
    _at_100(window)
    view = window.canvas
    nodes = view.canvas.nodes_rect()
    view.centerOn(nodes.left() + view.viewport().width() / 2 / view.zoom(), nodes.center().y())
    paint(window)
    floor = Floor(Snapshot(window))
    floor.match(window)

    def pan(v: QGraphicsView) -> float:
        bar = v.horizontalScrollBar()

        def move() -> None:
            bar.setValue(bar.value() + step_px)
            v.viewport().repaint()

        return timed_ms(move)

    ms = statistics.median(pan(view) for _ in range(repeats))
    floor_ms = statistics.median(pan(floor.view) for _ in range(repeats))
    floor.close()
    close(window)
    return {f"pan_repaint_{n_nodes}_ms": ms, f"pan_repaint_{n_nodes}_floor_ms": floor_ms}


def growth_1k_10k() -> Figures:
    """How a player step, a zoom step at 100 % and a pan step grow from 1,000 to 10,000
    nodes: each measured at both sizes in this run, and the exponent ``e`` of
    ``time ~ N^e`` between them (target <= 1.1; below 1, the fixed cost of a frame
    still dominates). The floors are printed beside, as in the figures at one size."""
    out: Figures = {}
    for name, measure in (
        ("player_step", lambda n: _player_step_ms(n)),
        ("zoom_repaint", lambda n: _zoom_ms(f"zoom_repaint_{n}_ms", False, n_nodes=n)),
        ("pan_repaint", _pan_ms),
    ):
        small, big = measure(1000), measure(10000)
        out.update(small)
        out.update(big)
        ratio = float(big[f"{name}_10000_ms"]) / float(small[f"{name}_1000_ms"])
        out[f"{name}_growth_1k_10k"] = float(np.log10(ratio))
    return out


def _edit_window() -> MainWindow:
    window = open_window(graph_path(200))
    window.canvas.select_all()
    paint(window)
    return window


def _painted_ms(act: Callable[[], object], viewport: QWidget, undo: Callable[[], object],
                repeats: int) -> float:
    """``act``, then the events it posted delivered (what the screen shows next): the
    median over ``repeats``, ``undo`` after each (untimed). Raises when ``viewport`` did
    not paint within that time (an app that defers its repaint shows nothing new yet);
    the same rule for both apps."""
    views = _Painted({f"{type(viewport.parent()).__name__}'s viewport": viewport})
    times = []
    try:
        for _ in range(repeats):
            views.painted.clear()
            t0 = time.perf_counter()
            act()
            app().processEvents()
            times.append((time.perf_counter() - t0) * 1000.0)
            views.require_all(views.painted)
            undo()
    finally:
        views.close()
    return statistics.median(times)


def _nodegraphqt_add_ms(window: MainWindow, repeats: int) -> Figures:
    """NodeGraphQt (0.6.x) on the same PySide6, holding the same 200 boxes and edges at
    the same places: one node created (its undo command) to the repaint, and to the end
    of the events it posted, its viewport painted (``_painted_ms``)."""
    names = ("add_node_200_nodegraphqt_ms", "add_node_200_nodegraphqt_painted_ms")
    try:
        from NodeGraphQt import BaseNode, NodeGraph
    except ImportError:
        skipped = "skipped (NodeGraphQt is not installed: pip install NodeGraphQt to compare)"
        return dict.fromkeys(names, skipped)

    class Op(BaseNode):
        __identifier__ = "bench"
        NODE_NAME = "op"

        def __init__(self) -> None:
            super().__init__()
            for i in range(2):
                self.add_input(f"in{i}")
            self.add_output("out")

    graph = NodeGraph()
    graph.register_node(Op)
    widget = graph.widget
    widget.resize(window.canvas.viewport().size())
    widget.show()
    doc = window.doc
    made = {nid: graph.create_node("bench.Op", name=nid, pos=list(doc.positions[nid]),
                                   push_undo=False)
            for nid in doc.graph.nodes}
    for nid, node in doc.graph.nodes.items():
        for i, src in enumerate(node.inputs[:2]):
            if src is not None:
                made[src].set_output(0, made[nid].input(i))
    app().processEvents()
    widget.repaint()
    centre = doc.positions[next(iter(doc.graph.nodes))]
    viewport = graph.viewer().viewport()
    # (the repaint figure's spot is below NodeGraphQt's view: nothing there paints; the
    # painted figure adds at the view's centre, as the canvas's command does)
    middle = graph.viewer().mapToScene(viewport.rect().center())

    def add() -> None:
        graph.create_node("bench.Op", pos=[centre[0], centre[1] - 200.0])
        app().processEvents()
        widget.repaint()

    def undo() -> None:
        graph.undo_stack().undo()
        app().processEvents()
        widget.repaint()

    times = []
    for _ in range(repeats):
        times.append(timed_ms(add))
        undo()
    painted = _painted_ms(lambda: graph.create_node("bench.Op", pos=[middle.x(), middle.y()]),
                          viewport, undo, repeats)
    widget.close()
    widget.deleteLater()
    app().processEvents()
    return dict(zip(names, (statistics.median(times), painted), strict=True))


def add_node_200_ms(repeats: int = 7) -> Figures:
    """One node added to a 200-node graph (the canvas's command) to the repaint, beside
    NodeGraphQt doing the same and a bare view adding one box; ``*_painted_ms``: the
    command to the end of the events it posted, the canvas's viewport painted by then
    (what the screen shows next), ours and NodeGraphQt's."""
    window = open_window(graph_path(200))
    view = window.canvas
    centre = view.mapToScene(view.viewport().rect().center())

    def command() -> None:
        assert view.add_node_at("input", centre) is not None

    def add() -> None:
        command()
        paint(window)

    def undo() -> None:
        window.doc.undo_stack.undo()
        paint(window)

    times = []
    for _ in range(repeats):
        times.append(timed_ms(add))
        undo()
    painted = _painted_ms(command, view.viewport(), undo, repeats)
    floor = Floor(Snapshot(window))
    floor.match(window)

    def floor_add() -> None:
        floor.add_box(QRectF(centre.x(), centre.y(), 160.0, 72.0), "x")
        floor.view.viewport().repaint()

    floor_ms = median_ms(floor_add, repeats)
    floor.close()
    peer = _nodegraphqt_add_ms(window, repeats)
    close(window)
    return {"add_node_200_ms": statistics.median(times), "add_node_200_floor_ms": floor_ms,
            "add_node_200_nodegraphqt_ms": peer["add_node_200_nodegraphqt_ms"],
            "add_node_200_painted_ms": painted,
            "add_node_200_nodegraphqt_painted_ms": peer["add_node_200_nodegraphqt_painted_ms"]}


def duplicate_200_ms(repeats: int = 3) -> Figures:
    window = _edit_window()
    n = len(window.doc.graph)
    times = []
    for _ in range(repeats):
        window.canvas.select_ids(list(window.doc.graph.nodes))
        t0 = time.perf_counter()
        window.duplicate()
        paint(window)
        times.append((time.perf_counter() - t0) * 1000.0)
        assert len(window.doc.graph) == 2 * n
        window.doc.undo_stack.undo()
        paint(window)
    close(window)
    return {"duplicate_200_ms": statistics.median(times)}


def _delete_and_undo_ms(repeats: int = 3) -> tuple[float, float]:
    window = _edit_window()
    n = len(window.doc.graph)
    deletes, undos = [], []
    for _ in range(repeats):
        window.canvas.select_all()
        t0 = time.perf_counter()
        window.canvas.delete_selected()  # what Edit > Delete does
        paint(window)
        deletes.append((time.perf_counter() - t0) * 1000.0)
        assert len(window.doc.graph) == 0
        t0 = time.perf_counter()
        window.doc.undo_stack.undo()
        paint(window)
        undos.append((time.perf_counter() - t0) * 1000.0)
        assert len(window.doc.graph) == n
    close(window)
    return statistics.median(deletes), statistics.median(undos)


def delete_200_ms() -> Figures:
    return {"delete_200_ms": _delete_and_undo_ms()[0]}


def undo_delete_200_ms() -> Figures:
    return {"undo_delete_200_ms": _delete_and_undo_ms()[1]}


def auto_layout_5000_s(repeats: int = 3) -> Figures:
    window = open_window(graph_path(5000))
    times = []
    for _ in range(repeats):
        window.doc.move_nodes({n: (0.0, 0.0) for n in window.doc.graph.nodes})  # undo the layout
        paint(window)
        t0 = time.perf_counter()
        window.canvas.auto_layout()
        paint(window)
        times.append(time.perf_counter() - t0)
    close(window)
    return {"auto_layout_5000_s": statistics.median(times)}


# The first painted frame: the paint event is delivered, then painted and flushed; the
# timer fires when control is back in the event loop, after the frame is on screen.
_FIRST_FRAME = """
class FirstFrame(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and not getattr(self, "seen", False):
            self.seen = True
            QTimer.singleShot(0, lambda: (print("painted", flush=True), app.quit()))
        return False
spy = FirstFrame()
"""

_STARTUP_CHILD = """
from PySide6.QtCore import QEvent, QObject, QTimer
from gui.app import create_window, ensure_app
app = ensure_app()
window = create_window()
""" + _FIRST_FRAME + """
window.canvas.viewport().installEventFilter(spy)
window.show()
app.exec()
window.doc.undo_stack.clear()
"""

#: The floor: a bare main window of the size the app's window opens at.
_BARE_CHILD = """{libs}
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow, QWidget
app = QApplication([])
window = QMainWindow()
window.setCentralWidget({central})
window.resize({w}, {h})
""" + _FIRST_FRAME + """
window.centralWidget().installEventFilter(spy)
window.show()
app.exec()
"""

#: What any first frame of the window showing the document pays before the app's own
#: code: numpy (the document's values are its arrays), PySide6's ``Qt`` namespace, whose
#: ~90 enums are built at its first use (every widget's set-up names some), and a line
#: of text (the font database is read at the first text; the bare window draws none).
_LIBS = """
import numpy
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
"""

_RSS_CHILD = """
import time
from gui.app import create_window, ensure_app
app = ensure_app()
window = create_window()
window.show()
deadline = time.perf_counter() + 1.5
while time.perf_counter() < deadline:  # idle: paint, settle timers
    app.processEvents()
    time.sleep(0.02)
rss = [l for l in open("/proc/self/status") if l.startswith("VmRSS:")][0].split()[1]
print(int(rss) / 1024, flush=True)
window.doc.undo_stack.clear()
"""


def _screen_env() -> dict[str, str]:
    """The environment of a child app: a first launch's (settings of its own: the
    windows of the figures run before it in this process left their last file as the
    session to resume, and the idle app measured auto-layout's 5,000 boxes), and on
    the offscreen platform a screen just big enough for the window's preferred size
    (title bar included), so it opens at it."""
    env = dict(os.environ)
    home = tempfile.mkdtemp(dir=_SANDBOX, prefix="child-")
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        env[var] = os.path.join(home, var.lower())
    if env.get("QT_QPA_PLATFORM", "").startswith("offscreen"):
        w, h = PREFERRED_SIZE
        config = Path(_SANDBOX) / "screen.json"
        config.write_text(json.dumps({"screens": [{
            "name": "bench", "x": 0, "y": 0, "width": w + 16, "height": h + 48,
            "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
        env["QT_QPA_PLATFORM"] = f"offscreen:configfile={config}"
    return env


def _child(code: str) -> tuple[str, float]:
    """Run ``code`` in a fresh interpreter (imports included): its first output line and
    the seconds until that line arrived."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=_screen_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    elapsed = time.perf_counter() - t0
    proc.wait(timeout=120)
    return line, elapsed


def startup_s(runs: int = 3) -> Figures:
    """Process start to the first painted frame of the window with seed example 2, at
    its preferred size, with bytecode compiled as an installed app has it; beside it a
    bare ``QMainWindow`` of that size, and the same after :data:`_LIBS` (the part of the
    ratio no change to the app's modules removes while the first frame shows the
    document), runs interleaved."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", "engine", "gui"], cwd=ROOT,
                   check=True)
    bare = _BARE_CHILD.replace("{w}", str(PREFERRED_SIZE[0])).replace("{h}", str(PREFERRED_SIZE[1]))
    children = {
        "startup_s": _STARTUP_CHILD,
        "startup_floor_s": bare.replace("{libs}", "").replace("{central}", "QWidget()"),
        "startup_floor_libs_s": bare.replace("{libs}", _LIBS).replace("{central}",
                                                                      "QLabel('a text')"),
    }
    times: dict[str, list[float]] = {name: [] for name in children}
    for _ in range(runs):
        for name, code in children.items():
            line, elapsed = _child(code)
            if line != "painted":
                raise RuntimeError("the window did not paint")
            times[name].append(elapsed)
    return {name: statistics.median(values) for name, values in times.items()}


def idle_rss_mb() -> Figures:
    """Resident memory of an idle app with seed example 2 open."""
    return {"idle_rss_mb": float(_child(_RSS_CHILD)[0])}


#: Every figure, in the order printed (each prints its floor, or its peer, beside it).
FIGURES: dict[str, Callable[[], Figures]] = {
    "startup_s": startup_s,
    "open_1000_s": open_1000_s,
    "open_5000_s": open_5000_s,
    "open_unplaced_5000_s": open_unplaced_5000_s,
    "player_step_100_ms": player_step_100_ms,
    "player_step_1000_ms": player_step_1000_ms,
    "player_step_5000_ms": player_step_5000_ms,
    "pulse_fps_1000": pulse_fps_1000,
    "zoom_repaint_1000_ms": zoom_repaint_1000_ms,
    "zoom_fit_repaint_1000_ms": zoom_fit_repaint_1000_ms,
    "pan_repaint_5000_ms": pan_repaint_5000_ms,
    "add_node_200_ms": add_node_200_ms,
    "duplicate_200_ms": duplicate_200_ms,
    "delete_200_ms": delete_200_ms,
    "undo_delete_200_ms": undo_delete_200_ms,
    "auto_layout_5000_s": auto_layout_5000_s,
    "idle_rss_mb": idle_rss_mb,
    "growth_1k_10k": growth_1k_10k,
}


def main(argv: list[str] | None = None) -> None:
    names = (argv if argv is not None else sys.argv[1:]) or list(FIGURES)
    unknown = [n for n in names if n not in FIGURES]
    if unknown:
        raise SystemExit(f"unknown figure(s): {', '.join(unknown)}; known: {', '.join(FIGURES)}")
    for name in names:
        for figure, value in FIGURES[name]().items():
            shown = value if isinstance(value, str) else f"{value:.3f}"
            print(f"{figure}: {shown}", flush=True)


if __name__ == "__main__":
    main()
