"""A deep model's notebook cell (issue 27): at most ``CELL_FRAMES`` step pictures,
spread evenly from the first step to the last, and a line saying so; a short pass
keeps every step (tests/gui/test_notebook.py runs that one in a real kernel)."""

from __future__ import annotations

import html
import re

import pytest

from gui.export.notebook import CELL_FRAMES, spread
from gui.model.lesson import Shot, ShotKind
from support import torch


def test_spread_keeps_the_cards_the_ends_and_evenly_spaced_frames() -> None:
    frames = [Shot(ShotKind.FRAME, 100, position=k) for k in range(50)]
    between = Shot(ShotKind.FRAME, 10, position=7, held=False)
    shots = [Shot(ShotKind.TITLE, 100), *frames[:8], between, *frames[8:], Shot(ShotKind.END, 100)]
    kept = spread(shots, 6)
    assert [s.kind for s in (kept[0], kept[-1])] == [ShotKind.TITLE, ShotKind.END]
    assert [s.position for s in kept[1:-1]] == [0, 10, 20, 29, 39, 49]
    assert spread(shots, 60) is shots


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_a_deep_trace_shows_a_spread_of_its_steps_and_says_so(qapp) -> None:  # noqa: ANN001
    import backprop_studio as bps

    torch.manual_seed(3)
    layers: list[torch.nn.Module] = []
    for _ in range(12):
        layers += [torch.nn.Linear(2, 2), torch.nn.Tanh()]
    model = torch.nn.Sequential(*layers).double()
    with bps.tracking(model):
        out = model(torch.ones(1, 2, dtype=torch.float64)).sum()
    cell = bps.capture(out, names=model)._repr_html_()
    page = html.unescape(re.search(r'srcdoc="([^"]*)"', cell)[1])
    slide = r'<section class="slide frame"[^>]*data-step="(\d+)"'
    steps = [int(k) for k in re.findall(slide, page)]
    assert len(steps) == CELL_FRAMES and steps[0] == 0 and steps[-1] == 25  # 24 modules + loss
    assert cell.endswith(
        f'{CELL_FRAMES} of the 26 steps, spread evenly; trace.export("lesson.html") '
        "or trace.show() outside a notebook plays every one.</p>"
    )
