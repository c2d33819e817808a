"""Colours, fonts and the presentation scale, in one place.

The colours are QColors of the Qt-free table :mod:`gui.model.colours` (which the
view model's HTML uses too); widgets ask here, never write a colour themselves.

Everything that paints asks here, so presentation mode (bigger fonts, thicker
lines, higher contrast) is one switch rather than a hunt through the views.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QByteArray
from PySide6.QtGui import QColor, QFont, QFontDatabase

from gui.model import colours
from gui.name_zero import plain_narrow_zero


def _c(hex_rgb: str, alpha: int = 255) -> QColor:
    """The QColor of a :mod:`gui.model.colours` entry, ``alpha`` 0..255."""
    colour = QColor(hex_rgb)
    colour.setAlpha(alpha)
    return colour


@dataclass
class Theme:
    """The look of the canvas and panels; ``scale`` multiplies fonts and line widths."""

    scale: float = 1.0
    high_contrast: bool = False

    background = _c(colours.BACKGROUND)
    grid_minor = _c(colours.GRID_MINOR)
    grid_major = _c(colours.GRID_MAJOR)
    paper = _c(colours.PAPER)
    header = _c(colours.HEADER)
    node_fill = _c(colours.PAPER)
    node_border = _c(colours.NODE_BORDER)
    node_selected = _c(colours.NODE_SELECTED)
    node_shadow = _c(colours.SHADOW, alpha=22)
    title_op = _c(colours.TITLE_OP)
    title_input = _c(colours.TITLE_INPUT)
    title_const = _c(colours.TITLE_CONST)
    output_fill = _c(colours.OUTPUT_FILL)
    grad_active_fill = _c(colours.GRAD_ACTIVE_FILL)
    grad_active_mark = _c(colours.GRAD_ACTIVE_MARK)
    text = _c(colours.TEXT)
    text_muted = _c(colours.TEXT_MUTED)
    value_text = _c(colours.TEXT)
    grad_text = _c(colours.GRAD_TEXT)
    error = _c(colours.ERROR)
    error_text = _c(colours.ERROR_TEXT)
    error_mark = _c(colours.ERROR_MARK)
    note_fill = _c(colours.NOTE_FILL)
    note_text = _c(colours.NOTE_TEXT)
    right = _c(colours.RIGHT)
    wrong = _c(colours.WRONG)
    edge = _c(colours.EDGE)
    edge_done = _c(colours.EDGE_DONE)
    edge_active = _c(colours.EDGE_ACTIVE)
    edge_label_fill = _c(colours.PAPER, alpha=250)
    edge_label_shadow = _c(colours.SHADOW, alpha=28)
    pulse = _c(colours.PULSE)
    port_in = _c(colours.PORT_IN)
    port_out = _c(colours.PORT_OUT)
    diverging = tuple(_c(h) for h in colours.DIVERGING)
    series = tuple(_c(h) for h in colours.SERIES)
    # Gradient check rows, by status (engine.gradcheck.Status values).
    check_ok = _c(colours.CHECK_OK)
    check_close = _c(colours.CHECK_CLOSE)
    check_bad = _c(colours.CHECK_BAD)
    check_kink = _c(colours.CHECK_KINK)
    check_undefined = _c(colours.CHECK_UNDEFINED)
    # Groups: the frame around the members, and its fill (opaque when collapsed).
    group_border = _c(colours.GROUP_BORDER)
    group_fill = _c(colours.GROUP_FILL)

    def font(self, size: float = 10.0, bold: bool = False, mono: bool = False) -> QFont:
        f = QFont("DejaVu Sans Mono" if mono else "DejaVu Sans")
        f.setPointSizeF(size * self.scale)
        f.setBold(bold)
        return f

    def line(self, width: float = 1.5) -> float:
        return width * self.scale * (1.5 if self.high_contrast else 1.0)


#: The app's single theme; presentation mode changes ``scale`` and ``high_contrast``.
THEME = Theme()

#: Point size of the chain-rule panel's text before ``THEME.scale``: the canvas camera
#: zooms so box text is at least this large on screen.
CHAIN_RULE_PT = 12.0

#: The face node names are set in: JetBrains Mono NL ExtraBold (SIL Open Font License,
#: licence beside it), bundled so that every machine, the exports and the tests draw
#: the same glyphs. Its 1 (flag and foot), l (curved foot) and I (serifs) differ at a
#: glance, which a short name such as ``y1`` read from the back of a room needs, and so
#: do its 0 and O once the 0 is redrawn as a narrow plain oval (its own dotted 0 is O's
#: outline with a dot that blurs away: see :mod:`gui.name_zero`); its weight holds up
#: on a projector.
#: The OCR of ``benchmarks/bench_legibility.py`` misreads those digits less often than
#: in DejaVu Sans Mono Bold, the face before it, whose widths it shares (compact names
#: keep their sizes, the camera its framing).
NAME_FONT_FILE = (
    Path(__file__).resolve().parent.parent / "assets" / "fonts" / "JetBrainsMonoNL-ExtraBold.ttf"
)
#: The name face when the bundled file cannot be loaded (a monospace face just as clear).
FALLBACK_NAME_FAMILY = "DejaVu Sans Mono"
_name_family: list[str] = []


def name_family() -> str:
    """The family of :data:`NAME_FONT_FILE`, loaded into the application once (the
    QApplication must exist) with its zero redrawn plain and narrow
    (:func:`gui.name_zero.plain_narrow_zero`); :data:`FALLBACK_NAME_FAMILY` when it
    cannot be loaded."""
    if not _name_family:
        font_id = -1
        if NAME_FONT_FILE.is_file():
            data = NAME_FONT_FILE.read_bytes()
            try:
                data = plain_narrow_zero(data)
            except ValueError:
                pass  # not the face's dotted zero (another file): its own glyphs, unchanged
            font_id = QFontDatabase.addApplicationFontFromData(QByteArray(data))
        families = QFontDatabase.applicationFontFamilies(font_id) if font_id >= 0 else []
        _name_family.append(families[0] if families else FALLBACK_NAME_FAMILY)
    return _name_family[0]


def name_font(point_size: float) -> QFont:
    """A node name's font at ``point_size`` (the bundled face's weight; the fallback
    face's bold)."""
    font = QFont(name_family())
    font.setWeight(QFont.Weight.ExtraBold)
    font.setPointSizeF(point_size)
    return font


#: The font scale used in presentation mode unless the user chose another (persisted).
PRESENTATION_SCALE = 1.6
