"""GUI performance figures, offscreen; prints one ``name: value`` line per figure.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_gui.py [name ...]

Each figure is one function returning a number; add a figure by writing the
function and listing it in :data:`FIGURES`. Targets: ``open_1000_s`` < 1.0,
``repaint_300_ms`` < 16.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from engine.graph import Graph  # noqa: E402


def app() -> QApplication:
    """The one QApplication (created on first use)."""
    return QApplication.instance() or QApplication([])  # type: ignore[return-value]


def layered_graph(width: int, depth: int, seed: int = 0) -> Graph:
    """A graph that looks like what people build, only bigger: ``width`` leaves
    (scalars and 3-vectors), then ``depth - 1`` layers of binary and unary ops on
    nearby nodes of the layer before (plus a few skips), reduced to a scalar."""
    rng = np.random.default_rng(seed)
    g = Graph()
    prev: list[str] = []
    for i in range(width):
        nid = f"x{i}"
        value = rng.normal(size=3) if i % 3 == 0 else float(rng.normal())
        g.add_node(nid, "input" if i % 5 else "const", value=value)
        prev.append(nid)
    layers = [prev]
    for d in range(1, depth):
        layer = []
        for i in range(width):
            nid = f"n{d}_{i}"
            a = prev[(i + int(rng.integers(-1, 2))) % width]
            if rng.random() < 0.6:
                pool = layers[-2] if len(layers) > 1 and rng.random() < 0.15 else prev
                b = pool[(i + int(rng.integers(-2, 3))) % width]
                op = ("add", "mul", "sub")[int(rng.integers(0, 3))]
                g.add_node(nid, op, [a, b] if a != b else [a, prev[(i + 1) % width]])
            else:
                g.add_node(nid, ("tanh", "sigmoid", "sin", "relu")[int(rng.integers(0, 4))], [a])
            layer.append(nid)
        layers.append(layer)
        prev = layer
    return g


def graph_file(graph: Graph, output: str | None = None) -> Any:
    """A GraphFile (or a stand-in with the same fields) without positions."""
    try:
        from engine.fileformat import GraphFile

        return GraphFile(graph=graph, output=output)
    except ImportError:  # pragma: no cover - the file format is written in parallel
        return SimpleNamespace(graph=graph, node_extra={}, output=output, gradient=None,
                               title="", description="", extra={})


def with_output(graph: Graph, last_layer: list[str] | None = None) -> str:
    """Reduce ``last_layer`` (default: every node nothing consumes) to one scalar, by a
    balanced tree of adds then a sum: the backward output."""
    level, k = list(last_layer if last_layer is not None else graph.outputs()), 0
    while len(level) > 1:
        nxt = []
        for a, b in zip(level[::2], level[1::2], strict=False):
            graph.add_node(f"acc{k}", "add", [a, b])
            nxt.append(f"acc{k}")
            k += 1
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    graph.add_node("loss", "sum", [level[0]])
    return "loss"


def _warm_app() -> QApplication:
    """The app as a user has it when opening a file: running, one small canvas already
    shown and painted (fonts, style and platform loaded; that is ``startup_s``)."""
    from gui.canvas import CanvasView
    from gui.document import GraphDocument

    qapp = app()
    doc = GraphDocument()
    doc.load(graph_file(layered_graph(width=3, depth=3, seed=0)), None)
    view = CanvasView(doc)
    view.resize(400, 300)
    view.show()
    qapp.processEvents()
    view.grab()
    view.close()
    qapp.processEvents()
    return qapp


def open_1000_s() -> float:
    """Open a 1,000-node graph file with no positions in the running app: build the
    graph, new document and canvas, forward + backward, auto-layout, first paint."""
    from gui.canvas import CanvasView
    from gui.document import GraphDocument

    qapp = _warm_app()
    t0 = time.perf_counter()
    graph = layered_graph(width=25, depth=39, seed=1)
    output = with_output(graph, [f"n38_{i}" for i in range(25)])
    assert len(graph) >= 1000, len(graph)
    doc = GraphDocument()
    view = CanvasView(doc)
    view.resize(1600, 1000)
    view.show()
    doc.load(graph_file(graph, output), None)
    view.grab()  # the first paint, all of it (laid out, fitted, every box drawn)
    elapsed = time.perf_counter() - t0
    qapp.processEvents()
    assert len(view.canvas.nodes) == len(graph) and doc.results.trace is not None
    view.close()
    return elapsed


def repaint_300_ms(repeats: int = 30) -> float:
    """One full repaint of a 2560×1440 view with 300 nodes visible (median of repeats)."""
    from gui.canvas import CanvasView
    from gui.document import GraphDocument

    qapp = app()
    graph = layered_graph(width=20, depth=15, seed=2)
    doc = GraphDocument()
    doc.load(graph_file(graph), None)
    view = CanvasView(doc)
    view.resize(2560, 1440)
    view.show()
    qapp.processEvents()
    view.fit_all()
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    assert visible.contains(view.canvas.nodes_rect()) and len(view.canvas.nodes) == 300
    viewport = view.viewport()
    viewport.repaint()  # warm up (glyph caches, item pixmaps)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        viewport.repaint()
        times.append((time.perf_counter() - t0) * 1000)
    view.close()
    return statistics.median(times)


def anim_frame_100_ms(frames: int = 60) -> float:
    """One animation frame of backward playback on a 100-node graph: move the pulse
    along the active edge and repaint the whole 1920×1080 viewport (median of frames).

    Worst case on purpose (a full repaint, not just the dirty region); target < 16 ms.
    """
    from gui.canvas import CanvasView
    from gui.document import GraphDocument
    from gui.player import Player, connect_canvas

    qapp = app()
    graph = layered_graph(width=10, depth=8, seed=3)
    output = with_output(graph)
    assert len(graph) == 101, len(graph)  # 80 op/leaf nodes + the reduction to a scalar
    doc = GraphDocument()
    doc.load(graph_file(graph, output), None)
    assert doc.results.trace is not None
    player = Player(doc)
    view = CanvasView(doc)
    view.animations_enabled = False  # this loop drives the pulse, one frame at a time
    connect_canvas(player, view)
    view.resize(1920, 1080)
    view.show()
    qapp.processEvents()
    view.fit_all()
    player.seek(player.timeline.position_of_step(len(player.timeline.steps) // 2))
    viewport = view.viewport()
    viewport.repaint()  # warm up (glyph caches, item pixmaps)
    times = []
    for i in range(frames):
        t0 = time.perf_counter()
        view.set_pulse_progress((i % 30) / 29)
        viewport.repaint()
        times.append((time.perf_counter() - t0) * 1000)
    view.close()
    return statistics.median(times)


_STARTUP_CHILD = """
import sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from gui.app import create_window, ensure_app
app = ensure_app()
window = create_window()
class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint:
            print("painted", flush=True)
            QTimer.singleShot(0, app.quit)
        return False
spy = FirstPaint()
window.canvas.viewport().installEventFilter(spy)
window.show()
app.exec()
window.doc.undo_stack.clear()
"""


def startup_s(runs: int = 3) -> float:
    """``python main.py`` to the first paint of the canvas with seed example 2, in a fresh
    interpreter (imports included), median of ``runs``. Target: < 2 s."""
    import subprocess

    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", _STARTUP_CHILD], cwd=root, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        times.append(time.perf_counter() - t0)
        proc.wait(timeout=60)
        if line.strip() != "painted":
            raise RuntimeError("the app did not paint")
    return statistics.median(times)


#: Every figure, in the order printed.
FIGURES: dict[str, Callable[[], float]] = {
    "open_1000_s": open_1000_s,
    "repaint_300_ms": repaint_300_ms,
    "anim_frame_100_ms": anim_frame_100_ms,
    "startup_s": startup_s,
}


def main(argv: list[str] | None = None) -> None:
    names = (argv if argv is not None else sys.argv[1:]) or list(FIGURES)
    for name in names:
        value = FIGURES[name]()
        print(f"{name}: {value:.3f}", flush=True)


if __name__ == "__main__":
    main()
