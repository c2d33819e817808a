"""Real architectures (issue 27) in the main window: each captured pass opens (modules
collapsed, read-only), plays to its end with the leaves' gradients PyTorch's, and its
frame exports at the first, middle and last step. The engine half, with the oracle, is
tests/engine/test_architectures.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from architectures import ARCHITECTURES, capture_of
from support import torch

pytestmark = pytest.mark.skipif(torch is None, reason="torch is not installed")


@pytest.fixture(scope="module", params=list(ARCHITECTURES))
def trace(request: pytest.FixtureRequest) -> Any:
    return capture_of(request.param)[1]  # the engine tests' very trace


def test_opens_plays_and_exports_first_middle_and_last(
    make_window: Any, trace: Any, tmp_path: Path
) -> None:
    from PIL import Image

    from gui.export.frame_sheet import save_frame

    window = make_window(size=(1280, 720))
    window.files.open_loaded(trace, tmp_path / "model.bptrace")
    doc, player = window.doc, window.player
    assert doc.read_only and doc.groups and all(g.collapsed for g in doc.groups)
    timeline = player.timeline
    n = len(timeline.steps)
    assert 0 < n <= len(trace.steps)
    pictures = []
    for k in (0, n // 2, n):
        position = timeline.position_of_step(k)
        player.seek(position)
        window.canvas.viewport().repaint()
        out = tmp_path / f"step{k}.png"
        save_frame(doc, position, out, (640, 360))
        with Image.open(out) as im:
            assert im.size == (640, 360)
            pictures.append(np.asarray(im.convert("RGB")))
    assert not np.array_equal(pictures[0], pictures[-1])  # the gradients arrived
    for k, step in enumerate(timeline.steps[:-1], 1):  # a module sending to many names 3
        status = timeline.frame(timeline.position_of_step(k)).status  # (the last: "done")
        assert status.rpartition("→")[2].count(",") <= 2, status
        many = len(getattr(step, "inputs", ())) - 3
        assert many <= 0 or status.endswith(f" and {many} more"), status
    for leaf in trace.leaves:
        np.testing.assert_array_equal(player.frame.grads[leaf], trace.grads[leaf])
