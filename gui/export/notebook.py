"""A lesson inline in a Jupyter cell: the HTML player inside a sandboxed ``iframe``.

The player is the very page ``main.py export --all --out x.html`` writes. Put in an
``iframe`` through ``srcdoc`` (the whole page escaped once, here, as an attribute
value), it keeps its own content-security policy, so it still loads nothing, and the
sandbox (scripts only: no same origin, no forms, no navigation) keeps the notebook's
page out of its reach.

A cell holds at most :data:`CELL_FRAMES` pictures of the backward pass, spread evenly
from the first step to the last: each is an SVG of the canvas (0.1 s and ~300 KB for a
200-layer MLP, whose 400 modules are 400 steps), so a deep model's every step would
take a minute and a cell of 100+ MB. The line under the player says how many it shows
and where every step is (``trace.export("x.html")``, ``trace.show()`` outside a notebook).
"""

from __future__ import annotations

import html
import tempfile
from pathlib import Path

from ..document import GraphDocument
from ..model.lesson import Shot, ShotKind
from .html_player import PLAYER_VIEW, write_player
from .options import Kind, LessonOptions
from .render import lesson_renderer

#: The frame's height in the cell (pixels): the player's buttons, picture and text.
FRAME_HEIGHT = 620
#: At most this many step pictures in a cell (the title and end cards besides).
CELL_FRAMES = 16


def player_iframe(doc: GraphDocument) -> str:
    """``doc``'s lesson as the player page in an ``<iframe sandbox srcdoc=...>``."""
    with (
        tempfile.TemporaryDirectory(prefix="bps-notebook-") as folder,
        lesson_renderer(doc, LessonOptions(Kind.HTML, view=PLAYER_VIEW)) as renderer,
    ):
        page = Path(folder) / "player.html"
        frames = sum(s.kind is ShotKind.FRAME and s.held for s in renderer.shots)
        renderer.shots = spread(renderer.shots, CELL_FRAMES)
        write_player(renderer, page)
        text = page.read_text(encoding="utf-8")
    note = ""
    if frames > CELL_FRAMES:
        note = (
            f'<p style="margin:2px 0;font-size:90%">{CELL_FRAMES} of the {frames} steps, '
            "spread evenly; trace.export(\"lesson.html\") or trace.show() outside a notebook "
            "plays every one.</p>"
        )
    return (
        f'<iframe sandbox="allow-scripts" title="Backprop Studio player" '
        f'style="width:100%;height:{FRAME_HEIGHT}px;border:0" '
        f'srcdoc="{html.escape(text, quote=True)}"></iframe>{note}'
    )


def spread(shots: list[Shot], limit: int) -> list[Shot]:
    """``shots`` with at most ``limit`` held frames, evenly spaced, the first and the
    last kept; every card stays."""
    frames = [i for i, s in enumerate(shots) if s.kind is ShotKind.FRAME and s.held]
    if len(frames) <= limit:
        return shots
    keep = {frames[round(j * (len(frames) - 1) / (limit - 1))] for j in range(limit)}
    return [s for i, s in enumerate(shots) if s.kind is not ShotKind.FRAME or i in keep]
