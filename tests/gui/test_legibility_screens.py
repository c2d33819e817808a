"""Screenshots a reviewer looks at: three examples at a middle step, at 1280x720, in
the window and in presentation mode (tests/artifacts/, git-ignored).

Each also checks what a screenshot can: the active edge's boxes and its label are on
the canvas.
"""

from __future__ import annotations

import os

import pytest
from PySide6.QtWidgets import QApplication

from engine.examples import EXAMPLES_DIR
from gui.app import create_window
from gui.main_window import MainWindow
from gui.theme import THEME

SHOTS = ["seed2_stack_vjp", "seed4_weighted_v", "logistic_loss"]


@pytest.mark.parametrize("stem", SHOTS)
def test_middle_step_screenshots(
    stem: str,
    qtbot,
    settings_sandbox,
    no_dialogs,  # noqa: ANN001
    artifacts_dir: str,
) -> None:
    win: MainWindow = create_window(EXAMPLES_DIR / f"{stem}.bpgraph")
    qtbot.addWidget(win)
    win.resize(1280, 720)
    win.show()
    qtbot.waitExposed(win)
    try:
        win.canvas.animations_enabled = False
        tl = win.player.timeline
        k = (len(tl.steps) + 1) // 2
        for mode in ("window", "presentation"):
            if mode == "presentation":
                win.enter_presentation()
                win.showNormal()  # the offscreen screen is not 1280x720
                win.resize(1280, 720)
            win.player.seek(tl.position_of_step(k))
            qtbot.wait(30)
            QApplication.processEvents()
            win.canvas.refit()
            step = win.player.frame.active
            view = win.canvas
            visible = view.mapToScene(view.viewport().rect()).boundingRect()
            if mode == "presentation":
                for nid in (step.consumer, step.operand):
                    assert visible.contains(view.node_item(nid).scene_rect())
            assert visible.contains(view.canvas.label.sceneBoundingRect())  # never cut
            path = os.path.join(artifacts_dir, f"legibility-{stem}-{mode}.png")
            assert win.grab().save(path)
    finally:
        win.leave_presentation()
        win.close()
        THEME.scale, THEME.high_contrast = 1.0, False
