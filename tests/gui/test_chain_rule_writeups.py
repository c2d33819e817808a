"""The chain-rule panel remembers each step's write-up (a step was written twice, laid out
ahead and then shown: a fifth of a millisecond each, issue 28). What it remembers must be
what writing the step anew gives, whatever changed in between: every kind of change that
feeds the text is made here, and every step's remembered write-up compared with a fresh one.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtWidgets import QApplication

from engine.groups import Group
from gui.main_window import MainWindow
from gui.theme import THEME


def _remembered_is_written(win: MainWindow) -> list[str]:
    """Every frame's remembered write-up is the one written now (and remember them all:
    the next change must make the panel forget). The write-ups, frame by frame."""
    panel, player = win.chain_rule, win.player
    texts = []
    for position in range(player.timeline.end + 1):
        frame = player.frame_at(position)
        written = panel._html(frame, 1.0, False, False)
        assert panel._written(frame) == written, position
        assert panel._written(frame) == written, position  # (now remembered)
        texts.append(written)
    return texts


def test_a_remembered_write_up_is_the_one_written_anew_after_any_change(
    make_window: Callable[..., MainWindow],
) -> None:
    win = make_window()
    doc, player = win.doc, win.player
    player.seek(player.timeline.position_of_step(1))
    QApplication.processEvents()
    first = _remembered_is_written(win)
    assert len(set(first)) > 3  # the steps read differently
    leaf = next(n for n, node in doc.graph.nodes.items() if node.is_leaf and node.value is not None)
    op = next(n for n, node in doc.graph.nodes.items() if node.inputs)
    value = np.asarray(doc.graph.nodes[leaf].value, dtype=float)
    changes: list[tuple[str, Callable[[], object]]] = [
        ("a leaf's value", lambda: doc.set_value(leaf, value + 1.0)),
        ("a node renamed", lambda: doc.rename(leaf, leaf + "_renamed")),
        ("a group", lambda: doc.set_groups([Group("g1", [op], "first title", False)])),
        ("a group's title", lambda: doc.set_groups([Group("g1", [op], "other title", False)])),
        ("a group collapsed", lambda: doc.set_groups([Group("g1", [op], "other title", True)])),
        ("its title", lambda: doc.set_groups([Group("g1", [op], "third title", True)])),
        ("the colours' theme", lambda: win.set_theme("dark")),
        ("the colours' theme back", lambda: win.set_theme("light")),
        ("quiz mode", lambda: win.teaching.quiz_panel.set_active(True)),
        ("quiz mode off", lambda: win.teaching.quiz_panel.set_active(False)),
        ("presentation mode", win.enter_presentation),
        ("presentation mode left", win.leave_presentation),
    ]
    seen = [first]
    for what, change in changes:
        change()
        QApplication.processEvents()
        seen.append(_remembered_is_written(win))
        assert seen[-1], what
    assert seen[1] != seen[0]  # the new value is written
    THEME.scale = 1.5
    win.chain_rule.apply_theme()
    assert _remembered_is_written(win) != seen[-1]  # at another size
    win.chain_rule.interactive = False  # an exported frame's text
    _remembered_is_written(win)
