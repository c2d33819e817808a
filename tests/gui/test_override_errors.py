"""A bug raising inside a Qt virtual the app overrides is reported, and frees nothing.

shiboken6 6.11 keeps an exception that escapes a Python override called by C++ while
Python is further up the stack (here ``window.show()``: the view's resize scrolls it,
``scrollContentsBy`` runs the canvas) and, until it raises it, decrefs the function of
each other Python override it looks up for the first time: the panels' ``resizeEvent``
as the window is first shown. That function was freed while its class still listed it,
and ``gc.collect()`` later segfaulted on it (a 5,000-node file, an edge-bounds change
whose assertion failed in ``scrollContentsBy``). The script below makes the canvas raise
on purpose while a window is shown, holding every function of the app's Qt classes so
that a stray decref shows as a lower count instead of a crash. It runs in a child
process: a regression is a failed assertion, not a suite killed by SIGSEGV. The same for
an override that returns a value (an event filter): guarded, it answers a safe default.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_RAISE_WHILE_SHOWN = """
import gc, inspect, sys
from shiboken6 import Shiboken
from gui.application import ensure_app
app = ensure_app()
from gui.main_window import MainWindow
from {module} import {cls} as Broken

held = {{f"{{cls.__qualname__}}.{{name}}": f  # every function of the app's Qt classes
        for module_name, module in list(sys.modules.items()) if module_name.startswith("gui")
        for cls in vars(module).values()
        if inspect.isclass(cls) and cls.__module__ == module_name
        and issubclass(cls, Shiboken.Object)
        for name, f in vars(cls).items() if inspect.isfunction(f)}}
window = MainWindow()
window.open_default_example()
kept = Broken.{method}

def broken(*args):
    raise AssertionError("a bug in {cls}.{method}")

Broken.{method} = broken
before = {{name: sys.getrefcount(f) for name, f in held.items()}}
window.resize(1200, 800)
window.show()
app.processEvents()
Broken.{method} = kept
gc.collect()
print("held", len(held) > 100, flush=True)
print("dropped", *sorted(n for n, f in held.items() if sys.getrefcount(f) < before[n]))
"""


@pytest.mark.parametrize(
    ("module", "cls", "method"),
    [
        # reached from the view's scrollContentsBy and resizeEvent (they return nothing)
        ("gui.canvas.scene", "CanvasScene", "set_far"),
        # reached from the panels' event filters as the window is first shown: overrides
        # that return a value to C++ (its error had been left pending, raised by show())
        ("gui.panels.follow", "WhenVisible", "render_now"),
    ],
)
def test_a_bug_in_an_override_is_reported_and_frees_no_function(
    module: str, cls: str, method: str
) -> None:
    script = _RAISE_WHILE_SHOWN.format(module=module, cls=cls, method=method)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["held", "True", "dropped"]  # was: ChainRulePanel.resizeEvent
    assert f"AssertionError: a bug in {cls}.{method}" in done.stderr  # reported, not lost


def test_a_guarded_override_reports_and_answers_a_fresh_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gui.qt_override import reported_or

    seen: list[BaseException] = []
    monkeypatch.setattr(sys, "excepthook", lambda _kind, exc, _tb: seen.append(exc))

    @reported_or(list)
    def size_hint(n: int) -> list[int]:
        if n < 0:
            raise ValueError(f"bug {n}")
        return [n]

    assert size_hint(2) == [2] and seen == []
    first, second = size_hint(-1), size_hint(-2)
    assert first == second == [] and first is not second  # made anew: a caller may change one
    assert [str(e) for e in seen] == ["bug -1", "bug -2"]


def test_a_guarded_item_change_answers_its_value(monkeypatch: pytest.MonkeyPatch) -> None:
    from gui.qt_override import reported_or_unchanged

    seen: list[BaseException] = []
    monkeypatch.setattr(sys, "excepthook", lambda _kind, exc, _tb: seen.append(exc))

    @reported_or_unchanged
    def item_change(_item: object, change: int, value: object) -> object:
        raise ValueError(f"bug {change}")

    value = object()
    assert item_change(None, 3, value) is value  # as QGraphicsItem.itemChange answers
    assert [str(e) for e in seen] == ["bug 3"]


#: Functions of the app's Qt classes named like a method of their Qt base that Qt never
#: calls from C++ (not virtual in C++): Python callers only, so an exception in one
#: raises in its caller like any other Python error.
_CALLED_FROM_PYTHON_ONLY = {"EdgeItem": {"path"}}


def _app_qt_classes() -> list[type]:
    import importlib
    import inspect
    import pkgutil

    from shiboken6 import Shiboken

    import gui

    found: list[type] = []
    for info in pkgutil.walk_packages(gui.__path__, "gui."):
        module = importlib.import_module(info.name)
        found += [cls for cls in vars(module).values()
                  if inspect.isclass(cls) and cls.__module__ == module.__name__
                  and issubclass(cls, Shiboken.Object)]
    return found


def _unguarded(classes: list[type]) -> tuple[int, list[str]]:
    """How many Qt virtuals ``classes`` override, and those of them that are unguarded.

    An override counts for each class that has it, its own or inherited from an app
    base (the undo commands' redo and undo, guarded once in their base class), and is
    named by the class that defines it. A third-party base's own (pyqtgraph's) are not
    the app's to guard."""
    import inspect

    from gui import qt_override
    from gui.panels import text_cache

    # The text browser's look-ups of the document it shows (see text_cache): Python's.
    python_only = dict(_CALLED_FROM_PYTHON_ONLY, CachedTextBrowser={
        "setDocument", *text_cache._ON_THE_DOCUMENT})  # noqa: SLF001 - the one list of them
    overrides, unguarded = 0, set()
    for cls in classes:
        qt_bases = [b for b in cls.__mro__ if b.__module__.startswith("PySide6.")]
        app_bases = [b for b in cls.__mro__ if b.__module__.startswith(("gui.", __name__))]
        for name in {name for base in app_bases for name in vars(base)}:
            owner = next(b for b in cls.__mro__ if name in vars(b))
            f = vars(owner)[name]
            if (owner not in app_bases or not inspect.isfunction(f) or name == "__init__"
                    or name in python_only.get(owner.__qualname__, ())
                    or not any(name in vars(base) for base in qt_bases)):
                continue
            overrides += 1
            if f.__code__.co_filename != qt_override.__file__:  # not one of its guards
                unguarded.add(f"{owner.__module__}.{owner.__qualname__}.{name}")
    return overrides, sorted(unguarded)


