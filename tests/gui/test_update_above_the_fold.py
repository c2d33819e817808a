"""Presentation mode at 1280x720, the end of backward in train mode: the update (each
parameter's ``w ← old − step = new``, what its box then shows) is in view without
scrolling. It was written after the last step and the whole call's summary, about 600 px
below the fold of a 240 px panel."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from engine.examples import EXAMPLES_DIR
from gui.main_window import MainWindow, menu_of


def _results_out_of_view(win: MainWindow) -> list[str]:
    """The update's heading and result lines that are not wholly in the panel's view."""
    panel = win.chain_rule
    text = panel.text()
    browser = panel.browser
    doc, bar = browser.document(), browser.verticalScrollBar()
    wanted = [ln for ln in text.split("\n")
              if ln.startswith("Then the update") or (" ← " in ln and " = " in ln)]
    assert len(wanted) >= 3, text  # the heading and two parameters' results
    out = []
    for line in wanted:
        found = doc.find(line)
        assert not found.isNull(), line
        rect = doc.documentLayout().blockBoundingRect(found.block())
        if rect.bottom() - bar.value() > browser.viewport().height() + 0.5:
            out.append(line)
    return out


@pytest.mark.parametrize("example", ["xor_mlp", "fit_line"])
def test_the_update_is_in_view_at_the_end_in_presentation(make_window, example) -> None:  # noqa: ANN001
    win = make_window(EXAMPLES_DIR / f"{example}.bpgraph", size=(1280, 720))
    win.canvas.animations_enabled = False
    action = next(a for a in menu_of(win, "Teach").actions()
                  if a.text().replace("&", "") == "Train")
    action.trigger()
    assert win.teaching.train_panel.step()
    win.enter_presentation()
    win.showNormal()
    win.resize(1280, 720)
    win.player.to_end()
    win.tabs.setCurrentWidget(win.chain_rule)
    QApplication.processEvents()
    assert not _results_out_of_view(win)
