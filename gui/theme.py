"""Colours, fonts and the presentation scale, in one place.

The colours are QColors of the Qt-free table :mod:`gui.model.colours` (which the
view model's HTML uses too); widgets ask here, never write a colour themselves.

Everything that paints asks here, so presentation mode (bigger fonts, thicker
lines, higher contrast) is one switch rather than a hunt through the views.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from weakref import WeakKeyDictionary

from PySide6.QtCore import QByteArray
from PySide6.QtGui import QColor, QFont, QFontDatabase, QPalette
from PySide6.QtWidgets import QWidget
from shiboken6 import isValid

from gui.model import colours
from gui.name_zero import plain_narrow_zero


def _c(hex_rgb: str, alpha: int = 255) -> QColor:
    """The QColor of a :mod:`gui.model.colours` entry, ``alpha`` 0..255."""
    colour = QColor(hex_rgb)
    colour.setAlpha(alpha)
    return colour


@dataclass
class Theme:
    """The look of the canvas and panels; ``scale`` multiplies fonts and line widths,
    ``name`` is the colour theme (a key of :data:`gui.model.colours.THEMES`)."""

    scale: float = 1.0
    high_contrast: bool = False
    name: str = colours.DEFAULT

    def __post_init__(self) -> None:
        self.use(self.name)

    def use(self, name: str) -> None:
        """Take every colour from theme ``name`` (here and in :mod:`gui.model.colours`);
        the views pick them up when they repaint (``MainWindow.set_theme``)."""
        colours.use(name)
        self.name = name
        self.background = _c(colours.BACKGROUND)
        self.grid_minor = _c(colours.GRID_MINOR)
        self.grid_major = _c(colours.GRID_MAJOR)
        self.paper = _c(colours.PAPER)
        self.panel = _c(colours.PANEL)
        self.header = _c(colours.HEADER)
        self.node_fill = _c(colours.PAPER)
        self.node_border = _c(colours.NODE_BORDER)
        self.node_selected = _c(colours.NODE_SELECTED)
        self.node_shadow = _c(colours.SHADOW, alpha=22)
        self.title_op = _c(colours.TITLE_OP)
        self.title_input = _c(colours.TITLE_INPUT)
        self.title_const = _c(colours.TITLE_CONST)
        self.output_fill = _c(colours.OUTPUT_FILL)
        self.grad_active_fill = _c(colours.GRAD_ACTIVE_FILL)
        self.grad_active_mark = _c(colours.GRAD_ACTIVE_MARK)
        self.text = _c(colours.TEXT)
        self.text_muted = _c(colours.TEXT_MUTED)
        self.value_text = _c(colours.TEXT)
        self.grad_text = _c(colours.GRAD_TEXT)
        self.error = _c(colours.ERROR)
        self.error_text = _c(colours.ERROR_TEXT)
        self.error_mark = _c(colours.ERROR_MARK)
        self.note_fill = _c(colours.NOTE_FILL)
        self.note_text = _c(colours.NOTE_TEXT)
        self.right = _c(colours.RIGHT)
        self.wrong = _c(colours.WRONG)
        self.edge = _c(colours.EDGE)
        self.edge_done = _c(colours.EDGE_DONE)
        self.edge_active = _c(colours.EDGE_ACTIVE)
        self.edge_label_fill = _c(colours.PAPER, alpha=250)
        self.edge_label_shadow = _c(colours.SHADOW, alpha=28)
        self.pulse = _c(colours.PULSE)
        self.port_in = _c(colours.PORT_IN)
        self.port_out = _c(colours.PORT_OUT)
        self.diverging = tuple(_c(h) for h in colours.DIVERGING)
        self.series = tuple(_c(h) for h in colours.SERIES)
        self.check_ok = _c(colours.CHECK_OK)
        self.check_close = _c(colours.CHECK_CLOSE)
        self.check_bad = _c(colours.CHECK_BAD)
        self.check_kink = _c(colours.CHECK_KINK)
        self.check_undefined = _c(colours.CHECK_UNDEFINED)
        self.group_border = _c(colours.GROUP_BORDER)
        self.group_fill = _c(colours.GROUP_FILL)

    def font(self, size: float = 10.0, bold: bool = False, mono: bool = False) -> QFont:
        f = QFont("DejaVu Sans Mono" if mono else "DejaVu Sans")
        f.setPointSizeF(size * self.scale)
        f.setBold(bold)
        return f

    def line(self, width: float = 1.5) -> float:
        return width * self.scale * (1.5 if self.high_contrast else 1.0)


def application_palette() -> QPalette:
    """The Qt palette of the theme in use, for the whole application: panels, docks
    and dialogs draw on the theme's grounds, never the system's (a dark system theme
    under the light theme's grey put the inspector's hint at 2.1:1)."""
    t, pal, role = THEME, QPalette(), QPalette.ColorRole
    for r, c in ((role.Window, t.panel), (role.WindowText, t.text), (role.Base, t.paper),
                 (role.AlternateBase, t.header), (role.Text, t.text), (role.Button, t.header),
                 (role.ButtonText, t.text), (role.ToolTipBase, t.paper),
                 (role.ToolTipText, t.text), (role.PlaceholderText, t.text_muted),
                 (role.Highlight, t.node_selected), (role.HighlightedText, t.paper),
                 (role.Link, _c(colours.JACOBIAN)), (role.BrightText, t.error_text)):
        pal.setColor(r, c)
    for r in (role.WindowText, role.Text, role.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, r, t.text_muted)
    return pal


@contextmanager
def using(name: str) -> Iterator[None]:
    """Colours from theme ``name`` for the duration (an export in its own theme), then
    the theme before again."""
    previous = THEME.name
    THEME.use(name)
    try:
        yield
    finally:
        THEME.use(previous)


#: Each widget :func:`style` gave a sheet, with the function that writes it: what
#: :func:`restyle` rewrites. Weak: a widget deleted leaves it.
_SHEETS: WeakKeyDictionary[QWidget, Callable[[], str]] = WeakKeyDictionary()


def style(widget: QWidget, sheet: Callable[[], str]) -> None:
    """Give ``widget`` the style sheet ``sheet()``, written again from the new colours
    at every theme change (:func:`restyle`): a sheet holds colours as text."""
    _SHEETS[widget] = sheet
    widget.setStyleSheet(sheet())


def sheet_of(widget: QWidget) -> Callable[[], str] | None:
    """The function :func:`style` last gave ``widget`` its sheet with, if any."""
    return _SHEETS.get(widget)


def paper_browser() -> str:
    """The sheet of a text panel: the page on paper, no frame."""
    return f"QTextBrowser {{ background: {THEME.paper.name()}; border: none; }}"


def muted_sheet() -> str:
    """The sheet of a label that says something in passing (a hint, a method)."""
    return f"color: {THEME.text_muted.name()};"


def error_sheet() -> str:
    """The sheet of a label that says what is wrong."""
    return f"color: {THEME.error_text.name()};"


def restyle(root: QWidget) -> None:
    """Rewrite the sheet of every widget under ``root`` given one by :func:`style`.

    Only the widgets :func:`style` was given are visited, each while Qt still holds it.
    Walking ``root.findChildren(QWidget)`` instead made a Python wrapper for each of
    Qt's own inner widgets (scroll bars, form labels, a dock's buttons), which Qt may
    delete behind PySide's back, and crashed, rarely, inside ``setStyleSheet``.
    """
    for widget, sheet in list(_SHEETS.items()):
        if isValid(widget) and _under(widget, root):
            widget.setStyleSheet(sheet())


def _under(widget: QWidget, root: QWidget) -> bool:
    """Whether ``widget`` is ``root`` or inside it (in any window of its, as a dialog)."""
    parent: QWidget | None = widget
    while parent is not None and parent is not root:
        parent = parent.parentWidget()
    return parent is root


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
