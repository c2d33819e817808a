"""An exported frame cannot scroll: at every step of a captured resnet18 (collapsed
stages sending up to 18 gradients) the frame's chain-rule write-up is whole at
1280x720, at a size no smaller than the panel's legibility floor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from architectures import capture_of


def test_every_resnet18_step_writes_its_chain_rule_whole_in_the_frame(
    make_window: Any, tmp_path: Path
) -> None:
    from gui.export.frame_sheet import frame_sheet
    from gui.panels.chain_rule import MIN_FIT, step_bottom

    window = make_window(size=(1280, 720))
    window.files.open_loaded(capture_of("resnet18")[1], tmp_path / "resnet18.bptrace")
    with frame_sheet(window.doc, (1280, 720)) as sheet:
        timeline, panel = sheet.player.timeline, sheet.panel
        shrunk = 0
        for k in range(1, len(timeline.steps) + 1):
            sheet.show_position(timeline.position_of_step(k))
            panel.follow.flush()
            doc, viewport = panel.browser.document(), panel.browser.viewport()
            room = viewport.height() - doc.documentMargin()
            assert step_bottom(doc) <= room, (k, step_bottom(doc), room)
            assert doc.idealWidth() <= viewport.width(), k
            assert panel.fit >= MIN_FIT, k
            shrunk += panel.fit < 1.0
        assert shrunk  # some stage's write-up had to shrink to fit (else nothing tested)