def test_every_qt_virtual_the_app_overrides_is_guarded() -> None:
    classes = _app_qt_classes()
    overrides, unguarded = _unguarded(classes)
    assert len(classes) > 50 and overrides > 80  # the walk saw the app's classes
    assert unguarded == []


def test_the_guard_walk_counts_an_inherited_guard_and_finds_an_unguarded_override() -> None:
    from PySide6.QtGui import QUndoCommand

    from gui.commands import AddNode, EditCommand

    class Plain(QUndoCommand):
        def redo(self) -> None:  # C++ calls it: an exception here would be left pending
            pass

    class Mine(EditCommand):
        def _do(self) -> None:  # a body, run by EditCommand's guarded redo
            pass

    assert _unguarded([AddNode]) == (2, [])  # redo and undo, guarded in EditCommand
    assert _unguarded([Mine, Plain]) == (3, [f"{__name__}.{Plain.__qualname__}.redo"])


def test_a_bug_in_a_composite_part_is_reported_once_and_stops_the_edit(
    qtbot, monkeypatch: pytest.MonkeyPatch  # noqa: ANN001 - pytest fixture
) -> None:
    from gui.commands import AddNode, Composite
    from gui.document import GraphDocument

    doc = GraphDocument()
    seen: list[BaseException] = []
    monkeypatch.setattr(sys, "excepthook", lambda _kind, exc, _tb: seen.append(exc))

    add_node = doc.add_node

    def broken(node: str, **args: object) -> None:
        if node == "b":
            raise AssertionError("a bug in the second part")
        add_node(node, **args)

    monkeypatch.setattr(doc, "add_node", broken)
    parts = [AddNode(doc, "input", (0.0, 0.0), id=n) for n in ("a", "b", "c")]
    doc.undo_stack.push(Composite(doc, "Add three", parts))  # Qt calls its redo from C++
    assert [str(e) for e in seen] == ["a bug in the second part"]  # once, by the composite
    assert list(doc.graph.nodes) == ["a"]  # the third part never ran


def test_a_bug_in_a_box_paint_is_reported_and_the_window_goes_on(
    make_window, monkeypatch: pytest.MonkeyPatch  # noqa: ANN001 - pytest fixture
) -> None:
    from PySide6.QtWidgets import QApplication

    from gui.canvas.node_item import NodeItem

    win = make_window(size=(1280, 720))
    seen: list[BaseException] = []
    with monkeypatch.context() as patched:
        patched.setattr(sys, "excepthook", lambda _kind, exc, _tb: seen.append(exc))

        def broken(_item: NodeItem) -> None:
            raise AssertionError("a bug in NodeItem.paint")

        patched.setattr(NodeItem, "_box", broken)
        boxes = [item for item in win.canvas.scene().items() if isinstance(item, NodeItem)]
        for box in boxes:
            box.update()  # its cached picture thrown away: drawn anew at the paint
        win.canvas.viewport().repaint()  # paints the boxes now: a raise here is unguarded
    assert boxes and seen and {str(e) for e in seen} == {"a bug in NodeItem.paint"}
    count = len(seen)
    for box in boxes:
        box.update()
    win.player.seek(1)
    win.canvas.viewport().repaint()
    QApplication.processEvents()
    assert len(seen) == count and win.isVisible()  # the boxes paint again, nothing pending
    assert win.player.position == 1
