"""The update act's frames, without Qt: after the backward pass, a pulse visits each
parameter in turn (in the step's order), and a parameter's box shows its new value from
the moment the pulse reaches it, not before (issue 30: "the box's value changing as the
pulse passes").

The canvas's animation and every exporter read the same frames: the GUI plays
:func:`at` over the act's duration, an export draws :func:`frames` (what
:func:`gui.model.lesson.plan` schedules), so a class sees the same thing in both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from engine.train import Update


@dataclass(frozen=True)
class UpdateFrame:
    """One moment of the act: the pulse is on its way to the ``index``-th parameter,
    ``pulse`` of the way there (0: leaving, 1: arrived)."""

    index: int
    pulse: float

    def arrived(self, k: int) -> bool:
        """Has the pulse reached the ``k``-th parameter (its box shows the new value)?"""
        return k < self.index or (k == self.index and self.pulse >= 1.0)


#: The act's end: every parameter reached (used for "no animation" too).
DONE = UpdateFrame(index=1 << 30, pulse=1.0)


def at(t: float, count: int) -> UpdateFrame:
    """The frame a share ``t`` (0..1) through an act over ``count`` parameters, each
    visited for an equal share of the time; ``t`` at or past 1 is :data:`DONE`."""
    if t >= 1.0 or count <= 0:
        return DONE
    t = max(0.0, t) * count
    index = min(int(t), count - 1)
    return UpdateFrame(index, t - index)


def frames(count: int, between: int) -> list[UpdateFrame]:
    """An exported act's pictures over ``count`` parameters: for each, ``between``
    pictures of the pulse on its way (1/(between+1), 2/(between+1), ...; the value not
    changed yet), then, once every parameter is reached, :data:`DONE` (held)."""
    steps = [
        UpdateFrame(k, i / (between + 1)) for k in range(count) for i in range(1, between + 1)
    ]
    return [*steps, DONE]


def shown_values(updates: Mapping[str, Update], frame: UpdateFrame) -> dict[str, np.ndarray]:
    """What each updated parameter's box shows at ``frame``: its value before the
    update until the pulse reaches it, then the value the update gives it."""
    return {
        name: up.new if frame.arrived(k) else up.old
        for k, (name, up) in enumerate(updates.items())
    }


def active(updates: Mapping[str, Update], frame: UpdateFrame) -> str | None:
    """The parameter the pulse is travelling to (None: the act is over)."""
    names = list(updates)
    if frame.index >= len(names) or frame.arrived(frame.index):
        return None
    return names[frame.index]
