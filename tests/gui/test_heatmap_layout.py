"""The Jacobian heatmap tab at 1280x720: every title whole, no number cut or overlapping,
and words that do not reuse the objective's letter.

A 1280x720 window leaves the panel dock short and wide: the text then sits beside
the plot so the heatmap keeps the height, axis and colour-bar titles are short
enough for the bars, and cell numbers are drawn only where they fit their cells.
"""

from __future__ import annotations

import re

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QApplication, QLabel

from engine.examples import EXAMPLES_DIR
from gui.app import create_window
from gui.main_window import MainWindow
from gui.panels.jacobian_view import JacobianView


@pytest.fixture
def heatmap(qtbot, settings_sandbox, no_dialogs):  # noqa: ANN001, ANN201
    win: MainWindow = create_window(EXAMPLES_DIR / "classifier_head.bpgraph")
    qtbot.addWidget(win)
    win.resize(1280, 720)
    win.show()
    qtbot.waitExposed(win)
    win.tabs.setCurrentIndex(win.tabs.count() - 1)
    while win.tabs.tabText(win.tabs.currentIndex()) != "Jacobian heatmap":
        win.tabs.setCurrentIndex(win.tabs.currentIndex() - 1)
    yield win
    win.close()


def _view(win: MainWindow) -> JacobianView:
    view = win.findChild(JacobianView)
    assert view is not None and view.isVisible()
    return view


def _matmul_step(win: MainWindow) -> int:
    tl = win.player.timeline
    for k in range(1, len(tl.steps) + 1):
        win.player.seek(tl.position_of_step(k))
        if win.player.frame.active.consumer == "xW":
            return k
    raise AssertionError("no matmul step")


def _inside(view: JacobianView, rect: QRectF) -> bool:
    on_screen = view.plots.mapFromScene(rect).boundingRect()
    return view.plots.viewport().rect().adjusted(-1, -1, 1, 1).contains(on_screen)


def _settle(qtbot) -> None:  # noqa: ANN001
    for _ in range(3):
        QApplication.processEvents()
        qtbot.wait(10)


def test_heatmap_titles_are_whole_at_1280x720(heatmap, qtbot) -> None:  # noqa: ANN001
    win = heatmap
    _matmul_step(win)
    _settle(qtbot)
    view = _view(win)
    assert view.side_by_side  # the dock is wide and short: text beside the plot
    for label in view.findChildren(QLabel):
        if label.isVisible() and label.text():
            assert label.heightForWidth(label.width()) <= label.height() + 1, label.text()
    titles = 0
    for item in view.plots.scene().items():
        if isinstance(item, pg.AxisItem) and item.isVisible() and item.label.isVisible():
            text = item.label.toPlainText()
            if text:
                titles += 1
                assert _inside(view, item.label.sceneBoundingRect()), text
                # a vertical title is not longer than its axis (else it is cut)
                along = item.label.sceneBoundingRect()
                axis = item.sceneBoundingRect()
                if item.orientation in ("left", "right"):
                    assert along.height() <= axis.height() + 1, text
                else:
                    assert along.width() <= axis.width() + 1, text
    assert titles >= 4  # upstream, column, and the two colour bars


def test_cell_numbers_fit_their_cells_or_are_left_to_hover(heatmap, qtbot) -> None:  # noqa: ANN001
    win = heatmap
    _matmul_step(win)
    win.resize(1280, 1400)  # a tall panel: room for the numbers
    win.panels_dock.setMinimumHeight(900)
    _settle(qtbot)
    view = _view(win)
    view.follow.request()
    _settle(qtbot)
    texts = [item for _plot, item in view._texts]
    assert texts, "a tall heatmap of 6x9 cells shows its numbers"
    rects = [t.sceneBoundingRect() for t in texts]
    for t, r in zip(texts, rects, strict=True):
        assert _inside(view, r)
        assert not any(r.intersects(o) for o in rects if o is not r), t.toPlainText()


def test_heatmap_caption_does_not_call_a_factor_a(heatmap) -> None:  # noqa: ANN001
    win = heatmap
    _matmul_step(win)
    caption = _view(win).title.text()
    assert "left factor" in caption
    assert not re.search(r"\b[AB]\b", re.sub(r"<[^>]+>", "", caption)), caption
