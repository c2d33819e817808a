"""GUI figures that time what users wait for; prints one ``name: value`` line per figure.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_gui.py [name ...]

Every figure runs the real :class:`~gui.main_window.MainWindow` on a file written
to a temporary folder: a random layered graph of the stated size (fixed seed, long
edges included), saved with the positions the app's own auto-layout gives it, as a
user's saved file has. Repaints are uncached: a zoom step invalidates every box's
pixmap, and panning drops the cached background first. Targets (issue 10):

==========================  ======  ===========================================
figure                      target  what is timed
==========================  ======  ===========================================
``startup_s``               < 0.8   process start to first painted window (seed 2)
``open_1000_s``             < 0.5   open a 1,000-node file to its first paint
``open_5000_s``             < 2     the same, 5,000 nodes
``player_step_1000_ms``     < 16    one backward step, every view repainted
``player_step_5000_ms``     < 33    the same, 5,000 nodes
``zoom_repaint_1000_ms``    < 16    one zoom step and the canvas repaint
``pan_repaint_5000_ms``     < 16    one pan step and the canvas repaint
``duplicate_200_ms``        < 200   select all + duplicate, to the repaint
``delete_200_ms``           < 200   select all + delete, to the repaint
``undo_delete_200_ms``      < 200   undo that delete, to the repaint
``auto_layout_5000_s``      < 1     auto-layout 5,000 nodes, to the repaint
``idle_rss_mb``             < 100   resident memory, seed example 2 open, idle
==========================  ======  ===========================================

Timed loops report the median of their repeats. One BLAS thread, as in the engine
benchmark.
"""

from __future__ import annotations

import atexit
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
from PySide6.QtWidgets import QApplication  # noqa: E402

from engine.fileformat import GraphFile, save  # noqa: E402
from engine.graph import Graph  # noqa: E402
from gui.application import ensure_app  # noqa: E402
from gui.main_window import MainWindow  # noqa: E402

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


def graph_path(n_nodes: int) -> Path:
    """A saved file of about ``n_nodes`` nodes, with the app's auto-layout positions."""
    if n_nodes not in _FILES:
        graph, output = layered_graph(n_nodes, seed=n_nodes)
        path = Path(_SANDBOX) / f"layered_{n_nodes}.bpgraph"
        save(path, GraphFile(graph=graph, output=output))
        window = open_window(path)  # no positions yet: the app lays it out on open
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
    window.doc.undo_stack.setClean()  # nothing to ask about
    window.close()
    window.deleteLater()
    app().processEvents()


def paint(window: MainWindow) -> None:
    """Deliver pending events, then paint the whole window now (all views)."""
    app().processEvents()
    window.repaint()


def median_ms(fn: Callable[[], None], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times)


# --------------------------------------------------------------------------- figures


def _open_s(n_nodes: int, repeats: int = 3) -> float:
    path = graph_path(n_nodes)
    window = open_window()  # the app is running with the example, as after startup
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        assert window.files.load_path(path)
        paint(window)
        times.append(time.perf_counter() - t0)
        assert len(window.canvas.canvas.nodes) == len(window.doc.graph)
        window.open_default_example()
        paint(window)
    close(window)
    return statistics.median(times)


def open_1000_s() -> float:
    return _open_s(1000)


def open_5000_s() -> float:
    return _open_s(5000)


