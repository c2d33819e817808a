"""The window's free view (Follow step off) at Fit All, 1280x720: every compact name is
at least the canvas's minimum text size on screen, inside its own box."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFont, QFontMetricsF

from engine.examples import EXAMPLES_DIR
from gui.canvas.node_item import compact_fonts
from gui.model.semantic_zoom import MIN_SCREEN_PT


@pytest.mark.parametrize("stem", ["seed2_stack_vjp", "seed4_weighted_v"])
def test_free_view_fit_all_names_are_readable(make_window, stem: str) -> None:  # noqa: ANN001
    win = make_window(EXAMPLES_DIR / f"{stem}.bpgraph", size=(1280, 720))
    view = win.canvas
    view.follow_step = False
    tl = win.player.timeline
    win.player.seek(tl.position_of_step((len(tl.steps) + 1) // 2))
    view.user_fit_all()
    zoom = view.zoom()
    visible = view.visible_scene_rect()
    f = compact_fonts()
    for nid, item in view.canvas.nodes.items():
        compact = item.compact_form(zoom)
        assert compact is not None, nid  # the whole graph at this size is compact
        line, pt = compact[0]
        assert line.kind == "name" and line.text == nid
        assert pt * zoom >= MIN_SCREEN_PT - 1e-6, nid
        # the name fits inside its box, and the box is on the canvas
        name = QFont(f.name)
        name.setPointSizeF(pt)
        width = QFontMetricsF(name).horizontalAdvance(nid)
        box = item.scene_rect()
        assert width <= box.width(), nid
        assert visible.contains(QRectF(box)), nid
