"""One entry point for a whole-lesson export, whatever the format."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..document import GraphDocument
from .animation import Progress, write_animation
from .handout import PICTURE, write_handout
from .html_player import PLAYER_VIEW, write_player
from .options import Kind, LessonOptions, View
from .render import lesson_renderer


def write_lesson(
    doc: GraphDocument, out: Path, options: LessonOptions, progress: Progress | None = None
) -> None:
    """Write ``doc``'s lesson to ``out`` as ``options.kind``; nothing is left at ``out``
    if it fails. ``progress(done, total)`` is called after each picture (it may raise to
    cancel).

    The PDF and the web page put the write-up beside or under the picture as text, so
    their pictures are the canvas alone (the PDF's at a fixed layout size).
    """
    write = write_animation
    if options.kind == Kind.PDF:
        options, write = dataclasses.replace(options, size=PICTURE, view=View.CANVAS), write_handout
    elif options.kind == Kind.HTML:
        options, write = dataclasses.replace(options, view=PLAYER_VIEW), write_player
    with lesson_renderer(doc, options) as renderer:
        write(renderer, out, progress)