def _player_step_ms(n_nodes: int, repeats: int = 15) -> float:
    window = open_window(graph_path(n_nodes))
    player = window.player
    assert window.doc.results.trace is not None
    player.seek(player.timeline.position_of_step(len(player.timeline.steps) // 3))
    paint(window)

    def step() -> None:
        player.step_forward()
        paint(window)

    ms = median_ms(step, repeats)
    close(window)
    return ms


def player_step_1000_ms() -> float:
    return _player_step_ms(1000)


def player_step_5000_ms() -> float:
    return _player_step_ms(5000)


def zoom_repaint_1000_ms(repeats: int = 16) -> float:
    window = open_window(graph_path(1000))
    view = window.canvas
    view.fit_all()
    paint(window)
    factors = iter([1.15, 1 / 1.15] * repeats)

    def zoom() -> None:
        view.zoom_by(next(factors))
        view.viewport().repaint()

    ms = median_ms(zoom, repeats)
    close(window)
    return ms


def pan_repaint_5000_ms(repeats: int = 16) -> float:
    window = open_window(graph_path(5000))
    view = window.canvas
    view.zoom_by(1.0 / view.zoom())  # 100 %: boxes readable, a small part of the graph shown
    view.centerOn(view.canvas.nodes_rect().center())
    paint(window)
    bar = view.horizontalScrollBar()
    steps = iter([120, -120] * repeats)

    def pan() -> None:
        bar.setValue(bar.value() + next(steps))
        view.resetCachedContent()  # uncached: the background is drawn again
        view.viewport().repaint()

    ms = median_ms(pan, repeats)
    close(window)
    return ms


def _edit_window() -> MainWindow:
    window = open_window(graph_path(200))
    window.canvas.select_all()
    paint(window)
    return window


def duplicate_200_ms(repeats: int = 3) -> float:
    window = _edit_window()
    n = len(window.doc.graph)
    times = []
    for _ in range(repeats):
        window.canvas.select_all()
        ids = list(window.doc.graph.nodes)
        window.canvas.select_ids(ids)
        t0 = time.perf_counter()
        window.duplicate()
        paint(window)
        times.append((time.perf_counter() - t0) * 1000.0)
        assert len(window.doc.graph) == 2 * n
        window.doc.undo_stack.undo()
        paint(window)
    close(window)
    return statistics.median(times)


def _delete_and_undo_ms(repeats: int = 3) -> tuple[float, float]:
    window = _edit_window()
    n = len(window.doc.graph)
    deletes, undos = [], []
    for _ in range(repeats):
        window.canvas.select_all()
        t0 = time.perf_counter()
        window.delete_selection()
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


def delete_200_ms() -> float:
    return _delete_and_undo_ms()[0]


def undo_delete_200_ms() -> float:
    return _delete_and_undo_ms()[1]


def auto_layout_5000_s(repeats: int = 3) -> float:
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
    return statistics.median(times)


_CHILD_PRELUDE = """
import os, sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from gui.app import create_window, ensure_app
app = ensure_app()
window = create_window()
"""

_STARTUP_CHILD = _CHILD_PRELUDE + """
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

_RSS_CHILD = _CHILD_PRELUDE + """
window.show()
deadline = time.perf_counter() + 1.5
while time.perf_counter() < deadline:  # idle: paint, settle timers
    app.processEvents()
    time.sleep(0.02)
rss = [l for l in open("/proc/self/status") if l.startswith("VmRSS:")][0].split()[1]
print(int(rss) / 1024, flush=True)
window.doc.undo_stack.clear()
"""


def _child(code: str) -> tuple[str, float]:
    """Run ``code`` in a fresh interpreter (imports included): its first output line and
    the seconds until that line arrived."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    elapsed = time.perf_counter() - t0
    proc.wait(timeout=120)
    return line, elapsed


def startup_s(runs: int = 3) -> float:
    """Process start to the first paint of the window with seed example 2."""
    times = []
    for _ in range(runs):
        line, elapsed = _child(_STARTUP_CHILD)
        if line != "painted":
            raise RuntimeError("the app did not paint")
        times.append(elapsed)
    return statistics.median(times)


def idle_rss_mb() -> float:
    """Resident memory of an idle app with seed example 2 open."""
    return float(_child(_RSS_CHILD)[0])


#: Every figure, in the order printed.
FIGURES: dict[str, Callable[[], float]] = {
    "startup_s": startup_s,
    "open_1000_s": open_1000_s,
    "open_5000_s": open_5000_s,
    "player_step_1000_ms": player_step_1000_ms,
    "player_step_5000_ms": player_step_5000_ms,
    "zoom_repaint_1000_ms": zoom_repaint_1000_ms,
    "pan_repaint_5000_ms": pan_repaint_5000_ms,
    "duplicate_200_ms": duplicate_200_ms,
    "delete_200_ms": delete_200_ms,
    "undo_delete_200_ms": undo_delete_200_ms,
    "auto_layout_5000_s": auto_layout_5000_s,
    "idle_rss_mb": idle_rss_mb,
}


def main(argv: list[str] | None = None) -> None:
    names = (argv if argv is not None else sys.argv[1:]) or list(FIGURES)
    unknown = [n for n in names if n not in FIGURES]
    if unknown:
        raise SystemExit(f"unknown figure(s): {', '.join(unknown)}; known: {', '.join(FIGURES)}")
    for name in names:
        value = FIGURES[name]()
        print(f"{name}: {value:.3f}", flush=True)


if __name__ == "__main__":
    main()
