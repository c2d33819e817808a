"""Take the lesson out of the app: frames, animations and the ``main.py export`` command.

- :mod:`.options`: what is asked (formats, size, timing), Qt-free; the shots of a lesson
  and the card texts are in :mod:`gui.model.lesson`, the worksheet's in
  :mod:`gui.model.worksheet`;
- :mod:`.frame_sheet`: one off-screen sheet painting any frame with the app's widgets;
- :mod:`.render`: the shots painted (cards and frames);
- :mod:`.animation`: GIF / APNG (:mod:`.apng`) / WebP, MP4 (PyAV), PNG sequences;
- :mod:`.handout`: the PDF handout and worksheet; :mod:`.html_player`: the web page;
- :mod:`.writers`: one entry point per lesson; :mod:`.cli`: ``main.py export``;
  :mod:`.dialog`: File > Export Animation….
"""

from __future__ import annotations

from .cli import main
from .frame_sheet import render_frame, save_frame
from .options import ExportError, parse_size, parse_step

__all__ = ["ExportError", "main", "parse_size", "parse_step", "render_frame", "save_frame"]
