"""A lesson inline in a Jupyter cell: the HTML player inside a sandboxed ``iframe``.

The player is the very page ``main.py export --all --out x.html`` writes. Put in an
``iframe`` through ``srcdoc`` (the whole page escaped once, here, as an attribute
value), it keeps its own content-security policy, so it still loads nothing, and the
sandbox (scripts only: no same origin, no forms, no navigation) keeps the notebook's
page out of its reach.
"""

from __future__ import annotations

import html
import tempfile
from pathlib import Path

from ..document import GraphDocument
from .options import Kind, LessonOptions
from .writers import write_lesson

#: The frame's height in the cell (pixels): the player's buttons, picture and text.
FRAME_HEIGHT = 620


def player_iframe(doc: GraphDocument) -> str:
    """``doc``'s lesson as the player page in an ``<iframe sandbox srcdoc=...>``."""
    with tempfile.TemporaryDirectory(prefix="bps-notebook-") as folder:
        page = Path(folder) / "player.html"
        write_lesson(doc, page, LessonOptions(Kind.HTML))
        text = page.read_text(encoding="utf-8")
    return (
        f'<iframe sandbox="allow-scripts" title="Backprop Studio player" '
        f'style="width:100%;height:{FRAME_HEIGHT}px;border:0" '
        f'srcdoc="{html.escape(text, quote=True)}"></iframe>'
    )
