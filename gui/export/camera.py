"""Where the export's camera looks: the app's own follow-the-step camera, frame by frame.

On a held frame the canvas frames the active step exactly as presentation mode
does (:mod:`gui.model.camera`); during a transition it glides from the previous
step's view to this one, in step with the travelling pulse (``t`` from 0 to 1).
"""

from __future__ import annotations

from typing import Any

from ..model.camera import CameraTarget, interpolate


def follow(canvas: Any) -> None:
    """Make ``canvas`` (a CanvasView) frame every step it is shown, without animating."""
    canvas.animations_enabled = False
    canvas.follow_step = True


def aim(canvas: Any, came_from: CameraTarget | None, t: float) -> CameraTarget | None:
    """Look at the shown step, ``t`` of the way from ``came_from``; returns the step's
    own target (the next transition starts from it)."""
    target = canvas.camera_target()
    if target is None:
        return None
    centre, zoom = (
        interpolate(came_from, target, t)
        if came_from is not None and t < 1.0
        else (target.center, target.zoom)
    )
    canvas.look_at(centre, zoom)
    return target
