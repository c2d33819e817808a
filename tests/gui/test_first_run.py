"""First run: no display gives one line (not Qt's abort), the window fits its screen
with the graph fitted, status messages are seen, and the first paint loads only what
it shows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication

from gui.app import has_display
from gui.commands import Disconnect, push
from gui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]


def test_no_display_prints_one_line_and_exits_2() -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    done = subprocess.run([sys.executable, "main.py"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "no display" in lines[0]
    for hint in ("main.py run", "main.py export", "QT_QPA_PLATFORM=offscreen"):
        assert hint in lines[0]



#: Modules the first paint of the default window must not load (benchmarks/bench_gui.py
#: startup_s times it): each is a panel not shown yet, a cold path, or what they import.
COLD_AT_START = (
    "pyqtgraph", "PySide6.QtNetwork", "subprocess", "gui.export", "gui.panels.train",
    "gui.panels.quiz", "gui.panels.gradcheck", "gui.panels.forward_mode",
    "gui.panels.summary", "gui.panels.jacobian_view", "gui.panels.gradient_flow",
    "gui.canvas.quick_search", "gui.single_instance", "engine.gradcheck", "secrets",
    "engine.pytorch_export", "engine.pytorch_train", "engine.pytorch_import", "gui.clipboard",
    "engine.tracefile", "engine.captured", "engine.train", "gui.model.train_view",
    "gui.train_commands", "html",
)

#: Qt classes the first paint must not initialise: PySide6 builds a class, and each of
#: its enums, when Python first names it (``vars(QtGui)`` holds only those built).
COLD_QT_CLASSES = ("QTextFormat", "QTextCharFormat")

_FIRST_PAINT = """
import gc, sys
from PySide6 import QtGui
from gui.app import create_window, ensure_app
app = ensure_app()
window = create_window()
window.show()
app.processEvents()
assert len(window.canvas.canvas.nodes) == len(window.doc.graph) > 0  # the example, drawn
young = {id(o) for o in gc.get_objects()}
print(*[m for m in COLD if m in sys.modules], *[c for c in COLD_QT if c in vars(QtGui)])
print(gc.get_freeze_count() > 0, id(window.doc.graph) in young)
# Built when first shown or used: the hidden code dock's editor, the node section's
# widgets (no node is selected).
print(window.pytorch.dock.widget() is None, window.inspector.node.body is None)
window.doc.undo_stack.clear()
"""


def test_the_first_paint_loads_no_cold_module_and_freezes_only_what_lives_as_long_as_the_app(
        tmp_path: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen",
               **{v: str(tmp_path / v) for v in ("XDG_CONFIG_HOME", "XDG_DATA_HOME",
                                                  "XDG_CACHE_HOME")})
    code = f"COLD = {COLD_AT_START!r}\nCOLD_QT = {COLD_QT_CLASSES!r}\n" + _FIRST_PAINT
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded, frozen, unbuilt = done.stdout.splitlines()
    assert loaded == ""  # none of COLD_AT_START, nor of COLD_QT_CLASSES
    assert frozen == "True True"  # the window's objects frozen, the document's not
    assert unbuilt == "True True"  # no code dock editor, no node widgets

def test_display_detection() -> None:
    assert not has_display({}, "linux")
    assert has_display({"DISPLAY": ":0"}, "linux")
    assert has_display({"WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert has_display({"QT_QPA_PLATFORM": "offscreen"}, "linux")
    assert has_display({}, "win32") and has_display({}, "darwin")


def _window(qtbot) -> MainWindow:  # noqa: ANN001
    from gui.app import create_window

    win = create_window()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    qtbot.wait(30)
    QApplication.processEvents()
    return win


def _graph_visible(win: MainWindow) -> bool:
    view = win.canvas
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    return visible.contains(view.canvas.nodes_rect())


def test_window_opens_inside_a_small_screen_with_the_graph_fitted(
        qtbot, settings_sandbox, no_dialogs, monkeypatch) -> None:  # noqa: ANN001
    projector = QRect(0, 0, 1280, 690)  # a 1280x720 screen less a panel
    monkeypatch.setattr(MainWindow, "start_screen_rect", lambda self: projector)
    win = _window(qtbot)
    try:
        assert projector.contains(win.geometry())
        assert _graph_visible(win)
        win.showMaximized()
        qtbot.waitUntil(lambda: _graph_visible(win))  # maximising fits again
    finally:
        win.close()


def test_status_messages_show_beside_problems_and_refusals_on_the_canvas(
        qtbot, settings_sandbox, no_dialogs) -> None:  # noqa: ANN001
    win = _window(qtbot)
    try:
        doc, canvas = win.doc, win.canvas
        win.resize(1280, 700)
        win._problems_text = "a very long problem " * 40  # noqa: SLF001 - as the results set it
        win._elide_problems()  # noqa: SLF001
        QApplication.processEvents()
        bar = win.statusBar()
        assert win.problems.width() <= 0.5 * bar.width()
        win.show_status("Saved")
        assert bar.currentMessage() == "Saved"
        assert push(doc, Disconnect(doc, "y1", 1)) is None
        assert not canvas.try_connect(canvas.node_item("y").out_port,
                                      canvas.node_item("y1").in_ports[1])
        assert canvas.note.isVisible() and "cycle" in canvas.note.text()
        assert canvas.viewport().rect().contains(canvas.note.geometry().center())
    finally:
        win.close()


def test_the_chain_rule_text_is_laid_out_only_at_its_real_size_at_the_first_show(
        qtbot, settings_sandbox, no_dialogs, monkeypatch) -> None:  # noqa: ANN001
    """A tab page is shown before the tab widget gives it its size: the panel waits for
    that size (it laid the write-up out six times at a 256x192 stand-in, then once)."""
    from gui.panels.chain_rule import ChainRulePanel

    widths: list[int] = []
    laid_out = ChainRulePanel._laid_out  # noqa: SLF001

    def spy(self: ChainRulePanel, html: str):  # noqa: ANN202
        widths.append(self.browser.viewport().width())
        return laid_out(self, html)

    monkeypatch.setattr(ChainRulePanel, "_laid_out", spy)
    win = _window(qtbot)
    try:
        assert widths and set(widths) == {win.chain_rule.browser.viewport().width()}
        assert "Backward starts at the output" in win.chain_rule.browser.toPlainText()
    finally:
        win.doc.undo_stack.clear()
        win.close()


def test_the_app_loads_numpy_with_one_blas_thread_unless_the_user_chose() -> None:
    """main.py sets OPENBLAS_NUM_THREADS before anything loads numpy (it reads it once)."""
    code = (
        "import os, sys, main, gui.app\n"
        "gui.app.main = lambda args: print(os.environ.get('OPENBLAS_NUM_THREADS'),"
        " 'numpy' in sys.modules) or 0\n"
        "main.main([])\n"
    )
    for chosen, expected in ((None, "1 False"), ("2", "2 False")):
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        if chosen is not None:
            env["OPENBLAS_NUM_THREADS"] = chosen
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == expected
